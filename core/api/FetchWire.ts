/**
 * Wire schemas of webFetch: the request body `{url | urls, format?, maxChars?, maxTokens?, query?,
 * fresh?, addToIndex?, render?}` and the success envelope around `{title, content, url, fromCache}`
 * (the hosted search API's shape) plus `date` and `contentType`, and `chunks` with a query; with
 * `urls`, `data` is a list of those or `{url, error}` in the order asked. Failures use the search
 * failure envelope with a status and an `exception.type` of their own per reason (see
 * fetchErrorResponse); a URL of many that failed carries the same type and detail. The map:
 * `{url, limit?}` in, `{url, urls, truncated}` out.
 */
import { Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiSchema } from "effect/http-api"
import { ruledNumber, ruledString } from "../schema/Rules.ts"
import type { WebFetchError } from "../search/WebFetch.ts"
import { SearchErrorBody } from "./ApiError.ts"

export const MAX_URL_LENGTH = 8192
export const MAX_CHARS = 10_000_000
/** URLs one request reads at most. */
export const MAX_URLS = 20
export const MAX_QUERY_LENGTH = 1000
export const MAX_FETCH_TOKENS = 200_000
/** URLs a map request may ask for at most (the server's fetch.mapMaxUrls may allow fewer). */
export const MAX_MAP_LIMIT = 100_000

const urlRule = `must be an absolute http(s) URL of at most ${MAX_URL_LENGTH} characters`
const urlsRule = `must be an array of 1 to ${MAX_URLS} absolute http(s) URLs`
const queryRule = `must be a non-empty string of at most ${MAX_QUERY_LENGTH} characters`

/** One URL to read or map; the description goes on before the checks, so the document keeps maxLength beside it. */
export const fetchUrl = (description?: string) =>
  (description === undefined ? ruledString(urlRule) : ruledString(urlRule).annotate({ description })).check(
    Schema.isMinLength(1, { message: urlRule }),
    Schema.isMaxLength(MAX_URL_LENGTH, { message: urlRule })
  )
const FetchUrl = fetchUrl()

export const FetchRequestBody = Schema.Struct({
  /** The page; or `urls`, not both. */
  url: Schema.optionalKey(fetchUrl("The page to read; send url or urls, exactly one of them.")),
  /** Pages read at once, each as `url` would be: `data` is then a list in their order. */
  urls: Schema.optionalKey(
    Schema.Array(FetchUrl).annotate({ message: urlsRule, description: `Pages to read at once (1 to ${MAX_URLS}); data is then a list in their order.` }).check(
      Schema.isMinLength(1, { message: urlsRule }),
      Schema.isMaxLength(MAX_URLS, { message: urlsRule })
    )
  ),
  format: Schema.optionalKey(Schema.Literals(["markdown", "text", "html"]).annotate({ message: "must be markdown, text or html" })),
  maxChars: Schema.optionalKey(ruledNumber(`must be an integer from 1 to ${MAX_CHARS}`, { integer: true, min: 1, max: MAX_CHARS })),
  /** Content within this many tokens (o200k_base); with query, the chunks joined. */
  maxTokens: Schema.optionalKey(ruledNumber(`must be an integer from 1 to ${MAX_FETCH_TOKENS}`, { integer: true, min: 1, max: MAX_FETCH_TOKENS })),
  /** Give the page's chunks most relevant to this query, each with its heading path. */
  query: Schema.optionalKey(ruledString(queryRule).check(
    Schema.makeFilter((s: string) => (s.trim().length >= 1 && s.length <= MAX_QUERY_LENGTH ? undefined : queryRule), {
      toJsonSchema: () => ({ minLength: 1, maxLength: MAX_QUERY_LENGTH, pattern: "\\S" })
    })
  )),
  fresh: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  addToIndex: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  /** Read the page in a headless browser: never, auto (when its HTML is an app shell) or always. */
  render: Schema.optionalKey(Schema.Literals(["never", "auto", "always"]).annotate({ message: "must be never, auto or always" }))
}).annotate({
  identifier: "WebFetchRequest",
  message: "must be a JSON object with url (or urls) and optional format, maxChars, maxTokens, query, fresh, addToIndex, render"
})
export type FetchRequestBody = typeof FetchRequestBody.Type

/** The rules between the body's fields: exactly one of url and urls; chunks come as Markdown or text. */
export const fetchBodyIssue = (body: FetchRequestBody): { readonly path: string; readonly rule: string } | undefined => {
  if (body.url === undefined && body.urls === undefined) return { path: "url", rule: `is required (or urls, a list of up to ${MAX_URLS} URLs)` }
  if (body.url !== undefined && body.urls !== undefined) return { path: "urls", rule: "cannot be sent with url: send url or urls, not both" }
  if (body.query !== undefined && body.format === "html") return { path: "format", rule: "must be markdown or text with query (chunks are not given as HTML)" }
  return undefined
}

/** One chunk of a page read for a query. */
export const PageChunkData = Schema.Struct({
  /** The headings the chunk sits under, outermost first, joined with " > "; "" before the page's first heading. */
  heading: Schema.String,
  text: Schema.String
}).annotate({ identifier: "PageChunk" })

export const FetchedPageData = Schema.Struct({
  title: Schema.String,
  /** Markdown (default), plain text or HTML of the main content; PDF text; text and JSON as sent. */
  content: Schema.String,
  /** The final URL, after redirects. */
  url: Schema.String,
  fromCache: Schema.Boolean,
  /** Publication or modification date (YYYY-MM-DD), when the page or its Last-Modified gives one. */
  date: Schema.NullOr(Schema.String),
  contentType: Schema.String,
  /** With query: the chunks of the page most relevant to it, in page order; content is their texts joined with " [...] ". */
  chunks: Schema.optionalKey(Schema.Array(PageChunkData))
}).annotate({ identifier: "FetchedPage" })

/** A URL of many that could not be read: the type and detail a fetch of it alone would have answered, and that answer's status. */
export const FetchFailureData = Schema.Struct({
  /** The URL as asked. */
  url: Schema.String,
  error: Schema.Struct({ type: Schema.String, detail: Schema.String, status: Schema.Number })
}).annotate({ identifier: "FetchFailure" })

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
  /** One page for url; for urls, one entry per URL in the order asked. */
  data: Schema.Union([FetchedPageData, Schema.Array(Schema.Union([FetchedPageData, FetchFailureData]))]),
  /** With addToIndex: for urls, one entry per URL (null for a URL not read). */
  extra: Schema.NullOr(Schema.Struct({ index: Schema.Union([PageIndexingData, Schema.Array(Schema.NullOr(PageIndexingData))]) }))
}).annotate({ identifier: "WebFetchResponse" })

export const MapRequestBody = Schema.Struct({
  url: fetchUrl("A page of the site to map: its host is the site's."),
  limit: Schema.optionalKey(ruledNumber(`must be an integer from 1 to ${MAX_MAP_LIMIT}`, { integer: true, min: 1, max: MAX_MAP_LIMIT }))
}).annotate({ identifier: "MapRequest", message: "must be a JSON object with url and optional limit" })
export type MapRequestBody = typeof MapRequestBody.Type

export const SiteMapData = Schema.Struct({
  /** The start page, after redirects. */
  url: Schema.String,
  /** The site's URLs, each once: the start page, its sitemaps' pages, then the start page's links. */
  urls: Schema.Array(Schema.String),
  /** Why the list may be incomplete: limit (the request's or fetch.mapMaxUrls), time (fetch.mapTimeoutMs); null when it is not. */
  truncated: Schema.NullOr(Schema.Literals(["limit", "time"]))
}).annotate({ identifier: "SiteMap" })

export const MapResponse = Schema.Struct({
  success: Schema.Literal(true),
  code: Schema.Literal("200"),
  message: Schema.Literal("success"),
  exception: Schema.Null,
  data: SiteMapData,
  extra: Schema.Null
}).annotate({ identifier: "MapResponse" })

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

/** A URL of many that failed, as `data` lists it. */
export const fetchFailureEntry = (url: string, error: WebFetchError): typeof FetchFailureData.Type => {
  const rendering = RENDERING[error.reason]
  return { url, error: { type: rendering.type, detail: error.message, status: rendering.status } }
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
