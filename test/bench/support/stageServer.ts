/**
 * The server side of test/bench/requestStages.ts: Node's server (GatedServer, as `npm start`
 * runs it) over the same services as periscopeBenchServer.ts, whose hot route answers after the
 * work up to one stage (support/stageNames.ts) and then a fixed body of the real answer's size,
 * so that the CPU each stage adds under load can be told apart.
 * Usage: node stageServer.ts <port> <chat|webSearch> <stage>
 */
import { NodeRuntime } from "@effect/platform-node"
import { Context, Effect, Layer, Result } from "effect"
import { GatedServer } from "../../../adapters/node/GatedServer.ts"
import { type Answer, jsonAnswer } from "../../../core/api/Answer.ts"
import { chatRequestOf, decodeChatRequest, toCompletionResponse } from "../../../core/api/ChatHandlers.ts"
import { type ExpressLane, makeExpressLane } from "../../../core/api/ExpressLane.ts"
import { parseBody } from "../../../core/api/JsonBody.ts"
import { decodeSearchRequest } from "../../../core/api/SearchHandlers.ts"
import { successEnvelopeWith } from "../../../core/api/SearchWire.ts"
import { hashKey } from "../../../core/auth/KeyRecord.ts"
import { ChatGateway } from "../../../core/chat/ChatGateway.ts"
import { FederatedSearch } from "../../../core/search/FederatedSearch.ts"
import { servicesLayer } from "../../support/servers.ts"
import { BENCH_KEY } from "./benchRequests.ts"
import { type Stage, stages } from "./stageNames.ts"

const [port, endpoint, stage] = process.argv.slice(2) as [string, "chat" | "webSearch", Stage]
if (!stages.includes(stage) || (endpoint !== "chat" && endpoint !== "webSearch")) throw new Error("usage: stageServer.ts <port> <chat|webSearch> <stage>")
const at = stages.indexOf(stage)
const services = servicesLayer({ keys: [{ name: "bench", sha256: hashKey(BENCH_KEY), requestsPerMinute: 1_000_000_000 }] })

// A body of the real answer's size, so that writing it costs what writing the real one does.
const fixed = jsonAnswer({ filler: "x".repeat(endpoint === "chat" ? 400 : 890) })

/** The route's work up to `stage`, then the fixed answer (the real one at `answer`). */
const chatUpTo = (chat: ChatGateway["Service"]) => (text: string): Effect.Effect<Answer> => {
  if (at === stages.indexOf("parse")) return Effect.sync(() => (JSON.parse(text), fixed))
  const decoded = parseBody(text, (json) => Result.map(decodeChatRequest(json), (body) => ({ body, sent: json })))
  if (Result.isFailure(decoded)) return Effect.die(decoded.failure)
  const request = chatRequestOf(chat, decoded.success.body, decoded.success.sent)
  if (at === stages.indexOf("decode")) return Effect.succeed(fixed)
  return Effect.orDie(Effect.map(chat.complete(request), (result) =>
    at === stages.indexOf("backend") ? fixed : jsonAnswer(toCompletionResponse(result, "chatcmpl-stages", 0))))
}
const searchUpTo = (search: FederatedSearch["Service"]) => (text: string): Effect.Effect<Answer> => {
  if (at === stages.indexOf("parse")) return Effect.sync(() => (JSON.parse(text), fixed))
  const query = parseBody(text, decodeSearchRequest)
  if (Result.isFailure(query)) return Effect.die(query.failure)
  if (at === stages.indexOf("decode")) return Effect.succeed(fixed)
  return Effect.orDie(Effect.map(search.web(query.success), (answer) =>
    at === stages.indexOf("backend") ? fixed : jsonAnswer(successEnvelopeWith(answer.data, answer.extra))))
}

NodeRuntime.runMain(Effect.scoped(Effect.gen(function*() {
  const context = yield* Layer.build(services)
  const real = yield* Effect.provideContext(makeExpressLane, context)
  const run = Effect.runForkWith(context)
  const upTo = endpoint === "chat" ? chatUpTo(Context.get(context, ChatGateway)) : searchUpTo(Context.get(context, FederatedSearch))
  const lane: ExpressLane = stage === "lane"
    ? real
    : { ...real, answer: (_route, _request, body) => run(stage === "fixed" ? Effect.succeed(fixed) : upTo(body ?? "")) }
  const server = new GatedServer()
  server.lane = lane
  server.on("request", (_req, res) => res.writeHead(404).end())
  yield* Effect.callback<void>((resume) => {
    server.listen(Number(port), "127.0.0.1", () => resume(Effect.void))
  })
  yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
  return yield* Effect.never
})))
