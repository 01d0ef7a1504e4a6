/** /v1/chat/completions (JSON or SSE) and /v1/models over the ChatModel service. */
import { Effect, Result, type Stream } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { ChatCompletionResponse } from "../chat/ChatCompletion.ts"
import { ChatGateway, type GatewayResult } from "../chat/ChatGateway.ts"
import { ChatCompletionRequest, type ChatRequest, toChatRequest } from "../chat/ChatRequest.ts"
import { requestSchemaProblem } from "../chat/ToolValidation.ts"
import { type Answer, errorAnswer, jsonAnswer, toHttpResponse } from "./Answer.ts"
import { PeriscopeApi } from "./Api.ts"
import { ApiError } from "./ApiError.ts"
import { openSse, type SequencedEvent, sequenceChunks } from "./ChatSse.ts"
import { completionId } from "./CompletionIds.ts"
import { fromChatError, internalError } from "./DomainErrors.ts"
import { CHAT_BODY_LIMIT, makeBodyDecoder, parseBody, readJsonText } from "./JsonBody.ts"
import { ServerLifecycle, ServerOptions } from "./ServerOptions.ts"

/** A chat body decoded (Periscope's defaults are applied later, by chatRequestOf). */
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
  Effect.map(Effect.mapError(chat.complete(request), fromChatError), completionOf)

/** A gateway result as the wire's whole completion: a fresh id, created now. */
const completionOf = (result: GatewayResult): ChatCompletionResponse => toCompletionResponse(result, completionId(), nowSeconds())

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
const schemaError = (body: ChatCompletionRequest): ApiError | undefined => {
  const problem = requestSchemaProblem(body)
  return problem === undefined ? undefined : new ApiError({ kind: "invalid_request", message: problem.message, param: problem.param })
}

/**
 * A chat completion from the body's text to the answer (JSON, or the SSE stream), errors
 * rendered in the chat family: the HttpApi handler below and the express lane (ExpressLane)
 * answer with this.
 */
export const makeChatAnswer = (chat: ChatGateway["Service"]) => (text: string): Effect.Effect<Answer> => Effect.suspend(() => answerChat(chat, text))

/** Decode, check, then hand the request to the gateway: a stream or one completion. */
const answerChat = (chat: ChatGateway["Service"], text: string): Effect.Effect<Answer> => {
  // The body as sent travels along: which fields the client set decides what an upstream is sent.
  const decoded = parseBody(text, (json) => Result.map(decodeChatRequest(json), (body) => ({ body, sent: json })))
  if (Result.isFailure(decoded)) return renderError(decoded.failure)
  const { body, sent } = decoded.success
  const invalid = schemaError(body)
  if (invalid !== undefined) return renderError(invalid)
  const chatRequest = chatRequestOf(chat, body, sent)
  if (chatRequest.stream) return Effect.catch(streamAnswer(chat, chatRequest), renderError)
  return Effect.matchEffect(chat.complete(chatRequest), {
    onFailure: (error) => renderError(fromChatError(error)),
    // Written directly: the handler's types already match the contract's schema.
    onSuccess: (result) => Effect.succeed(jsonAnswer(completionOf(result)))
  })
}

const streamAnswer = Effect.fnUntraced(function*(chat: ChatGateway["Service"], chatRequest: ChatRequest): Effect.fn.Return<Answer, ApiError> {
  const options = yield* ServerOptions
  const lifecycle = yield* ServerLifecycle
  const opened = yield* openSse(streamChat(chat, chatRequest), options.streamKeepAlive, lifecycle.streamsEnd)
  if (opened._tag === "Failed") return yield* Effect.fail(opened.error)
  return { _tag: "Events", headers: SSE_HEADERS, events: opened.body } satisfies Answer
})

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
