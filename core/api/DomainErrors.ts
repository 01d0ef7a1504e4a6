/** Domain errors of the services, mapped to the ApiError the wire renders. */
import { Cause } from "effect"
import type { ChatModelError } from "../chat/ChatError.ts"
import type { SourceSelectionError } from "../search/FederatedSearch.ts"
import type { SearchBackendError } from "../search/SearchError.ts"
import type { AuthError } from "../auth/AuthError.ts"
import type { InvalidInput } from "../schema/InvalidInput.ts"
import { ApiError } from "./ApiError.ts"

export const fromSearchError = (error: SearchBackendError): ApiError =>
  new ApiError({ kind: error.reason, message: error.message, param: null })

/** A federated search failure: a `sources` entry that names no configured source is the caller's (400). */
export const fromFederationError = (error: SearchBackendError | SourceSelectionError): ApiError =>
  error._tag === "SourceSelectionError"
    ? new ApiError({ kind: "invalid_request", message: error.message, param: error.path })
    : fromSearchError(error)

export const fromChatError = (error: ChatModelError): ApiError =>
  new ApiError({
    kind: error.reason,
    message: error.message,
    param: error.param ?? null,
    ...(error.code === undefined ? {} : { code: error.code }),
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds })
  })

/** A defect: the caller learns only that we failed; the cause goes to the log, not the wire. */
export const internalError = (_cause?: Cause.Cause<unknown>): ApiError =>
  new ApiError({ kind: "internal", message: "internal error; the failure was logged", param: null })

/** Input that broke a rule: 400, naming the field (as `param`) and the rule. */
export const fromInvalidInput = (error: InvalidInput): ApiError =>
  new ApiError({
    kind: error.reason === "not_json" ? "invalid_json" : "invalid_request",
    message: error.message,
    param: error.path === "" ? null : error.path
  })

/**
 * A refused key or an exhausted limit: 401, 429 (with Retry-After) or 503. Limits that cannot be
 * checked (the shared store down, limits failing closed) say so in their code, `limiter_unavailable`:
 * the upstream is not what is unavailable.
 */
export const fromAuthError = (error: AuthError): ApiError =>
  new ApiError({
    kind: error.reason === "rate_limited" ? "rate_limited" : error.reason === "limiter_unavailable" ? "unavailable" : "unauthorized",
    message: error.message,
    param: null,
    ...(error.reason === "limiter_unavailable" ? { code: "limiter_unavailable" } : {}),
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds })
  })
