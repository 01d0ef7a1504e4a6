/**
 * Periscope's chat stack for the in-process chat benches (chatLaneCost.ts, gcPromotionWorker.ts):
 * the application's own composition with one model, "bench-model", routed to an OpenAI-compatible
 * upstream (the mock upstream in its own process), and a key whose limit no run can reach. With
 * it, the two ways a bench sends a chat body: to the express lane's answer, and to the chat
 * gateway as the request the HTTP handlers would make of it.
 */
import { Context, Effect, Exit, Fiber, Layer, Result, Scope } from "effect"
import type { Answer } from "../../../core/api/Answer.ts"
import { chatRequestOf, decodeChatRequest } from "../../../core/api/ChatHandlers.ts"
import { makeExpressLane } from "../../../core/api/ExpressLane.ts"
import { recordsFromPlainKeys } from "../../../core/auth/KeyRecord.ts"
import { ChatGateway } from "../../../core/chat/ChatGateway.ts"
import type { ChatRequest } from "../../../core/chat/ChatRequest.ts"
import { servicesLayer, TEST_KEY } from "../../support/servers.ts"

/** The chat body every chat bench sends, streamed or whole. */
export const benchChatBody = (stream: boolean) => ({ model: "bench-model", stream, messages: [{ role: "user", content: "Tell me something." }] })

export const makeBenchChatStack = async (upstreamUrl: string) => {
  const services = servicesLayer({
    keys: recordsFromPlainKeys([TEST_KEY], 1_000_000_000),
    chatConfig: { upstreams: { mock: { baseUrl: upstreamUrl, preset: "passthrough" } }, models: [{ name: "bench-model", targets: [{ upstream: "mock", model: "mock-model" }] }] }
  })
  const scope = Scope.makeUnsafe()
  const context = await Effect.runPromise(Layer.build(services).pipe(Scope.provide(scope)))
  const lane = await Effect.runPromise(Effect.provide(makeExpressLane, context))
  const chat = Context.get(context, ChatGateway)
  const route = lane.routeOf("POST", "/v1/chat/completions")!

  /** The lane's answer to a chat body, started as the Node adapter starts it (with the bench's key). */
  const answerInLane = (body: unknown): Promise<Answer> => {
    const text = JSON.stringify(body)
    const head = { method: "POST", url: "/v1/chat/completions", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", "content-length": String(text.length) } }
    return Effect.runPromise(Fiber.join(lane.answer(route, head, text)))
  }

  /** A chat body decoded as the HTTP handlers decode it, as the gateway's request. */
  const gatewayRequest = (body: unknown): ChatRequest => {
    const decoded = decodeChatRequest(body)
    if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
    return chatRequestOf(chat, decoded.success, body)
  }

  return { lane, chat, answerInLane, gatewayRequest, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
