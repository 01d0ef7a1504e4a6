/**
 * Web fetch: one page's URL in, its main content out (Markdown by default). The fetch goes
 * through the guarded PageFetcher (address policy on every hop), a page cache with single-flight,
 * and the ingestion extractor. Backends are Layers that provide it.
 */
import { Context, type Effect, Schema } from "effect"
import type { PageIndexing } from "./PageIndexing.ts"

export type FetchFormat = "markdown" | "text" | "html"

/**
 * Whether the page is read as a browser shows it, scripts run: never; auto, when the HTML alone
 * is an app shell (little main text, mostly scripts or a lone app root); always (HTML pages).
 */
export type RenderMode = "never" | "auto" | "always"

export interface FetchRequest {
  readonly url: string
  /** markdown (default): main content as Markdown; text: plain text; html: the cleaned main-content HTML. */
  readonly format?: FetchFormat
  /** Content cut to at most this many characters. */
  readonly maxChars?: number
  /** Bypass the cache (and refresh it with the answer). */
  readonly fresh?: boolean
  /** Add the page to the running local index (default from config `fetch.addToIndex`). */
  readonly addToIndex?: boolean
  /** Who asked (an API key's name): pages added to the index are counted per key. */
  readonly caller?: string | undefined
  /** Render the page in a headless browser (default from config `fetch.render`). */
  readonly render?: RenderMode
}

export interface FetchedPage {
  /** Final URL after redirects. */
  readonly url: string
  readonly title: string
  readonly content: string
  readonly fromCache: boolean
  /** Publication or modification date (ISO 8601) when the page or its headers give one. */
  readonly date: string | null
  /** The page's media type, e.g. text/html, application/pdf. */
  readonly contentType: string
  /** Whether the page went into the local index, when it was to be added. */
  readonly index?: PageIndexing | undefined
}

/**
 * A page could not be fetched. `reason` decides the HTTP status: invalid_url 400, refused 403,
 * unsupported_type 415, too_large 413, timeout 504, http_status 502 (with the site's `status`),
 * failed 502, render_unavailable 501 (rendering was asked for and this server has no browser),
 * busy 503 with Retry-After (too many pages being read at once). `message` is shown to the caller.
 */
export class WebFetchError extends Schema.TaggedError<WebFetchError>()("WebFetchError", {
  reason: Schema.Literals(["invalid_url", "refused", "timeout", "too_large", "unsupported_type", "http_status", "failed", "render_unavailable", "busy"]),
  url: Schema.String,
  message: Schema.String,
  /** The site's own status, for http_status. */
  status: Schema.optional(Schema.Number),
  /** For busy: seconds after which a retry is likely to be read (sent as Retry-After). */
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

export class WebFetch extends Context.Service<WebFetch, {
  readonly fetch: (request: FetchRequest) => Effect.Effect<FetchedPage, WebFetchError>
}>()("periscope/search/WebFetch") {}
