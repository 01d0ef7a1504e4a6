/**
 * What the HTTP benches (http.ts, mcp.ts, wires.ts) send: the key their servers accept, the
 * webSearch and chat requests, and the autocannon run that loads a server with one of them. One
 * definition, so that their figures are of the same requests.
 */
import autocannon from "autocannon"

/** The key every bench server accepts (periscopeBenchServer.ts, stateBenchServer.ts). */
export const BENCH_KEY = "bench-key"

export const benchHeaders = { authorization: `Bearer ${BENCH_KEY}`, "content-type": "application/json" } as const

export interface BenchRequest {
  readonly path: string
  readonly body: string
}

export const benchRequests = {
  webSearch: { path: "/api/search/webSearch", body: JSON.stringify({ keywords: "search results with snippets", num: 10 }) },
  chat: {
    path: "/v1/chat/completions",
    body: JSON.stringify({ model: "periscope-scripted", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "What does Periscope do?" }] })
  }
} as const satisfies Record<string, BenchRequest>

/** `connections` requests in flight for `seconds`, each the same POST of `request` to `url`. */
export const loadWith = (url: string, request: BenchRequest, connections: number, seconds: number) =>
  new Promise<autocannon.Result>((done, fail) =>
    autocannon({ url: url + request.path, method: "POST", headers: benchHeaders, body: request.body, connections, duration: seconds }, (error, result) =>
      error ? fail(error) : done(result)))
