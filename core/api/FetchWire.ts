/**
 * Wire schemas of webFetch: the request body `{url, format?, maxChars?, fresh?, addToIndex?, render?}`
 * and the success envelope around `{title, content, url, fromCache}` (the seed provider's
 * shape) plus `date` and `contentType`. Failures use the search failure envelope with a
 * status and an `exception.type` of their own per reason (see fetchErrorResponse).
 */
import { Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiSchema } from "effect/http-api"
import { ruledNumber, ruledString } from "../schema/Rules.ts"
import type { WebFetchError } from "../search/WebFetch.ts"
import { SearchErrorBody } from "./ApiError.ts"

export const MAX_URL_LENGTH = 8192
export const MAX_CHARS = 10_000_000

const urlRule = `must be an absolute http(s) URL of at most ${MAX_URL_LENGTH} characters`

export const FetchRequestBody = Schema.Struct({
  url: ruledString(urlRule).check(
    Schema.isMinLength(1, { message: urlRule }),
    Schema.isMaxLength(MAX_URL_LENGTH, { message: urlRule })
  ),
  format: Schema.optionalKey(Schema.Literals(["markdown", "text", "html"]).annotate({ message: "must be markdown, text or html" })),
  maxChars: Schema.optionalKey(ruledNumber(`must be an integer from 1 to ${MAX_CHARS}`, { integer: true, min: 1, max: MAX_CHARS })),
  fresh: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  addToIndex: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  /** Read the page in a headless browser: never, auto (when its HTML is an app shell) or always. */
  render: Schema.optionalKey(Schema.Literals(["never", "auto", "always"]).annotate({ message: "must be never, auto or always" }))
}).annotate({ identifier: "WebFetchRequest", message: "must be a JSON object with url and optional format, maxChars, fresh, addToIndex, render" })
export type FetchRequestBody = typeof FetchRequestBody.Type

export const FetchedPageData = Schema.Struct({
  title: Schema.String,
  /** Markdown (default), plain text or HTML of the main content; PDF text; text and JSON as sent. */
  content: Schema.String,
  /** The final URL, after redirects. */
  url: Schema.String,
  fromCache: Schema.Boolean,
  /** Publication or modification date (YYYY-MM-DD), when the page or its Last-Modified gives one. */
  date: Schema.NullOr(Schema.String),
  contentType: Schema.String
}).annotate({ identifier: "FetchedPage" })

/** Whether the page went into the local index: the answer's `extra.index`, only when the request sends addToIndex: true. */
export const PageIndexingData = Schema.Union([
  Schema.Struct({ added: Schema.Literal(true) }),
  Schema.Struct({
    added: Schema.Literal(false),
    /** rate_limited (the key's pages a minute), full (the added pages' bound), too_large, empty, no_index. */
    reason: Schema.Literals(["rate_limited", "full", "too_large", "empty", "no_index"]),
    message: Schema.String
  })
]).annotate({ identifier: "PageIndexing" })

export const WebFetchResponse = Schema.Struct({
  success: Schema.Literal(true),
  code: Schema.Literal("200"),
  message: Schema.Literal("success"),
  exception: Schema.Null,
  data: FetchedPageData,
  extra: Schema.NullOr(Schema.Struct({ index: PageIndexingData }))
}).annotate({ identifier: "WebFetchResponse" })

/** Status, business code and exception.type of each reason. */
const RENDERING: Record<WebFetchError["reason"], { readonly status: number; readonly code: string; readonly type: string }> = {
  invalid_url: { status: 400, code: "400", type: "InvalidUrl" },
  refused: { status: 403, code: "400", type: "FetchRefused" },
  too_large: { status: 413, code: "400", type: "PageTooLarge" },
  unsupported_type: { status: 415, code: "400", type: "UnsupportedContentType" },
  timeout: { status: 504, code: "500", type: "FetchTimeout" },
  http_status: { status: 502, code: "500", type: "SiteHttpStatus" },
  failed: { status: 502, code: "500", type: "FetchFailed" },
  render_unavailable: { status: 501, code: "500", type: "RenderUnavailable" },
  busy: { status: 503, code: "500", type: "ServerBusy" }
}

export const FETCH_ERROR_STATUSES = [...new Set(Object.values(RENDERING).map((r) => r.status))]

/** The search failure envelope of a webFetch failure; http_status names the site's status in the detail. */
export const fetchErrorBody = (error: WebFetchError): { readonly status: number; readonly body: typeof SearchErrorBody.Type } => {
  const rendering = RENDERING[error.reason]
  return {
    status: rendering.status,
    body: {
      success: false,
      code: rendering.code,
      message: error.message,
      exception: { type: rendering.type, detail: error.message },
      data: null,
      extra: null
    }
  }
}

export const fetchErrorResponse = (error: WebFetchError): HttpServerResponse.HttpServerResponse => {
  const { status, body } = fetchErrorBody(error)
  return HttpServerResponse.jsonUnsafe(body, {
    status,
    ...(error.retryAfterSeconds === undefined ? {} : { headers: { "retry-after": String(Math.max(1, Math.ceil(error.retryAfterSeconds))) } })
  })
}

/** The contract's error schemas: the search envelope at every status webFetch answers with. */
export const fetchErrorSchemas = [...new Set([400, 401, 403, 413, 415, 429, 500, 501, 502, 503, 504])].map((status) =>
  SearchErrorBody.pipe(HttpApiSchema.status(status))
)
