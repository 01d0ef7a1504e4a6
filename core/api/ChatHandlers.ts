/** /v1/chat/completions (JSON or SSE) and /v1/models over the ChatModel service. */
import { Duration, Effect, Exit, Fiber, Option, Result, Scope, Stream } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { ChatCompletionResponse } from "../chat/ChatCompletion.ts"
import { ChatGateway, type GatewayResult } from "../chat/ChatGateway.ts"
import { ChatCompletionRequest, type ChatRequest, toChatRequest } from "../chat/ChatRequest.ts"
import { requestSchemaProblem } from "../chat/ToolValidation.ts"
import { type Answer, errorAnswer, jsonAnswer, toHttpResponse } from "./Answer.ts"
import { PeriscopeApi } from "./Api.ts"
import { ApiError } from "./ApiError.ts"
import { type SequencedEvent, sequenceChunks, sseBody } from "./ChatSse.ts"
import { completionId } from "./CompletionIds.ts"
import { fromChatError, internalError } from "./DomainErrors.ts"
import { CHAT_BODY_LIMIT, decodeJsonText, makeBodyDecoder, readJsonText } from "./JsonBody.ts"
import { ServerLifecycle, ServerOptions } from "./ServerOptions.ts"

/** A chat body decoded (the spec defaults are applied later, by chatRequestOf). */
export const decodeChatRequest = makeBodyDecoder(ChatCompletionRequest)
const renderError = (error: ApiError) => Effect.succeed(errorAnswer("chat", error))

/** Spec 2.6: the first choice's tool calls are repeated at the top level. */
export const toCompletionResponse = (result: GatewayResult, id: string, created: number): ChatCompletionResponse => {
  const toolCalls = result.choices[0]?.message.tool_calls
  return {
    id,
    object: "chat.completion",
    created,
    model: result.model,
    choices: result.choices,
    ...(toolCalls !== undefined && toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    usage: result.usage,
    // Grounded answers: the sources and what grounding did (core/chat/GroundedAnswer.ts).
    ...(result.search_results === undefined ? {} : { search_results: result.search_results }),
    ...(result.periscope_grounding === undefined ? {} : { periscope_grounding: result.periscope_grounding })
  }
}

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** The request the gateway answers: a request that names no model gets the gateway's default (decided by its router). */
export const chatRequestOf = (chat: ChatGateway["Service"], body: ChatCompletionRequest, sent?: unknown): ChatRequest =>
  toChatRequest(body, body.model ?? chat.defaultModel, sent)

/** A whole completion as the wire shows it: a fresh id, created now. */
export const completeChat = (chat: ChatGateway["Service"], request: ChatRequest): Effect.Effect<ChatCompletionResponse, ApiError> =>
  Effect.map(Effect.mapError(chat.complete(request), fromChatError), (result) => toCompletionResponse(result, completionId(), nowSeconds()))

/** The wire chunks of a streamed completion; a failure ends it as an Error event. */
export const streamChat = (chat: ChatGateway["Service"], request: ChatRequest): Stream.Stream<SequencedEvent> =>
  sequenceChunks(
    chat.stream(request),
    { id: completionId(), created: nowSeconds(), model: request.model, includeUsage: request.stream_options?.include_usage === true },
    fromChatError,
    internalError
  )

const SSE_HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/** Tool and response-format schemas are compiled on arrival: a bad one is a 400 naming it, never a 500 later. */
const checkSchemas = (body: ChatCompletionRequest): Effect.Effect<void, ApiError> => {
  const problem = requestSchemaProblem(body)
  return problem === undefined
    ? Effect.void
    : Effect.fail(new ApiError({ kind: "invalid_request", message: problem.message, param: problem.param }))
}

/**
 * A stream's answer, committed only once its first event is in or `wait`
 * has passed: a failure before any chunk (an upstream 500, 401 or 429, a
 * refused connection) is answered with its own status instead of 200 and an
 * error event. Failures come that fast; a slow first token gets its 200 (and
 * keep-alives) after `wait`. The first pull runs in a fiber of its own, so
 * the wait never interrupts the stream.
 */
export const commitStream = Effect.fnUntraced(function*(events: Stream.Stream<SequencedEvent>, wait: Duration.Duration) {
  const scope = yield* Scope.make()
  return yield* commitIn(events, wait, scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
})

// Defined once, not per stream: a generator function made per call costs 1-4 µs more (test/bench/effectGen.ts).
const commitIn = Effect.fnUntraced(function*(events: Stream.Stream<SequencedEvent>, wait: Duration.Duration, scope: Scope.Closeable) {
  const pull = yield* Stream.toPull(events).pipe(Scope.provide(scope))
  const first = yield* Effect.forkIn(pull, scope)
  const early = yield* Fiber.await(first).pipe(Effect.timeoutOption(wait))
  if (Option.isSome(early) && Exit.isSuccess(early.value)) {
    const head = early.value.value[0]
    if (head._tag === "Error") {
      yield* Scope.close(scope, Exit.void)
      return { _tag: "Failed" as const, error: head.error }
    }
  }
  let pulled = false
  const rest = Effect.suspend(() => {
    if (pulled) return pull
    pulled = true
    return Fiber.join(first)
  })
  const stream = Stream.fromPull(Effect.succeed(rest)).pipe(Stream.ensuring(Scope.close(scope, Exit.void)))
  return { _tag: "Open" as const, stream }
})

const shuttingDown: SequencedEvent = {
  _tag: "Error",
  error: new ApiError({ kind: "unavailable", message: "the server is shutting down; send the request again", param: null, code: "server_shutting_down" })
}

/**
 * The stream until `end` completes, then an error event saying why it stopped (the backend is
 * interrupted). Not a merge: a merge still lets buffered chunks through after the error event.
 */
const endingAt = (events: Stream.Stream<SequencedEvent>, end: Effect.Effect<void>): Stream.Stream<SequencedEvent> =>
  Stream.suspend(() => {
    let ended = false
    return events.pipe(
      Stream.interruptWhen(Effect.andThen(end, Effect.sync(() => { ended = true }))),
      Stream.concat(Stream.suspend(() => ended ? Stream.succeed(shuttingDown) : Stream.empty))
    )
  })

/**
 * A chat completion from the body's text to the answer (JSON, or the SSE stream), errors
 * rendered in the chat family: the HttpApi handler below and the express lane (ExpressLane)
 * answer with this.
 */
export const makeChatAnswer = (chat: ChatGateway["Service"]) => (text: string): Effect.Effect<Answer> => answerChat(chat, text)

// Defined once: a generator function made per request costs 1-4 µs more (test/bench/effectGen.ts).
const answerChat = Effect.fnUntraced(
  function*(chat: ChatGateway["Service"], text: string): Effect.fn.Return<Answer, ApiError> {
    // The body as sent travels along: which fields the client set decides what an upstream is sent.
    const { body, sent } = yield* decodeJsonText(text, (json) => Result.map(decodeChatRequest(json), (body) => ({ body, sent: json })))
    yield* checkSchemas(body)
    const chatRequest = chatRequestOf(chat, body, sent)
    if (chatRequest.stream) {
      const options = yield* ServerOptions
      const opened = yield* commitStream(streamChat(chat, chatRequest), options.streamKeepAlive)
      if (opened._tag === "Failed") return yield* Effect.fail(opened.error)
      const lifecycle = yield* ServerLifecycle
      return { _tag: "Events", headers: SSE_HEADERS, events: sseBody(endingAt(opened.stream, lifecycle.streamsEnd), options.streamKeepAlive) } satisfies Answer
    }
    // Written directly: the handler's types already match the contract's schema.
    return jsonAnswer(yield* completeChat(chat, chatRequest))
  },
  Effect.catch(renderError)
)

export const ChatHandlers = HttpApiBuilder.group(PeriscopeApi, "chat", Effect.fnUntraced(function*(handlers) {
  const chat = yield* ChatGateway
  const answer = makeChatAnswer(chat)
  return handlers
    .handleRaw("completions", ({ request }) =>
      readJsonText(request, CHAT_BODY_LIMIT).pipe(
        Effect.matchEffect({ onFailure: renderError, onSuccess: answer }),
        Effect.map(toHttpResponse)
      ))
    .handle("models", () =>
      Effect.map(chat.models, (data) => ({ object: "list" as const, data })))
}))
