/**
 * The one error type the HTTP layer renders. Every failure (bad input, auth,
 * rate limit, backend trouble) becomes an ApiError with a kind; `status` and
 * each wire family's rendering (search envelope, OpenAI error body, JSON-RPC,
 * Tavily's and SearXNG's bodies) live here only.
 */
import { Schema } from "effect"

export const ApiErrorKind = Schema.Literals([
  "invalid_request",
  "invalid_json",
  "unsupported_media_type",
  "payload_too_large",
  "not_found",
  "method_not_allowed",
  "model_not_found",
  "unauthorized",
  "rate_limited",
  "internal",
  "upstream",
  "unavailable",
  "timeout"
])
export type ApiErrorKind = typeof ApiErrorKind.Type

export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  kind: ApiErrorKind,
  /** Shown to the caller: names the field and the rule; never secrets or internals. */
  message: Schema.String,
  /** The request field at fault (`num`, `tools[3].function.name`), when there is one. */
  param: Schema.optional(Schema.NullOr(Schema.String)),
  /** Seconds until a rate-limited caller may retry (sent as Retry-After). */
  retryAfterSeconds: Schema.optional(Schema.Number),
  /** Methods the path accepts (sent as Allow on 405). */
  allow: Schema.optional(Schema.String),
  /** A machine-readable code for the OpenAI body (e.g. "tool_call_invalid"); defaults per kind. */
  code: Schema.optional(Schema.String)
}) {}

/** HTTP status of each kind. */
export const statusOf: Record<ApiErrorKind, number> = {
  invalid_request: 400,
  invalid_json: 400,
  unauthorized: 401,
  not_found: 404,
  model_not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  upstream: 502,
  unavailable: 503,
  timeout: 504
}

// ---------------------------------------------------------------------------
// Search family: the envelope with the published business codes.

/** Business code of the search envelope: the published codes as strings. */
export const searchCodeOf = (kind: ApiErrorKind): string => {
  switch (kind) {
    case "unauthorized":
      return "90402"
    case "rate_limited":
      return "40303"
    case "internal":
    case "upstream":
    case "unavailable":
    case "timeout":
      return "500"
    default:
      return "400"
  }
}

/** `exception.type` of the search envelope: a stable PascalCase name per kind. */
const exceptionTypeOf: Record<ApiErrorKind, string> = {
  invalid_request: "InvalidRequest",
  invalid_json: "InvalidJson",
  unsupported_media_type: "UnsupportedMediaType",
  payload_too_large: "PayloadTooLarge",
  not_found: "NotFound",
  method_not_allowed: "MethodNotAllowed",
  model_not_found: "ModelNotFound",
  unauthorized: "Unauthorized",
  rate_limited: "RateLimited",
  internal: "InternalError",
  upstream: "BackendError",
  unavailable: "BackendUnavailable",
  timeout: "BackendTimeout"
}

export const SearchErrorBody = Schema.Struct({
  success: Schema.Literal(false),
  code: Schema.String,
  message: Schema.String,
  exception: Schema.Struct({ type: Schema.String, detail: Schema.String }),
  data: Schema.Null,
  extra: Schema.Null
}).annotate({ identifier: "SearchErrorEnvelope" })
export type SearchErrorBody = typeof SearchErrorBody.Type

export const toSearchErrorBody = (error: ApiError): SearchErrorBody => ({
  success: false,
  code: searchCodeOf(error.kind),
  message: error.message,
  exception: { type: exceptionTypeOf[error.kind], detail: error.message },
  data: null,
  extra: null
})

// ---------------------------------------------------------------------------
// Chat family: the OpenAI error body, so OpenAI clients raise the right class.

const openAiTypeOf = (kind: ApiErrorKind): string => {
  switch (kind) {
    case "unauthorized":
      return "authentication_error"
    case "rate_limited":
      return "rate_limit_error"
    case "internal":
    case "upstream":
    case "unavailable":
    case "timeout":
      return "server_error"
    default:
      return "invalid_request_error"
  }
}

const openAiCodeOf: Partial<Record<ApiErrorKind, string>> = {
  invalid_json: "invalid_json",
  unsupported_media_type: "unsupported_media_type",
  payload_too_large: "payload_too_large",
  not_found: "not_found",
  method_not_allowed: "method_not_allowed",
  model_not_found: "model_not_found",
  unauthorized: "invalid_api_key",
  rate_limited: "rate_limit_exceeded",
  upstream: "upstream_error",
  unavailable: "upstream_unavailable",
  timeout: "upstream_timeout"
}

export const ChatErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Schema.String,
    type: Schema.String,
    param: Schema.NullOr(Schema.String),
    code: Schema.NullOr(Schema.String)
  })
}).annotate({ identifier: "OpenAIErrorBody" })
export type ChatErrorBody = typeof ChatErrorBody.Type

export const toChatErrorBody = (error: ApiError): ChatErrorBody => ({
  error: {
    message: error.message,
    type: openAiTypeOf(error.kind),
    param: error.param ?? null,
    code: error.code ?? openAiCodeOf[error.kind] ?? null
  }
})

/** Extra response headers an error carries (Retry-After, Allow, WWW-Authenticate). */
export const errorHeaders = (error: ApiError): Record<string, string> => {
  const headers: Record<string, string> = {}
  if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfterSeconds)))
  if (error.allow !== undefined) headers["allow"] = error.allow
  if (error.kind === "unauthorized") headers["www-authenticate"] = "Bearer"
  return headers
}

// ---------------------------------------------------------------------------
// MCP family: a JSON-RPC error object, the shape an MCP client reads off any answer of /mcp.

/** JSON-RPC error codes: the standard ones, and -32001 for a refusal of the HTTP layer (key, limit, size). */
export const JSON_RPC_INVALID_REQUEST = -32600
export const JSON_RPC_INTERNAL_ERROR = -32603
const JSON_RPC_REFUSED = -32001

export const McpErrorBody = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.Null,
  error: Schema.Struct({ code: Schema.Int, message: Schema.String })
}).annotate({ identifier: "JsonRpcErrorBody" })
export type McpErrorBody = typeof McpErrorBody.Type

const jsonRpcCodeOf = (kind: ApiErrorKind): number => {
  switch (kind) {
    case "invalid_request":
    case "invalid_json":
    case "unsupported_media_type":
    case "not_found":
    case "method_not_allowed":
      return JSON_RPC_INVALID_REQUEST
    case "internal":
      return JSON_RPC_INTERNAL_ERROR
    default:
      return JSON_RPC_REFUSED
  }
}

export const toMcpErrorBody = (error: ApiError): McpErrorBody => ({
  jsonrpc: "2.0",
  id: null,
  error: { code: jsonRpcCodeOf(error.kind), message: error.message }
})

// ---------------------------------------------------------------------------
// Tavily family: `{"detail": {"error": "..."}}`, the body Tavily's clients read the message from.

export const TavilyErrorBody = Schema.Struct({
  detail: Schema.Struct({ error: Schema.String })
}).annotate({ identifier: "TavilyErrorBody" })
export type TavilyErrorBody = typeof TavilyErrorBody.Type

export const toTavilyErrorBody = (error: ApiError): TavilyErrorBody => ({ detail: { error: error.message } })

// ---------------------------------------------------------------------------
// SearXNG family: `{"error": "..."}`, the JSON SearXNG itself answers a bad search with.

export const SearxngErrorBody = Schema.Struct({ error: Schema.String }).annotate({ identifier: "SearxngErrorBody" })
export type SearxngErrorBody = typeof SearxngErrorBody.Type

export const toSearxngErrorBody = (error: ApiError): SearxngErrorBody => ({ error: error.message })

/** Which wire family renders an error: the search envelope, the OpenAI body, a JSON-RPC error (MCP), Tavily's or SearXNG's body. */
export type WireFamily = "search" | "chat" | "mcp" | "tavily" | "searxng"

/** The path of a request URL, without its query string. */
export const pathOfUrl = (url: string): string => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`)

/** The family of a path: /v1 speaks OpenAI, /mcp JSON-RPC, /tavily and /searxng their peers' bodies, the rest the search envelope. */
export const familyOfPath = (path: string): WireFamily =>
  under(path, "/v1") ? "chat" : under(path, "/mcp") ? "mcp" : under(path, "/tavily") ? "tavily" : under(path, "/searxng") ? "searxng" : "search"

export const errorBody = (family: WireFamily, error: ApiError): SearchErrorBody | ChatErrorBody | McpErrorBody | TavilyErrorBody | SearxngErrorBody => {
  switch (family) {
    case "chat":
      return toChatErrorBody(error)
    case "mcp":
      return toMcpErrorBody(error)
    case "tavily":
      return toTavilyErrorBody(error)
    case "searxng":
      return toSearxngErrorBody(error)
    default:
      return toSearchErrorBody(error)
  }
}
