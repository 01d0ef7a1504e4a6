/**
 * The stages test/bench/requestStages.ts times, in order, each doing the work of the ones before
 * it: `fixed` (no work: the lane's fiber answers a fixed body), `parse` (JSON.parse of the body),
 * `decode` (the body rules and the request the backends take), `backend` (the chat gateway's
 * complete, or the federated web search), `answer` (the real answer's object and JSON), `lane`
 * (the express lane as served: key, limit, count). support/stageServer.ts serves one of them.
 */
export const stages = ["fixed", "parse", "decode", "backend", "answer", "lane"] as const
export type Stage = typeof stages[number]
