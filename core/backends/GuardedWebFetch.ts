/**
 * WebFetch over the guarded PageFetcher: the caller's URL (http or https only), then each
 * redirect (at most 5), every hop judged by the one address policy (core/ingest/crawl/
 * AddressPolicy.ts: the Node fetcher checks the resolved address and connects to it), under
 * the size and time limits of the `fetch` config; the body read by ReadablePage as a job
 * (core/jobs/JobRunner.ts: off the answering thread, ended at the fetch's deadline, within
 * the page limits); then rendered in a browser when asked, or when auto finds an app shell
 * (RenderStep.ts); answers kept in the PageCache with single-flight. Errors say which limit
 * or rule ended a fetch. With a query, the page's most relevant chunks (FocusedReading); many
 * URLs at once within a per-host limit (FetchMany); a site's URLs (SiteMapper).
 */
import { Effect, Layer, Option } from "effect"
import { FetchFailure, PageFetcher, type PageResponse } from "../ingest/crawl/PageFetcher.ts"
import { PageRenderer } from "../ingest/crawl/PageRenderer.ts"
import { formatBytes } from "../ingest/DocumentSource.ts"
import { DEFAULT_PAGE_LIMITS, type PageLimit, type PageLimits } from "../ingest/PageLimits.ts"
import { mediaKindOf, type ReadableFormat, type ReadOutcome, readPageJob } from "../ingest/ReadablePage.ts"
import { type JobError, JobRunner } from "../jobs/JobRunner.ts"
import { fetchMany } from "../search/FetchMany.ts"
import { contentWithinTokens, focusedReading } from "../search/FocusedReading.ts"
import { type FetchedPage, type FetchRequest, type RenderMode, WebFetch, WebFetchError } from "../search/WebFetch.ts"
import { type CachedPage, PageCache } from "../store/PageCache.ts"
import { type IndexPage, pageIndexer } from "./PageIndexer.ts"
import { renderStep } from "./RenderStep.ts"
import { makeSiteMapper } from "./SiteMapper.ts"

export const MAX_REDIRECTS = 5

/** A page longer than this (content and text, in characters) is not kept in the cache: 500 such pages are 1 GB. */
export const MAX_CACHED_CHARS = 1_000_000

/** What webFetch runs with (from the config file's `fetch` section: core/config/FetchConfig.ts). */
export interface FetchSettings {
  /** Hosts exempt from the address check, or true for every address. */
  readonly allow: boolean | ReadonlyArray<string>
  /** For the whole fetch, redirects included. */
  readonly timeoutMs: number
  /** Of the decoded body. */
  readonly maxBytes: number
  readonly cacheTtlMs: number
  readonly cacheMaxEntries: number
  readonly addToIndex: boolean
  readonly userAgent: string
  /** Bounds on a page's structure (nesting, elements, PDF streams and pages); DEFAULT_PAGE_LIMITS if absent. */
  readonly page?: PageLimits | undefined
  /** How a page is read when the request does not say (RenderStep.ts); never when absent. */
  readonly render?: RenderMode | undefined
  /** Pages of one host read at once for one request of many URLs; DEFAULT_PER_HOST if absent. */
  readonly perHost?: number | undefined
  /** URLs a site's map gives at most; DEFAULT_MAP_MAX_URLS if absent. */
  readonly mapMaxUrls?: number | undefined
  /** A site's map, all of it; DEFAULT_MAP_TIMEOUT_MS if absent. */
  readonly mapTimeoutMs?: number | undefined
}

export const DEFAULT_PER_HOST = 4
export const DEFAULT_MAP_MAX_URLS = 5000
export const DEFAULT_MAP_TIMEOUT_MS = 30_000

/** Reading a body may take this long past the fetch's own deadline (a large PDF that arrived late). */
const READ_GRACE_MS = 1000

const ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,application/json;q=0.8,*/*;q=0.5"

/** The request's URL, if it is an absolute http(s) URL; the fragment goes (it is never sent). */
export const fetchableUrl = (input: string): URL | WebFetchError => {
  let url: URL
  try {
    url = new URL(input.trim())
  } catch {
    return new WebFetchError({ reason: "invalid_url", url: input, message: "url: must be an absolute http(s) URL" })
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return new WebFetchError({ reason: "invalid_url", url: input, message: `url: must be an http(s) URL, got a ${url.protocol} URL` })
  }
  if (url.username !== "" || url.password !== "") {
    return new WebFetchError({ reason: "invalid_url", url: input, message: "url: must not carry credentials" })
  }
  url.hash = ""
  return url
}

/** The crawler's wording ("allow it explicitly to crawl it") in webFetch's terms. */
const refusalMessage = (message: string) =>
  message.replace(/; allow it explicitly to crawl it$/, "; allow it in the config (fetch.allowHosts or fetch.allowPrivateAddresses) to fetch it")

/** Why a page beyond a limit is refused, naming the setting. */
const refusalOf = (outcome: Extract<ReadOutcome, { _tag: "Refused" }>): string => {
  const setting = (limit: PageLimit) => `fetch.${limit}`
  switch (outcome.limit) {
    case "maxHtmlDepth":
      return `the page nests elements more than ${outcome.max} deep, the limit (${setting(outcome.limit)})`
    case "maxHtmlElements":
      return `the page has more than ${outcome.max} elements, the limit (${setting(outcome.limit)})`
    case "maxPdfDecodedBytes":
      return `the PDF's compressed streams inflate to more than ${formatBytes(outcome.max)}, the limit (${setting(outcome.limit)})`
    case "maxPdfPages":
      return `the PDF has ${outcome.found ?? "more"} pages, more than the limit of ${outcome.max} (${setting(outcome.limit)})`
  }
}

/** An HTTP date (Last-Modified) as YYYY-MM-DD, or null. */
const httpDate = (value: string | undefined): string | null => {
  if (value === undefined) return null
  const time = Date.parse(value)
  return Number.isNaN(time) ? null : new Date(time).toISOString().slice(0, 10)
}

const make = Effect.gen(function*() {
  const fetcher = yield* PageFetcher
  const cache = yield* PageCache
  const jobs = yield* JobRunner
  // The reader's code loaded on every worker now, not by the first page's request.
  yield* jobs.prepare([readPageJob])
  // The platform's browser, where it has one (the Node server).
  const renderer = Option.getOrUndefined(yield* Effect.serviceOption(PageRenderer))
  return (settings: FetchSettings, indexPage?: IndexPage) => {
    const rendering = renderStep(renderer, settings)
    const pageLimits = settings.page ?? DEFAULT_PAGE_LIMITS

    /** A job that did not finish, as webFetch's error. */
    const readFailure = (url: string) => (error: JobError): WebFetchError => {
      switch (error.reason) {
        case "timeout":
          return new WebFetchError({ reason: "timeout", url, message: `the page was not read within ${settings.timeoutMs} ms` })
        case "memory":
          return new WebFetchError({
            reason: "too_large",
            url,
            message: `reading the page took more than the memory limit of ${jobs.limits.memoryMb} MB (jobs.memoryMb)`
          })
        case "busy":
          return new WebFetchError({
            reason: "busy",
            url,
            message: `the server is reading as many pages as it may at once; retry in ${error.retryAfterSeconds ?? 1} s`,
            retryAfterSeconds: error.retryAfterSeconds ?? 1
          })
        case "crashed":
        case "failed":
          return new WebFetchError({ reason: "failed", url, message: `the document could not be read: ${error.message}` })
      }
    }

    /** The body read on the job runner, by the fetch's deadline (epoch ms) and a little grace. */
    const readBody = (body: Uint8Array, contentType: string, url: string, format: ReadableFormat, deadline: number) =>
      jobs.run(readPageJob, { bytes: body, contentType, url, format, limits: pageLimits }, {
        deadlineMs: Math.max(1, deadline + READ_GRACE_MS - Date.now())
      }).pipe(
        Effect.mapError(readFailure(url)),
        Effect.flatMap((outcome) => {
          switch (outcome._tag) {
            case "Read":
              return Effect.succeed(outcome.page)
            case "NotReadable":
              return Effect.fail(new WebFetchError({ reason: "unsupported_type", url, message: "the body is binary data, not HTML, PDF, text or JSON" }))
            case "Refused":
              return Effect.fail(new WebFetchError({ reason: "too_large", url, message: refusalOf(outcome) }))
          }
        })
      )
    /** One exchange; the body gate remembers why it turned a response away. */
    const exchange = (url: string, timeoutMs: number): Effect.Effect<PageResponse, WebFetchError> => {
      let turnedAway: WebFetchError | undefined
      return fetcher.fetch({
        url,
        accept: ACCEPT,
        userAgent: settings.userAgent,
        timeoutMs,
        maxBytes: settings.maxBytes,
        allow: settings.allow,
        wanted: (status, contentType) => {
          if (status < 200 || status > 299) {
            turnedAway = new WebFetchError({ reason: "http_status", url, status, message: `the site answered HTTP ${status}` })
            return `HTTP ${status}`
          }
          if (mediaKindOf(contentType) === undefined) {
            turnedAway = new WebFetchError({
              reason: "unsupported_type",
              url,
              message: `content type ${JSON.stringify(contentType.slice(0, 100))} cannot be read; HTML, PDF, text and JSON can`
            })
            return "unsupported type"
          }
          return true
        }
      }).pipe(Effect.mapError((failure: FetchFailure) => {
        if (turnedAway !== undefined) return turnedAway
        switch (failure.reason) {
          case "refused":
            return new WebFetchError({ reason: "refused", url, message: refusalMessage(failure.message) })
          case "rejected":
            return failure.limit === "size"
              ? new WebFetchError({ reason: "too_large", url, message: `the page is larger than the limit of ${formatBytes(settings.maxBytes)}` })
              : new WebFetchError({ reason: "failed", url, message: failure.message })
          case "unsupported":
            return new WebFetchError({ reason: "unsupported_type", url, message: failure.message })
          case "failed":
            return failure.limit === "time"
              ? new WebFetchError({ reason: "timeout", url, message: `the site did not answer within ${settings.timeoutMs} ms` })
              : new WebFetchError({ reason: "failed", url, message: `the page could not be fetched: ${failure.message}` })
        }
      }))
    }

    /** Follows redirects itself, so that every hop goes through the address policy again. */
    const fetchPage = (start: URL, format: ReadableFormat, mode: RenderMode): Effect.Effect<CachedPage, WebFetchError> =>
      Effect.gen(function*() {
        const deadline = Date.now() + settings.timeoutMs
        let url = start.href
        for (let hop = 0; ; hop++) {
          const response = yield* exchange(url, Math.max(1, deadline - Date.now()))
          if (response._tag === "Redirect") {
            if (hop === MAX_REDIRECTS) {
              return yield* new WebFetchError({ reason: "failed", url: start.href, message: `more than ${MAX_REDIRECTS} redirects` })
            }
            let next: URL
            try {
              next = new URL(response.location, url)
            } catch {
              return yield* new WebFetchError({ reason: "failed", url, message: `the site redirected to an invalid URL` })
            }
            if (next.protocol !== "http:" && next.protocol !== "https:") {
              return yield* new WebFetchError({ reason: "refused", url, message: `the site redirected to a ${next.protocol} URL; only http(s) is fetched` })
            }
            next.hash = ""
            url = next.href
            continue
          }
          const body = response
          const page = yield* readBody(body.body, body.contentType, url, format, deadline)
          const read = { url, title: page.title, content: page.content, text: page.text, date: page.date ?? httpDate(body.lastModified), contentType: page.contentType }
          return yield* rendering.after(mode, { url, body: body.body, contentType: body.contentType, page: read }, deadline, (html, type, at) => readBody(html, type, at, format, deadline))
        }
      }).pipe(
        // The exchanges and the read have their deadlines; this one bounds the whole.
        Effect.timeoutOrElse({
          duration: settings.timeoutMs + READ_GRACE_MS,
          orElse: () => Effect.fail(new WebFetchError({ reason: "timeout", url: start.href, message: `the page was not read within ${settings.timeoutMs} ms` }))
        })
      )

    const fetchOne = Effect.fn("WebFetch.fetch")(function*(request: FetchRequest) {
      const url = fetchableUrl(request.url)
      if (url instanceof WebFetchError) return yield* url
      // A query's chunks come from the page's Markdown (its headings give their paths), whatever format they are given in.
      const format = request.query === undefined ? request.format ?? "markdown" : "markdown"
      const mode = request.render ?? settings.render ?? "never"
      const { page, fromCache } = yield* cache.get(`${format}${rendering.key(mode)} ${url.href}`, fetchPage(url, format, mode), { fresh: request.fresh === true })
      const index = indexPage !== undefined && (request.addToIndex ?? settings.addToIndex) ? yield* indexPage(page, request.caller) : undefined
      const fields = { url: page.url, title: page.title, fromCache, date: page.date, contentType: page.contentType, index }
      if (request.query !== undefined) {
        const focused = yield* focusedReading(jobs, page.content, {
          query: request.query,
          maxChars: request.maxChars,
          maxTokens: request.maxTokens,
          plain: request.format === "text",
          deadlineMs: () => settings.timeoutMs
        }).pipe(Effect.mapError(readFailure(url.href)))
        return { ...fields, content: focused.content, chunks: focused.chunks } satisfies FetchedPage
      }
      const content = request.maxChars === undefined || page.content.length <= request.maxChars
        ? page.content
        : page.content.slice(0, request.maxChars)
      return { ...fields, content: request.maxTokens === undefined ? content : yield* contentWithinTokens(content, request.maxTokens) } satisfies FetchedPage
    })

    const mapper = makeSiteMapper(fetcher, jobs, {
      allow: settings.allow,
      userAgent: settings.userAgent,
      fetchTimeoutMs: settings.timeoutMs,
      maxBytes: settings.maxBytes,
      maxUrls: settings.mapMaxUrls ?? DEFAULT_MAP_MAX_URLS,
      timeoutMs: settings.mapTimeoutMs ?? DEFAULT_MAP_TIMEOUT_MS,
      page: pageLimits
    })

    return WebFetch.of({
      fetch: fetchOne,
      fetchMany: ({ urls, deadlineMs, ...options }) =>
        fetchMany(fetchOne, urls.map((url) => ({ ...options, url })), {
          perHost: settings.perHost ?? DEFAULT_PER_HOST,
          deadlineMs: deadlineMs ?? settings.timeoutMs + READ_GRACE_MS,
          perHostSetting: "fetch.perHostConcurrency"
        }),
      mapSite: (request) => {
        const url = fetchableUrl(request.url)
        return url instanceof WebFetchError ? Effect.fail(url) : mapper(url, request.limit)
      }
    })
  }
})

export const GuardedWebFetch = {
  /**
   * WebFetch with these settings over the platform's PageFetcher and a PageCache. When the
   * search backend's SearchEngine is in the context (provide the search layer), pages asked to
   * be added to the index go to it (PageIndexer); otherwise `addToIndex` has nothing to add to.
   */
  layer: (settings: FetchSettings): Layer.Layer<WebFetch, never, PageFetcher | PageCache | JobRunner> =>
    Layer.effect(WebFetch, Effect.gen(function*() {
      const build = yield* make
      return build(settings, yield* pageIndexer)
    })),

  /** The PageCache the settings ask for (none when its size or time-to-live is 0). */
  cacheLayer: (settings: FetchSettings): Layer.Layer<PageCache> =>
    settings.cacheMaxEntries === 0 || settings.cacheTtlMs === 0
      ? PageCache.layerNone
      : PageCache.layer({ capacity: settings.cacheMaxEntries, ttlMs: settings.cacheTtlMs, maxEntryChars: MAX_CACHED_CHARS })
}
