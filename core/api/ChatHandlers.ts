/** /v1/chat/completions (JSON or SSE) and /v1/models over the ChatModel service. */
import { Effect, type Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { ChatCompletionResponse } from "../chat/ChatCompletion.ts"
import { ChatGateway, type GatewayResult } from "../chat/ChatGateway.ts"
import { ChatCompletionRequest, type ChatRequest, toChatRequest } from "../chat/ChatRequest.ts"
import { PeriscopeApi } from "./Api.ts"
import { ServerOptions } from "./ServerOptions.ts"
import type { ApiError } from "./ApiError.ts"
import { type SequencedEvent, sequenceChunks, sseBody } from "./ChatSse.ts"
import { completionId } from "./CompletionIds.ts"
import { fromChatError, internalError } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { CHAT_BODY_LIMIT, decodeJsonBody, makeBodyDecoder } from "./JsonBody.ts"

const decodeChatRequest = makeBodyDecoder(ChatCompletionRequest)
const renderError = (error: ApiError) => Effect.succeed(errorResponse("chat", error))

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
export const chatRequestOf = (chat: ChatGateway["Service"], body: ChatCompletionRequest): ChatRequest =>
  toChatRequest(body, body.model ?? chat.defaultModel)

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

export const ChatHandlers = HttpApiBuilder.group(PeriscopeApi, "chat", Effect.fnUntraced(function*(handlers) {
  const chat = yield* ChatGateway
  return handlers
    .handleRaw("completions", ({ request }) =>
      Effect.gen(function*() {
        const body = yield* decodeJsonBody(request, CHAT_BODY_LIMIT, decodeChatRequest)
        const chatRequest = chatRequestOf(chat, body)
        if (chatRequest.stream) {
          const options = yield* ServerOptions
          return HttpServerResponse.stream(sseBody(streamChat(chat, chatRequest), options.streamKeepAlive), {
            contentType: "text/event-stream",
            headers: SSE_HEADERS
          })
        }
        // Written directly: the handler's types already match the contract's schema.
        return HttpServerResponse.jsonUnsafe(yield* completeChat(chat, chatRequest))
      }).pipe(Effect.catch(renderError)))
    .handle("models", () =>
      Effect.map(chat.models, (data) => ({ object: "list" as const, data })))
}))
