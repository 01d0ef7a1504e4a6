/**
 * The contract between the model router and the clients of real model
 * servers. A target is one configured upstream model; a client answers a
 * ChatRequest against a target. Errors say whether any byte of the answer
 * had arrived, because only failures before the first byte may be retried
 * or sent to a fallback target.
 */
import { Context, type Effect, type Redacted, Schema, type Stream } from "effect"
import type { ChatChunk, ChatResult } from "./ChatCompletion.ts"
import type { ChatRequest } from "./ChatRequest.ts"

/** Request fields an upstream may receive, renamed, clamped or dropped per upstream. */
export const ForwardedParams = [
  "temperature",
  "top_p",
  "top_k",
  "frequency_penalty",
  "presence_penalty",
  "max_tokens",
  "n",
  "stop",
  "seed",
  "user",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "response_format"
] as const
export type ForwardedParam = typeof ForwardedParams[number]

/**
 * Whose defaults apply to sampling fields a client left out: "spec" sends
 * Periscope's (temperature 0.7, top_p 0.7, ...), "upstream" sends only what the
 * client set, so the model server's own defaults (generation_config) apply.
 */
export const RequestDefaultsModes = ["spec", "upstream"] as const
export type RequestDefaults = typeof RequestDefaultsModes[number]

/** What happens to one request field on its way to an upstream. */
export interface ParamRule {
  /** Leave the field out (e.g. OpenAI rejects top_k). */
  readonly drop?: boolean | undefined
  /** Send it under another name (e.g. max_tokens -> max_completion_tokens). */
  readonly rename?: string | undefined
  /** Clamp numbers into the upstream's accepted range. */
  readonly min?: number | undefined
  readonly max?: number | undefined
}

export type ParameterMap = Partial<Record<ForwardedParam, ParamRule>>

export interface UpstreamTimeouts {
  /** Until the response headers arrive. */
  readonly connectMs: number
  /** Until the first token (first SSE data event, or the whole body when not streaming). */
  readonly firstTokenMs: number
  /** The whole request, first byte to last. */
  readonly totalMs: number
}

/** One configured upstream model. */
export interface UpstreamTarget {
  /** The config name of the upstream, used in logs and errors (never its key). */
  readonly name: string
  /** Base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** The model name the upstream knows. */
  readonly model: string
  readonly params: ParameterMap
  /** Whether the upstream honours n > 1 itself; otherwise the pipeline fans out. */
  readonly supportsN: boolean
  readonly timeouts: UpstreamTimeouts
  /** Retries with exponential backoff, only before the first byte of an answer. */
  readonly retries: { readonly max: number; readonly baseDelayMs: number }
  /** Extra headers sent with every request (e.g. an organisation id). */
  readonly headers: Readonly<Record<string, string>>
  /** Fields the client left out: sent with Periscope's defaults ("spec", the default) or left to the upstream. */
  readonly requestDefaults?: RequestDefaults | undefined
}

export class UpstreamError extends Schema.TaggedError<UpstreamError>()("UpstreamError", {
  /** The target's config name. */
  target: Schema.String,
  /** connect: no response; timeout: a deadline passed; status: a non-2xx answer;
   *  protocol: an answer we cannot read; stream: the stream broke or sent an error event. */
  kind: Schema.Literals(["connect", "timeout", "status", "protocol", "stream"]),
  status: Schema.optional(Schema.Number),
  /** Safe to show: upstream error text is passed on, credentials never are. */
  message: Schema.String,
  retryAfterSeconds: Schema.optional(Schema.Number),
  /** True when no byte of the answer had reached us: retry and fallback are allowed. */
  beforeFirstByte: Schema.Boolean
}) {}

/** Retry and fallback apply to connection errors, timeouts before any byte, 429 and 5xx. */
export const isRetryable = (error: UpstreamError): boolean =>
  error.beforeFirstByte &&
  (error.kind === "connect" || error.kind === "timeout" ||
    (error.kind === "status" && error.status !== undefined && (error.status === 429 || error.status >= 500)))

/** A client of OpenAI-compatible model servers. */
export class UpstreamClient extends Context.Service<UpstreamClient, {
  complete(target: UpstreamTarget, request: ChatRequest): Effect.Effect<ChatResult, UpstreamError>
  /** Interrupting the stream aborts the upstream HTTP request at once. */
  stream(target: UpstreamTarget, request: ChatRequest): Stream.Stream<ChatChunk, UpstreamError>
}>()("periscope/chat/UpstreamClient") {}
