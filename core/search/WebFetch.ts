/**
 * Web fetch: one page's URL in, its main content out (Markdown by default), or the chunks of it
 * most relevant to a query; many pages at once; a site's URLs. The fetch goes through the
 * guarded PageFetcher (address policy on every hop), a page cache with single-flight, and the
 * ingestion extractor. Backends are Layers that provide it.
 */
import { Context, type Effect, type Result, Schema } from "effect"
import type { PageChunk } from "./PageChunks.ts"
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
  /** Content cut to at most this many characters; with `query`, the chunks joined within it. */
  readonly maxChars?: number
  /** Content cut to at most this many tokens (o200k_base); with `query`, the chunks joined within it. */
  readonly maxTokens?: number
  /** Give the chunks of the page most relevant to this query (format markdown or text), in page order, as `chunks`. */
  readonly query?: string
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
  /** With a query: the chunks chosen, each with its heading path; `content` is their texts joined. */
  readonly chunks?: ReadonlyArray<PageChunk> | undefined
}

/** Many pages read with the same options: `urls` in place of `url`. */
export interface FetchManyRequest extends Omit<FetchRequest, "url"> {
  readonly urls: ReadonlyArray<string>
  /** Every page done by then, or answered as a timeout (default: the fetch's own time limit). */
  readonly deadlineMs?: number | undefined
}

/** A site to map: its URLs from its sitemaps and the links of this page. */
export interface MapRequest {
  readonly url: string
  /** URLs at most (the server's own bound when larger or absent). */
  readonly limit?: number | undefined
}

export interface SiteMap {
  /** The page the map started from, after redirects. */
  readonly url: string
  /** The site's URLs, each once: the start page, its sitemaps' pages, then the start page's links. */
  readonly urls: ReadonlyArray<string>
  /** Why the list may be incomplete: the limit on URLs, or the time the map may take; null when it is not. */
  readonly truncated: "limit" | "time" | null
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

/** One URL's outcome in a many-URL fetch: its page, or why it was not read. */
export type FetchOutcome = Result.Result<FetchedPage, WebFetchError>

export class WebFetch extends Context.Service<WebFetch, {
  readonly fetch: (request: FetchRequest) => Effect.Effect<FetchedPage, WebFetchError>
  /** Each URL read as `fetch` reads it, at once within a per-host limit; the outcomes in the order of `urls`. */
  readonly fetchMany: (request: FetchManyRequest) => Effect.Effect<ReadonlyArray<FetchOutcome>>
  /** The site's URLs, same host, robots.txt honoured, within bounds on their count and the time taken. */
  readonly mapSite: (request: MapRequest) => Effect.Effect<SiteMap, WebFetchError>
}>()("periscope/search/WebFetch") {}
