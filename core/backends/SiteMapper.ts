/**
 * A site's URLs for an agent (webFetch's map, as Firecrawl's and Tavily's map): the start page,
 * the pages its sitemaps list (robots.txt's Sitemap lines, else /sitemap.xml; nested indexes
 * followed), then the start page's links; only the start page's host, only URLs robots.txt
 * lets PeriscopeBot crawl, each once. Built from the crawler's parts: RobotsRules (Crawl-delay
 * kept through a HostGate), the sitemap and link readers (run as jobs), and every request
 * through the guarded PageFetcher with webFetch's address policy, redirects followed hop by hop.
 * Bounded by a count of URLs and a time: a map cut short by either is answered with what it
 * found and says which.
 */
import { Effect, Option } from "effect"
import { FetchFailure, type PageFetcher, type PageResponse } from "../ingest/crawl/PageFetcher.ts"
import { gunzipLimited, isGzip } from "../ingest/crawl/Gunzip.ts"
import { HostGate } from "../ingest/crawl/HostGate.ts"
import { RobotsRules } from "../ingest/crawl/RobotsRules.ts"
import { pageLinksJob, sitemapUrlsJob } from "../ingest/crawl/SiteUrls.ts"
import { formatBytes } from "../ingest/DocumentSource.ts"
import type { PageLimits } from "../ingest/PageLimits.ts"
import type { JobRunnerShape } from "../jobs/JobRunner.ts"
import { type SiteMap, WebFetchError } from "../search/WebFetch.ts"

/** The token robots.txt rules are matched against: the crawler's, so a site has one name to write rules for. */
export const MAP_ROBOTS_AGENT = "PeriscopeBot"
/** Sitemap files read for one map, nested ones included. */
export const MAX_SITEMAP_FILES = 20
const MAX_REDIRECTS = 5

const HTML_TYPE = /^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i
const SITEMAP_TYPE = /xml|gzip|text\/plain|octet-stream/i
const HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
const SITEMAP_ACCEPT = "application/xml,text/xml;q=0.9,*/*;q=0.5"

export interface MapSettings {
  /** Hosts exempt from the address check, or true for every address (fetch.allowHosts, fetch.allowPrivateAddresses). */
  readonly allow: boolean | ReadonlyArray<string>
  readonly userAgent: string
  /** One request, redirects aside. */
  readonly fetchTimeoutMs: number
  /** Of one body (a sitemap decompressed too). */
  readonly maxBytes: number
  /** URLs given at most (a request's limit is kept within it). */
  readonly maxUrls: number
  /** The whole map. */
  readonly timeoutMs: number
  readonly page: Pick<PageLimits, "maxHtmlDepth" | "maxHtmlElements">
}

type Body = Extract<PageResponse, { _tag: "Body" }>
/** A request robots.txt does not allow. */
interface Disallowed {
  readonly _tag: "Disallowed"
  readonly url: string
}

/** The crawler's wording of a refused address in the map's terms. */
const mapRefusal = (message: string) =>
  message.replace(/; allow it explicitly to crawl it$/, "; allow it in the config (fetch.allowHosts or fetch.allowPrivateAddresses) to map it")

const isBody = (outcome: Body | Disallowed | WebFetchError): outcome is Body => !(outcome instanceof WebFetchError) && outcome._tag === "Body"

export const makeSiteMapper = (fetcher: PageFetcher["Service"], jobs: JobRunnerShape, settings: MapSettings) =>
  (start: URL, limit: number | undefined): Effect.Effect<SiteMap, WebFetchError> =>
    Effect.suspend(() => {
      const maxUrls = Math.max(1, Math.min(limit ?? settings.maxUrls, settings.maxUrls))
      const deadline = Date.now() + settings.timeoutMs
      const left = () => Math.max(1, deadline - Date.now())
      // webFetch's address policy for every request, robots.txt's included, each within the map's time.
      const guarded: PageFetcher["Service"] = {
        fetch: (request) => fetcher.fetch({ ...request, allow: settings.allow, timeoutMs: Math.min(request.timeoutMs, left()) })
      }
      const delays = new Map<string, number>()
      const gate = new HostGate((host) => delays.get(host) ?? 0)
      const robots = new RobotsRules(MAP_ROBOTS_AGENT, { timeoutMs: settings.fetchTimeoutMs, maxBytes: settings.maxBytes, userAgent: settings.userAgent }, guarded, gate)

      const urls: Array<string> = []
      const seen = new Set<string>()
      let host = start.host
      let full = false

      /** Adds a URL of the site that robots.txt allows; false once the list is full. */
      const add = (url: string): Effect.Effect<boolean> =>
        Effect.suspend(() => {
          if (full) return Effect.succeed(false)
          let parsed: URL
          try {
            parsed = new URL(url)
          } catch {
            return Effect.succeed(true)
          }
          parsed.hash = ""
          if (parsed.host !== host || seen.has(parsed.href)) return Effect.succeed(true)
          seen.add(parsed.href)
          return Effect.map(robots.verdict(parsed.href), (verdict) => {
            if (!verdict.allowed) return true
            urls.push(parsed.href)
            if (urls.length >= maxUrls) full = true
            return !full
          })
        })
      const addAll = (list: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          for (const url of list) if (!(yield* add(url))) return
        })

      // Failures that end the map when the start page meets them: the host refused, robots.txt unreadable.
      const fatal = new WeakSet<WebFetchError>()
      const fatalError = (error: WebFetchError) => {
        fatal.add(error)
        return error
      }

      /** One request under robots.txt and its Crawl-delay. */
      const politeFetch = (url: string, accept: string, wanted: (status: number, contentType: string) => true | string) =>
        Effect.gen(function*() {
          const verdict = yield* robots.verdict(url)
          if (verdict.refused !== undefined) return fatalError(new WebFetchError({ reason: "refused", url, message: mapRefusal(verdict.refused) }))
          if (verdict.unreachable !== undefined) {
            return fatalError(new WebFetchError({ reason: "failed", url, message: `${verdict.unreachable}; a site whose robots.txt cannot be read is not mapped` }))
          }
          if (verdict.crawlDelayMs !== undefined) delays.set(new URL(url).host, verdict.crawlDelayMs)
          if (!verdict.allowed) return { _tag: "Disallowed", url } satisfies Disallowed
          return yield* gate.use(new URL(url).host, guarded.fetch({ url, accept, wanted, userAgent: settings.userAgent, timeoutMs: settings.fetchTimeoutMs, maxBytes: settings.maxBytes })).pipe(
            Effect.catchTag("FetchFailure", (failure: FetchFailure) => Effect.succeed(failureOf(failure)))
          )
        })

      /** `url` fetched, redirects followed (each hop under the policy and robots.txt): the body, a disallowed hop, or why not. */
      const follow = (url: string, accept: string, wanted: (status: number, contentType: string) => true | string): Effect.Effect<Body | Disallowed | WebFetchError> =>
        Effect.gen(function*() {
          let at = url
          for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
            const outcome = yield* politeFetch(at, accept, wanted)
            if (outcome instanceof WebFetchError || outcome._tag !== "Redirect") return outcome
            let next: URL
            try {
              next = new URL(outcome.location, at)
            } catch {
              return new WebFetchError({ reason: "failed", url, message: "the site redirected to an invalid URL" })
            }
            if (next.protocol !== "http:" && next.protocol !== "https:") {
              return fatalError(new WebFetchError({ reason: "refused", url, message: `the site redirected to a ${next.protocol} URL; only http(s) is fetched` }))
            }
            next.hash = ""
            at = next.href
          }
          return new WebFetchError({ reason: "failed", url, message: `more than ${MAX_REDIRECTS} redirects` })
        })

      /** A fetch failure in webFetch's terms (the map goes on past most of them). */
      const failureOf = (failure: FetchFailure): WebFetchError => {
        switch (failure.reason) {
          case "refused":
            return fatalError(new WebFetchError({ reason: "refused", url: failure.url, message: mapRefusal(failure.message) }))
          case "rejected":
            return failure.limit === "size"
              ? new WebFetchError({ reason: "too_large", url: failure.url, message: `the page is larger than the limit of ${formatBytes(settings.maxBytes)}` })
              : new WebFetchError({ reason: failure.message.startsWith("HTTP ") ? "http_status" : "unsupported_type", url: failure.url, message: failure.message.startsWith("HTTP ") ? `the site answered ${failure.message}` : failure.message })
          case "unsupported":
            return new WebFetchError({ reason: "unsupported_type", url: failure.url, message: failure.message })
          case "failed":
            return failure.limit === "time"
              ? new WebFetchError({ reason: "timeout", url: failure.url, message: `the site did not answer in time` })
              : new WebFetchError({ reason: "failed", url: failure.url, message: `the page could not be fetched: ${failure.message}` })
        }
      }

      /** The start page: its final URL sets the host; an HTML page gives its links. */
      const readStart = Effect.gen(function*() {
        let notHtml = false
        const outcome = yield* follow(start.href, HTML_ACCEPT, (status, contentType) => {
          if (status < 200 || status > 299) return `HTTP ${status}`
          if (contentType.trim() !== "" && !HTML_TYPE.test(contentType)) {
            notHtml = true
            return "not HTML"
          }
          return true
        })
        if (outcome instanceof WebFetchError && fatal.has(outcome)) return yield* outcome
        if (isBody(outcome)) {
          host = new URL(outcome.url).host
          yield* add(outcome.url)
          return { page: outcome, final: outcome.url, failure: undefined, disallowed: false }
        }
        // A page of another kind (a PDF) is a URL of the site, with no links to read.
        if (outcome instanceof WebFetchError && notHtml) {
          yield* add(outcome.url)
          return { page: undefined, final: outcome.url, failure: undefined, disallowed: false }
        }
        return { page: undefined, final: start.href, failure: outcome instanceof WebFetchError ? outcome : undefined, disallowed: !(outcome instanceof WebFetchError) }
      })

      const readSitemaps = (origin: string) =>
        Effect.gen(function*() {
          const listed = (yield* robots.verdict(`${origin}/`)).sitemaps
          const pending = listed.length > 0 ? [...listed] : [`${origin}/sitemap.xml`]
          const read = new Set<string>()
          while (pending.length > 0 && read.size < MAX_SITEMAP_FILES && !full) {
            const url = pending.shift()!
            if (read.has(url)) continue
            read.add(url)
            // A missing or unreadable sitemap leaves the map to the others and to the page's links.
            const fetched = yield* follow(url, SITEMAP_ACCEPT, (status, contentType) =>
              status < 200 || status > 299 ? `HTTP ${status}` : contentType.trim() !== "" && !SITEMAP_TYPE.test(contentType) ? "not a sitemap" : true)
            if (!isBody(fetched)) continue
            const bytes = isGzip(fetched.body) ? yield* Effect.option(gunzipLimited(fetched.body, settings.maxBytes)) : Option.some(fetched.body)
            if (Option.isNone(bytes)) continue
            const entries = yield* Effect.option(jobs.run(sitemapUrlsJob, { bytes: bytes.value, url: fetched.url }, { deadlineMs: left() }))
            if (Option.isNone(entries) || "error" in entries.value) continue
            yield* addAll(entries.value.pages)
            pending.push(...entries.value.sitemaps)
          }
        })

      const links = (page: Body) =>
        Effect.gen(function*() {
          const found = yield* Effect.option(jobs.run(pageLinksJob, { bytes: page.body, contentType: page.contentType, url: page.url, limits: settings.page }, { deadlineMs: left() }))
          if (Option.isSome(found) && "links" in found.value) yield* addAll(found.value.links)
        })

      let started: { readonly final: string; readonly failure: WebFetchError | undefined; readonly disallowed: boolean } | undefined
      const work = Effect.gen(function*() {
        const first = yield* readStart
        started = first
        yield* readSitemaps(new URL(first.final).origin)
        if (first.page !== undefined && !full) yield* links(first.page)
      })

      return Effect.flatMap(Effect.timeoutOption(work, settings.timeoutMs), (done): Effect.Effect<SiteMap, WebFetchError> => {
        const truncated = full ? "limit" : Option.isNone(done) ? "time" : null
        if (urls.length === 0) {
          if (truncated === "time") {
            return Effect.fail(new WebFetchError({ reason: "timeout", url: start.href, message: `no URL of the site was found within ${settings.timeoutMs} ms (fetch.mapTimeoutMs)` }))
          }
          if (started?.failure !== undefined) return Effect.fail(started.failure)
          if (started?.disallowed === true) {
            return Effect.fail(new WebFetchError({ reason: "refused", url: start.href, message: `robots.txt does not let ${MAP_ROBOTS_AGENT} read this page, and no sitemap lists a page it may` }))
          }
        }
        return Effect.succeed({ url: started?.final ?? start.href, urls, truncated })
      })
    })
