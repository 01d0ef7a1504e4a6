/**
 * POST /v1/responses over the chat gateway: the request decoded and mapped to a ChatRequest
 * (ResponsesToChat), a whole answer mapped to a response (ResponseOutput), a streamed one to the
 * Responses API's events (ResponseEventSequencer) on chat's SSE machinery (openSse with this
 * wire's framing: named events, no [DONE]). Errors are OpenAI's error body, as on chat
 * completions, naming the Responses field at fault. The HttpApi handler and the express lane
 * (ExpressLane) answer with makeResponsesAnswer; the embed library's responses() and
 * responsesStream() run completeResponse and streamResponse.
 */
import { Cause, Effect, Result, Stream } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { mapArrays, withEnd } from "../../chat/ArrayStreams.ts"
import type { ChatChunk } from "../../chat/ChatCompletion.ts"
import type { ChatModelError } from "../../chat/ChatError.ts"
import { ChatGateway } from "../../chat/ChatGateway.ts"
import { type Answer, errorAnswer, jsonAnswer, toHttpResponse } from "../Answer.ts"
import { PeriscopeApi } from "../Api.ts"
import { ApiError, toChatErrorBody } from "../ApiError.ts"
import { openSse, shuttingDownError, type SseWire } from "../ChatSse.ts"
import { fromChatError, internalError } from "../DomainErrors.ts"
import { CHAT_BODY_LIMIT, readJsonText } from "../JsonBody.ts"
import { ServerLifecycle, ServerOptions } from "../ServerOptions.ts"
import type { ResponseObject, ResponseStreamEvent } from "./ResponseObject.ts"
import { ResponseEventSequencer, type ResponseStreamItem } from "./ResponseEventSequencer.ts"
import { responseId, responseOfResult, responseShell } from "./ResponseOutput.ts"
import { parseResponsesRequest, type ResponsesRequest } from "./ResponsesRequest.ts"
import { type GatewayCall, responsesParam, responsesToChat } from "./ResponsesToChat.ts"

const renderError = (error: ApiError) => Effect.succeed(errorAnswer("chat", error))
const nowSeconds = () => Math.floor(Date.now() / 1000)

/** A gateway failure named in the Responses request's terms (max_output_tokens, text.format, tools). */
export const responsesError = (error: ChatModelError): ApiError => {
  const api = fromChatError(error)
  const param = responsesParam(api.param)
  if (param === (api.param ?? null)) return api
  const message = api.param !== undefined && api.param !== null && api.message.startsWith(`${api.param}:`) ? `${param}:${api.message.slice(api.param.length + 1)}` : api.message
  return new ApiError({ ...api, param, message })
}

const SSE_HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" }

const frameEvent = (event: ResponseStreamEvent): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`

/**
 * This wire's SSE: each event named by its type. A failure before the first event refuses the
 * answer (openSse); one after a keep-alive opened it is an `error` event, as OpenAI sends one. A
 * shutdown ends an open stream with response.failed.
 */
const responsesSse = (sequencer: ResponseEventSequencer): SseWire<ResponseStreamItem> => {
  const frame = (item: ResponseStreamItem): string => {
    if (!(item instanceof ApiError)) return frameEvent(item)
    const { code, message, param } = toChatErrorBody(item).error
    const body = { type: "error", sequence_number: sequencer.nextSequence, code, message, param }
    return `event: error\ndata: ${JSON.stringify(body)}\n\n`
  }
  return {
    frame,
    failureOf: (item) => (item instanceof ApiError ? item : undefined),
    last: (shutDown) => (shutDown ? sequencer.fail(shuttingDownError).map(frame).join("") : "")
  }
}

/** The gateway's chunks as this wire's events; a failure ends them as the sequencer says. */
const responseEvents = (chunks: Stream.Stream<ChatChunk, ChatModelError>, sequencer: ResponseEventSequencer): Stream.Stream<ResponseStreamItem> =>
  mapArrays(chunks, (array): ReadonlyArray<ResponseStreamItem> => {
    const out: Array<ResponseStreamEvent> = []
    for (let i = 0; i < array.length; i++) sequencer.push(array[i]!, out)
    return out
  }).pipe(
    (events) =>
      withEnd(events, () => {
        const out: Array<ResponseStreamEvent> = []
        sequencer.end(out)
        return out
      }),
    Stream.catchCause((cause): Stream.Stream<ResponseStreamItem> => {
      if (Cause.hasInterruptsOnly(cause)) return Stream.failCause(cause as Cause.Cause<never>)
      const failure = Cause.findErrorOption(cause)
      if (failure._tag === "Some") return Stream.fromIterable(sequencer.fail(responsesError(failure.value)))
      // A defect: logged here, shown to the caller only as an internal error.
      return Stream.fromIterableEffect(Effect.as(Effect.logError("responses stream failed", cause), sequencer.fail(internalError(cause))))
    })
  )

/**
 * A streamed answer: its items (events, or the failure that came before any event) and the
 * sequencer that numbers them (the SSE framing numbers an `error` event with it).
 */
export const streamResponse = (
  chat: ChatGateway["Service"],
  request: ResponsesRequest,
  call: GatewayCall
): { readonly sequencer: ResponseEventSequencer; readonly events: Stream.Stream<ResponseStreamItem> } => {
  const sequencer = new ResponseEventSequencer(responseShell(responseId(), nowSeconds(), call.chat.model, request), nowSeconds)
  return { sequencer, events: responseEvents(chat.stream(call.chat), sequencer) }
}

/** A whole answer as the response object (created_at: this call), a gateway failure named in the request's terms. */
export const completeResponse = (chat: ChatGateway["Service"], request: ResponsesRequest, call: GatewayCall): Effect.Effect<ResponseObject, ApiError> => {
  const createdAt = nowSeconds()
  return Effect.mapBoth(chat.complete(call.chat), {
    onFailure: responsesError,
    onSuccess: (result) => responseOfResult(result, responseShell(responseId(), createdAt, result.model, request), nowSeconds())
  })
}

const streamAnswer = Effect.fnUntraced(function*(chat: ChatGateway["Service"], request: ResponsesRequest, call: GatewayCall): Effect.fn.Return<Answer, ApiError> {
  const options = yield* ServerOptions
  const lifecycle = yield* ServerLifecycle
  const { sequencer, events } = streamResponse(chat, request, call)
  const opened = yield* openSse(events, options.streamKeepAlive, lifecycle.streamsEnd, responsesSse(sequencer))
  if (opened._tag === "Failed") return yield* Effect.fail(opened.error)
  return { _tag: "Events", headers: SSE_HEADERS, events: opened.body } satisfies Answer
})

/** A response from the body's text to the answer (JSON, or the SSE stream), errors in OpenAI's body. */
export const makeResponsesAnswer = (chat: ChatGateway["Service"]) => (text: string): Effect.Effect<Answer> =>
  Effect.suspend(() => {
    const decoded = parseResponsesRequest(text)
    if (Result.isFailure(decoded)) return renderError(decoded.failure)
    const request = decoded.success
    const call = responsesToChat(request, chat.defaultModel)
    if (Result.isFailure(call)) return renderError(call.failure)
    if (call.success.chat.stream) return Effect.catch(streamAnswer(chat, request, call.success), renderError)
    return Effect.matchEffect(completeResponse(chat, request, call.success), {
      onFailure: renderError,
      onSuccess: (response) => Effect.succeed(jsonAnswer(response))
    })
  })

export const ResponsesHandlers = HttpApiBuilder.group(PeriscopeApi, "responses", Effect.fnUntraced(function*(handlers) {
  const answer = makeResponsesAnswer(yield* ChatGateway)
  return handlers.handleRaw("createResponse", ({ request }) =>
    readJsonText(request, CHAT_BODY_LIMIT).pipe(
      Effect.matchEffect({ onFailure: renderError, onSuccess: answer }),
      Effect.map(toHttpResponse)
    ))
}))
