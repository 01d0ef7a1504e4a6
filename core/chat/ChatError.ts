import { Schema } from "effect"

/**
 * A chat model could not answer. `reason` decides the status the caller sees:
 * invalid_request 400 (the model refused the request as malformed), model_not_found 404,
 * rate_limited 429, upstream 502, unavailable 503, timeout 504, internal 500.
 * `message` is shown to the caller: no secrets, no upstream credentials.
 */
export class ChatModelError extends Schema.TaggedError<ChatModelError>()("ChatModelError", {
  reason: Schema.Literals(["invalid_request", "model_not_found", "rate_limited", "upstream", "unavailable", "timeout", "internal"]),
  message: Schema.String,
  /** The request field at fault, for invalid_request. */
  param: Schema.optional(Schema.String),
  /** A machine-readable code, e.g. "tool_call_invalid". */
  code: Schema.optional(Schema.String),
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}
