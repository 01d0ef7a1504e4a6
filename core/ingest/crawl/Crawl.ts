/**
 * A polite crawler as a document source. Starts from a URL list and/or
 * sitemaps and follows links breadth-first:
 *
 * - robots.txt is honoured (RobotsRules), including Crawl-delay, and pages
 *   marked `noindex` are not indexed (`nofollow` links are not followed);
 * - one request at a time per host with a pause between them (HostGate, on
 *   Effect's Clock), and at most `concurrency` requests overall (that many workers);
 * - at most `maxPages` pages and `maxDepth` link hops from a seed;
 * - same-site scope by default (the registrable domain of a seed, so
 *   docs.example.com and www.example.com are one site);
 * - redirects followed up to `maxRedirects`, with loops detected, each hop
 *   checked for scope and robots.txt;
 * - non-HTML answers skipped before their body is read, a byte and a time
 *   limit per page (PageFetcher, which also refuses private addresses); a
 *   body that is not HTML after all (an image served as text/html) is an error;
 * - generated index pages (genindex, index-all, ...) not indexed, their links
 *   followed; a page stating no date dated by its sitemap <lastmod>, else
 *   its Last-Modified header (FallbackDate).
 *
 * The crawl is an Effect stream: interrupting its consumer interrupts every
 * worker and every request in flight.
 */
import { Clock, Deferred, Effect, Queue, Stream } from "effect"
import { getDomain } from "tldts"
import { type DocumentSource, documentItem, type SourceItem } from "../DocumentSource.ts"
import { decodeHtml } from "../HtmlBytes.ts"
import { withFallbackDate } from "../FallbackDate.ts"
import { generatedPageKind, generatedPageReason } from "../GeneratedPage.ts"
import { extractPage } from "../HtmlDocument.ts"
import { notHtml } from "../NotHtml.ts"
import { parseSitemap } from "../Sitemap.ts"
import { credentialsRefusal } from "./AddressPolicy.ts"
import { gunzipLimited, isGzip } from "./Gunzip.ts"
import { HostGate } from "./HostGate.ts"
import type { BodyGate, PageFetcher, PageResponse } from "./PageFetcher.ts"
import { RobotsRules } from "./RobotsRules.ts"

export interface CrawlOptions {
  /** Pages to start from (depth 0). */
  readonly seeds?: ReadonlyArray<string> | undefined
  /** Sitemaps (or sitemap indexes) whose pages are added as seeds. */
  readonly sitemaps?: ReadonlyArray<string> | undefined
  readonly maxPages?: number | undefined
  readonly maxDepth?: number | undefined
  readonly concurrency?: number | undefined
  /** Pause between two requests to one host, in ms; robots.txt Crawl-delay may raise it. */
  readonly delayMs?: number | undefined
  readonly timeoutMs?: number | undefined
  readonly maxBytes?: number | undefined
  readonly maxRedirects?: number | undefined
  /** Follow links to other sites too (default: stay on the seeds' sites). */
  readonly anySite?: boolean | undefined
  readonly userAgent?: string | undefined
  /** Index generated index pages (genindex, index-all, ...) too; left out by default. */
  readonly keepGenerated?: boolean | undefined
}

export const CRAWL_DEFAULTS = {
  maxPages: 1000,
  maxDepth: 3,
  concurrency: 4,
  delayMs: 1000,
  timeoutMs: 20_000,
  maxBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  userAgent: "PeriscopeBot/0.1 (+https://www.npmjs.com/package/periscope)"
} as const

// Product token matched against robots.txt User-agent lines.
const ROBOTS_AGENT = "PeriscopeBot"
const MAX_SITEMAP_FILES = 50
const HTML_TYPE = /^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i
const SITEMAP_TYPE = /xml|gzip|text\/plain|octet-stream/i
const HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
const SITEMAP_ACCEPT = "application/xml,text/xml;q=0.9,*/*;q=0.5"

/** The site a URL belongs to: its registrable domain, or the bare host for IPs and single labels. */
export const siteOf = (url: string): string => {
  const host = new URL(url).hostname
  return getDomain(host, { allowPrivateDomains: true }) ?? host
}

const hostOf = (url: string) => new URL(url).host

const looksLikeHtml = (body: Uint8Array) =>
  /<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]/i.test(new TextDecoder("latin1").decode(body.subarray(0, 1024)))

const htmlGate: BodyGate = (status, contentType) => {
  if (status < 200 || status >= 300) return `HTTP ${status}`
  if (contentType.trim() !== "" && !HTML_TYPE.test(contentType)) return `not HTML (${contentType.split(";")[0]!.trim()})`
  return true
}

const sitemapGate: BodyGate = (status, contentType) => {
  if (status < 200 || status >= 300) return `HTTP ${status}`
  if (contentType.trim() !== "" && !SITEMAP_TYPE.test(contentType)) return `not a sitemap (${contentType.split(";")[0]!.trim()})`
  return true
}

interface Entry {
  readonly url: string
  readonly depth: number
}

type Body = Extract<PageResponse, { _tag: "Body" }>

const describeCrawl = (seeds: ReadonlyArray<string>, sitemaps: ReadonlyArray<string>) =>
  [
    seeds.length > 0 ? `crawl of ${seeds.length === 1 ? seeds[0] : `${seeds.length} URLs`}` : "",
    sitemaps.length > 0 ? `sitemap ${sitemaps.join(", ")}` : ""
  ].filter((s) => s !== "").join(" + ")

/** The crawl as a source; each run of `items` is a fresh crawl. */
export const crawlSource = (options: CrawlOptions, fetcher: PageFetcher["Service"]): DocumentSource => ({
  describe: describeCrawl(options.seeds ?? [], options.sitemaps ?? []),
  // An upper bound: pages that are skipped or fail also count toward maxPages.
  estimate: Effect.succeed(options.maxPages ?? CRAWL_DEFAULTS.maxPages),
  items: Stream.callback<SourceItem>((queue) =>
    crawl(options, fetcher, (item) => Queue.offer(queue, item)).pipe(Effect.andThen(Queue.end(queue)))
  )
})

/** Runs a crawl, handing each item to `emit`; ends when the frontier is empty or maxPages is reached. */
export const crawl = (
  options: CrawlOptions,
  fetcher: PageFetcher["Service"],
  emit: (item: SourceItem) => Effect.Effect<unknown>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const seeds = options.seeds ?? []
    const sitemaps = options.sitemaps ?? []
    const maxPages = options.maxPages ?? CRAWL_DEFAULTS.maxPages
    const maxDepth = options.maxDepth ?? CRAWL_DEFAULTS.maxDepth
    const concurrency = Math.max(1, options.concurrency ?? CRAWL_DEFAULTS.concurrency)
    const delayMs = options.delayMs ?? CRAWL_DEFAULTS.delayMs
    const maxRedirects = options.maxRedirects ?? CRAWL_DEFAULTS.maxRedirects
    const limits = {
      timeoutMs: options.timeoutMs ?? CRAWL_DEFAULTS.timeoutMs,
      maxBytes: options.maxBytes ?? CRAWL_DEFAULTS.maxBytes,
      userAgent: options.userAgent ?? CRAWL_DEFAULTS.userAgent
    }

    // Workers waiting for a host's turn or for new links wait on this; any change completes it.
    let changed = Deferred.makeUnsafe<void>()
    const wakeScheduler = () => {
      const done = changed
      changed = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(done, Effect.void)
    }
    const crawlDelays = new Map<string, number>()
    const gate = new HostGate((host) => Math.max(delayMs, crawlDelays.get(host) ?? 0), wakeScheduler)
    const robots = new RobotsRules(ROBOTS_AGENT, limits, fetcher, gate)

    const frontier: Array<Entry> = []
    // Sitemap <lastmod> by page URL, a date for pages that state none.
    const lastmod = new Map<string, string>()
    const seen = new Set<string>()
    const sites = new Set<string>()
    let started = 0
    let active = 0

    const inScope = (url: string) => options.anySite === true || sites.has(siteOf(url))
    const enqueue = (url: string, depth: number) => {
      if (seen.has(url) || depth > maxDepth || !inScope(url)) return
      seen.add(url)
      frontier.push({ url, depth })
      wakeScheduler()
    }

    /** One request under robots.txt and politeness; a SourceItem when there is no response to read. */
    const politeFetch = (url: string, wanted: BodyGate, accept: string): Effect.Effect<PageResponse | SourceItem> =>
      Effect.gen(function*() {
        const verdict = yield* robots.verdict(url)
        if (verdict.refused !== undefined) return { _tag: "Skipped", origin: url, reason: `refused: ${verdict.refused}` } as const
        // A host whose robots.txt cannot be read is not crawled (RFC 9309); its pages are errors, so the run reports them.
        if (verdict.unreachable !== undefined) return { _tag: "Failed", origin: url, message: verdict.unreachable } as const
        if (verdict.crawlDelayMs !== undefined) crawlDelays.set(hostOf(url), verdict.crawlDelayMs)
        if (!verdict.allowed) return { _tag: "Skipped", origin: url, reason: verdict.blocked ?? "disallowed by robots.txt" } as const
        return yield* gate.use(hostOf(url), fetcher.fetch({ url, accept, wanted, ...limits })).pipe(
          Effect.catchTag("FetchFailure", (failure): Effect.Effect<SourceItem> =>
            Effect.succeed(
              failure.reason === "failed"
                ? { _tag: "Failed", origin: url, message: failure.message }
                : { _tag: "Skipped", origin: url, reason: failure.reason === "refused" ? `refused: ${failure.message}` : failure.message }
            ))
        )
      })

    /** Fetches `start`, following redirects; the final body or the item that ends it. */
    const fetchFollowing = (start: string, wanted: BodyGate, accept: string): Effect.Effect<Body | SourceItem> =>
      Effect.gen(function*() {
        const chain = [start]
        let url = start
        for (;;) {
          const outcome = yield* politeFetch(url, wanted, accept)
          if (outcome._tag !== "Redirect") return outcome
          let next: string
          try {
            const target = new URL(outcome.location, url)
            // Named here, before the fetcher refuses it: the hop's URL would carry the credentials into the summary.
            if (credentialsRefusal(target) !== undefined) return { _tag: "Skipped", origin: start, reason: "redirected to a URL with credentials" } as const
            target.hash = ""
            next = target.href
          } catch {
            return { _tag: "Failed", origin: start, message: `redirect to an invalid URL ${JSON.stringify(outcome.location)}` } as const
          }
          if (chain.includes(next)) {
            return { _tag: "Failed", origin: start, message: `redirect loop: ${[...chain, next].join(" -> ")}` } as const
          }
          if (chain.length > maxRedirects) return { _tag: "Failed", origin: start, message: `more than ${maxRedirects} redirects` } as const
          if (!next.startsWith("http:") && !next.startsWith("https:")) {
            return { _tag: "Skipped", origin: start, reason: "redirected to a non-http URL" } as const
          }
          if (!inScope(next)) return { _tag: "Skipped", origin: start, reason: "redirected off-site" } as const
          chain.push(next)
          url = next
        }
      })

    const crawlPage = (entry: Entry): Effect.Effect<SourceItem> =>
      Effect.map(fetchFollowing(entry.url, htmlGate, HTML_ACCEPT), (fetched): SourceItem => {
        if (fetched._tag !== "Body") return fetched
        const { body, url, contentType } = fetched
        if (contentType.trim() === "" && !looksLikeHtml(body)) return { _tag: "Skipped", origin: url, reason: "not HTML (no Content-Type)" }
        // A redirect target may be a page the crawl reaches by another path: fetched once only.
        if (url !== entry.url) {
          if (seen.has(url)) return { _tag: "Skipped", origin: entry.url, reason: "redirect to a page already crawled" }
          seen.add(url)
        }
        const binary = notHtml(body, contentType)
        if (binary !== undefined) return { _tag: "Failed", origin: url, message: binary }
        const page = extractPage(decodeHtml(body, contentType), url)
        if (entry.depth < maxDepth) for (const link of page.links) enqueue(link, entry.depth + 1)
        if (page.robots.noindex) return { _tag: "Skipped", origin: url, reason: "noindex" }
        const generated = options.keepGenerated === true ? undefined : generatedPageKind(url)
        if (generated !== undefined) return { _tag: "Skipped", origin: url, reason: generatedPageReason(generated) }
        return documentItem(url, withFallbackDate(page.document, [lastmod.get(entry.url) ?? lastmod.get(url), fetched.lastModified]))
      })

    const readSitemaps = Effect.gen(function*() {
      const pending = [...sitemaps]
      for (let read = 0; pending.length > 0 && read < MAX_SITEMAP_FILES; read++) {
        const sitemapUrl = pending.shift()!
        const fetched = yield* fetchFollowing(sitemapUrl, sitemapGate, SITEMAP_ACCEPT)
        if (fetched._tag !== "Body") {
          yield* emit(fetched)
          continue
        }
        let bytes = fetched.body
        if (isGzip(bytes)) {
          const unzipped = yield* Effect.result(gunzipLimited(bytes, limits.maxBytes * 10))
          if (unzipped._tag === "Failure") {
            yield* emit({ _tag: "Failed", origin: sitemapUrl, message: `sitemap: ${unzipped.failure}` })
            continue
          }
          bytes = unzipped.success
        }
        const entries = parseSitemap(new TextDecoder().decode(bytes), fetched.url)
        if ("error" in entries) {
          yield* emit({ _tag: "Failed", origin: sitemapUrl, message: `sitemap: ${entries.error}` })
          continue
        }
        pending.push(...entries.sitemaps)
        for (const [page, changed] of entries.lastmod) lastmod.set(page, changed)
        for (const page of entries.pages) enqueue(page, 0)
      }
    })

    /** The next entry whose host may be fetched now; undefined when the crawl is over. */
    const next: Effect.Effect<Entry | undefined> = Effect.gen(function*() {
      for (;;) {
        if (started >= maxPages) return undefined
        const now = yield* Clock.currentTimeMillis
        let soonest = Number.POSITIVE_INFINITY
        for (let i = 0; i < frontier.length; i++) {
          const readyAt = gate.readyAt(hostOf(frontier[i]!.url))
          if (readyAt <= now) {
            // Counted as active at once: another worker asking "anything left?" must see it.
            started++
            active++
            return frontier.splice(i, 1)[0]
          }
          soonest = Math.min(soonest, readyAt)
        }
        if (frontier.length === 0 && active === 0) return undefined
        const wake = Deferred.await(changed)
        yield* soonest === Number.POSITIVE_INFINITY ? wake : Effect.raceFirst(wake, Effect.sleep(soonest - now))
      }
    })

    const worker: Effect.Effect<void> = Effect.gen(function*() {
      for (let entry = yield* next; entry !== undefined; entry = yield* next) {
        const item = yield* crawlPage(entry).pipe(
          Effect.catchDefect((defect) =>
            Effect.succeed<SourceItem>({ _tag: "Failed", origin: entry!.url, message: defect instanceof Error ? defect.message : String(defect) })),
          Effect.ensuring(Effect.sync(() => {
            active--
            wakeScheduler()
          }))
        )
        yield* emit(item)
      }
    })

    for (const url of [...seeds, ...sitemaps]) {
      try {
        sites.add(siteOf(url))
      } catch {
        yield* emit({ _tag: "Failed", origin: url, message: "not a valid URL" })
      }
    }
    // Seeds first, then sitemap pages; workers start once the frontier is known.
    for (const url of seeds) {
      try {
        const parsed = new URL(url)
        parsed.hash = ""
        enqueue(parsed.href, 0)
      } catch {
        // reported above
      }
    }
    yield* readSitemaps
    yield* Effect.forEach(Array.from({ length: concurrency }), () => worker, { concurrency: "unbounded", discard: true })
  })
