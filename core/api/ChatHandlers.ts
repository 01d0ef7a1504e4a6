/** /v1/chat/completions (JSON or SSE) and /v1/models over the ChatModel service. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { ChatCompletionResponse } from "../chat/ChatCompletion.ts"
import { ChatGateway, type GatewayResult } from "../chat/ChatGateway.ts"
import { ChatCompletionRequest, toChatRequest } from "../chat/ChatRequest.ts"
import { PeriscopeApi } from "./Api.ts"
import { ServerOptions } from "./ServerOptions.ts"
import type { ApiError } from "./ApiError.ts"
import { sequenceChunks, sseBody } from "./ChatSse.ts"
import { completionId } from "./CompletionIds.ts"
import { fromChatError, internalError } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { CHAT_BODY_LIMIT, decodeJsonBody, makeBodyDecoder } from "./RequestBody.ts"

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
    usage: result.usage
  }
}

const SSE_HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" }

export const ChatHandlers = HttpApiBuilder.group(PeriscopeApi, "chat", Effect.fnUntraced(function*(handlers) {
  const chat = yield* ChatGateway
  return handlers
    .handleRaw("completions", ({ request }) =>
      Effect.gen(function*() {
        const body = yield* decodeJsonBody(request, CHAT_BODY_LIMIT, decodeChatRequest)
        const chatRequest = toChatRequest(body, body.model ?? chat.defaultModel)
        const id = completionId()
        const created = Math.floor(Date.now() / 1000)
        if (chatRequest.stream) {
          const options = yield* ServerOptions
          const events = sequenceChunks(
            chat.stream(chatRequest),
            { id, created, model: chatRequest.model, includeUsage: chatRequest.stream_options?.include_usage === true },
            fromChatError,
            internalError
          )
          return HttpServerResponse.stream(sseBody(events, options.streamKeepAlive), {
            contentType: "text/event-stream",
            headers: SSE_HEADERS
          })
        }
        const result = yield* Effect.mapError(chat.complete(chatRequest), fromChatError)
        // Written directly: the handler's types already match the contract's schema.
        return HttpServerResponse.jsonUnsafe(toCompletionResponse(result, id, created))
      }).pipe(Effect.catch(renderError)))
    .handle("models", () =>
      Effect.map(chat.models, (data) => ({ object: "list" as const, data })))
}))
