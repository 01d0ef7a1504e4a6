/**
 * Why a request was refused before it reached a service. core/api renders it
 * in the path's wire family (401 with WWW-Authenticate, or 429 with Retry-After).
 */
import { Schema } from "effect"

export class AuthError extends Schema.TaggedError<AuthError>()("AuthError", {
  /** missing_key / invalid_key: 401. rate_limited: 429. limiter_unavailable: 503 (the shared store is down and limits fail closed). */
  reason: Schema.Literals(["missing_key", "invalid_key", "rate_limited", "limiter_unavailable"]),
  /** Shown to the caller: never the key, only the key's configured name. */
  message: Schema.String,
  /** Seconds until a rate-limited caller may retry. */
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

/** The authenticated caller: the key's name (never the key) and its limit. */
export interface Principal {
  readonly keyName: string
  readonly requestsPerMinute: number
}
