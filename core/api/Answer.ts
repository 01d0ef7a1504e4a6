/**
 * An HTTP answer before it meets a server: what the hot routes produce, so
 * that the HttpApi handlers and the express lane (ExpressLane) answer them
 * with the same code. A JSON body stays the string JSON.stringify made: the
 * Node adapter writes it as it is, with its headers in one write.
 */
import type { Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { type ApiError, errorBody, errorHeaders, statusOf, type WireFamily } from "./ApiError.ts"

export type Answer = JsonAnswer | EventsAnswer

export interface JsonAnswer {
  readonly _tag: "Json"
  readonly status: number
  /** Headers besides Content-Type (application/json) and Content-Length. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** A chat stream: 200, text/event-stream, the framed events as they come. */
export interface EventsAnswer {
  readonly _tag: "Events"
  readonly headers: Readonly<Record<string, string>>
  readonly events: Stream.Stream<Uint8Array>
}

const noHeaders: Readonly<Record<string, string>> = {}

export const jsonAnswer = (value: unknown, status = 200, headers: Readonly<Record<string, string>> = noHeaders): JsonAnswer => ({
  _tag: "Json",
  status,
  headers,
  body: JSON.stringify(value)
})

/** An ApiError in the wire family of its path: its status, its body, its headers (Retry-After, Allow, WWW-Authenticate). */
export const errorAnswer = (family: WireFamily, error: ApiError): JsonAnswer =>
  jsonAnswer(errorBody(family, error), statusOf[error.kind], errorHeaders(error))

export const answerStatus = (answer: Answer): number => (answer._tag === "Json" ? answer.status : 200)

export const withHeader = (answer: Answer, name: string, value: string): Answer =>
  ({ ...answer, headers: { ...answer.headers, [name]: value } })

export const SSE_CONTENT_TYPE = "text/event-stream"

/** The answer as Effect's server response (the HttpApi handlers, the web handler of Deno and embed). */
export const toHttpResponse = (answer: Answer): HttpServerResponse.HttpServerResponse =>
  answer._tag === "Json"
    ? HttpServerResponse.text(answer.body, { status: answer.status, contentType: "application/json", headers: answer.headers })
    : HttpServerResponse.stream(answer.events, { contentType: SSE_CONTENT_TYPE, headers: answer.headers })
