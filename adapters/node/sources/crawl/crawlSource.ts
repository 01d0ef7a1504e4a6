/**
 * A polite crawler as a document source. Starts from a URL list and/or
 * sitemaps and follows links breadth-first:
 *
 * - robots.txt is honoured (RobotsRules), including Crawl-delay, and pages
 *   marked `noindex` are not indexed (`nofollow` links are not followed);
 * - one request at a time per host with a pause between them (HostGate), and
 *   at most `concurrency` requests overall;
 * - at most `maxPages` pages and `maxDepth` link hops from a seed;
 * - same-site scope by default (the registrable domain of a seed, so
 *   docs.example.com and www.example.com are one site);
 * - redirects followed up to `maxRedirects`, with loops detected, each hop
 *   checked for scope, robots.txt and address;
 * - non-HTML answers skipped before their body is read, a byte and a time
 *   limit per page;
 * - private, loopback and link-local addresses refused unless allowed
 *   (AddressGuard).
 */
import { getDomain } from "tldts"
import { decodeHtml } from "../../../../core/ingest/HtmlBytes.ts"
import { extractPage } from "../../../../core/ingest/HtmlDocument.ts"
import { parseSitemap } from "../../../../core/ingest/Sitemap.ts"
import { gunzipSync } from "node:zlib"
import { type DocumentSource, documentItem, type SourceItem } from "../SourceItem.ts"
import { type AddressPolicy, defaultAddressPolicy } from "./AddressGuard.ts"
import { type FetchLimits, type FetchOutcome, guardedFetch } from "./guardedFetch.ts"
import { type Clock, HostGate, systemClock } from "./HostGate.ts"
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
  /** Hosts ("10.0.0.5:8080", "intranet.example") exempt from the private-address guard, or true for all. */
  readonly allowPrivate?: boolean | ReadonlyArray<string> | undefined
  readonly userAgent?: string | undefined
  /** Test hooks: name resolution, the clock politeness runs on, and a note of each request started. */
  readonly resolve?: AddressPolicy["resolve"] | undefined
  readonly clock?: Clock | undefined
  readonly onRequest?: ((url: string, at: number) => void) | undefined
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

/** The site a URL belongs to: its registrable domain, or the bare host for IPs and single labels. */
export const siteOf = (url: string): string => {
  const host = new URL(url).hostname
  return getDomain(host, { allowPrivateDomains: true }) ?? host
}

const hostOf = (url: string) => new URL(url).host

const looksLikeHtml = (body: Uint8Array) =>
  /<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]/i.test(new TextDecoder("latin1").decode(body.subarray(0, 1024)))

const htmlGate = (status: number, contentType: string): true | string => {
  if (status < 200 || status >= 300) return `HTTP ${status}`
  if (contentType.trim() !== "" && !HTML_TYPE.test(contentType)) return `not HTML (${contentType.split(";")[0]!.trim()})`
  return true
}

const sitemapGate = (status: number, contentType: string): true | string => {
  if (status < 200 || status >= 300) return `HTTP ${status}`
  if (contentType.trim() !== "" && !SITEMAP_TYPE.test(contentType)) return `not a sitemap (${contentType.split(";")[0]!.trim()})`
  return true
}

interface Entry {
  readonly url: string
  readonly depth: number
}

/** A queue of source items that workers push to and the generator drains. */
class ItemChannel {
  readonly #items: Array<SourceItem> = []
  #wake: (() => void) | undefined
  push(item: SourceItem) {
    this.#items.push(item)
    this.#wake?.()
  }
  take(): SourceItem | undefined {
    return this.#items.shift()
  }
  get size() {
    return this.#items.length
  }
  wait(): Promise<void> {
    return new Promise((resolve) => (this.#wake = resolve))
  }
  notify() {
    this.#wake?.()
  }
}

export const crawlSource = (options: CrawlOptions): DocumentSource => {
  const seeds = options.seeds ?? []
  const sitemaps = options.sitemaps ?? []
  const describe = [
    seeds.length > 0 ? `crawl of ${seeds.length === 1 ? seeds[0] : `${seeds.length} URLs`}` : "",
    sitemaps.length > 0 ? `sitemap ${sitemaps.join(", ")}` : ""
  ].filter((s) => s !== "").join(" + ")
  // An upper bound: pages that are skipped or fail also count toward maxPages.
  return { describe, items: () => crawl(options), estimate: async () => options.maxPages ?? CRAWL_DEFAULTS.maxPages }
}

async function* crawl(options: CrawlOptions): AsyncGenerator<SourceItem> {
  const seeds = options.seeds ?? []
  const sitemaps = options.sitemaps ?? []
  const maxPages = options.maxPages ?? CRAWL_DEFAULTS.maxPages
  const maxDepth = options.maxDepth ?? CRAWL_DEFAULTS.maxDepth
  const concurrency = Math.max(1, options.concurrency ?? CRAWL_DEFAULTS.concurrency)
  const delayMs = options.delayMs ?? CRAWL_DEFAULTS.delayMs
  const maxRedirects = options.maxRedirects ?? CRAWL_DEFAULTS.maxRedirects
  const clock = options.clock ?? systemClock
  const limits: FetchLimits = {
    timeoutMs: options.timeoutMs ?? CRAWL_DEFAULTS.timeoutMs,
    maxBytes: options.maxBytes ?? CRAWL_DEFAULTS.maxBytes,
    userAgent: options.userAgent ?? CRAWL_DEFAULTS.userAgent
  }
  const policy: AddressPolicy = {
    allow: options.allowPrivate ?? false,
    resolve: options.resolve ?? defaultAddressPolicy.resolve
  }

  const channel = new ItemChannel()
  const crawlDelays = new Map<string, number>()
  const gate = new HostGate(clock, (host) => Math.max(delayMs, crawlDelays.get(host) ?? 0), () => wakeScheduler())
  const robots = new RobotsRules(ROBOTS_AGENT, limits, policy, (url) => gate.acquire(hostOf(url)))

  const frontier: Array<Entry> = []
  const seen = new Set<string>()
  const sites = new Set<string>()
  let started = 0
  let active = 0
  let stopped = false

  let schedulerWake: () => void = () => {}
  let schedulerChanged = new Promise<void>((resolve) => (schedulerWake = resolve))
  const wakeScheduler = () => {
    const wake = schedulerWake
    schedulerChanged = new Promise<void>((resolve) => (schedulerWake = resolve))
    wake()
  }

  const inScope = (url: string) => options.anySite === true || sites.has(siteOf(url))

  const enqueue = (url: string, depth: number) => {
    if (seen.has(url) || depth > maxDepth || !inScope(url)) return
    seen.add(url)
    frontier.push({ url, depth })
    wakeScheduler()
  }

  /** One request under politeness and robots.txt; `undefined` when robots.txt forbids it. */
  const politeFetch = async (url: string, gateFor: typeof htmlGate, accept?: string): Promise<FetchOutcome | undefined> => {
    const verdict = await robots.verdict(url)
    if (verdict.refused !== undefined) return { _tag: "Refused", url, reason: verdict.refused }
    if (verdict.crawlDelayMs !== undefined) crawlDelays.set(hostOf(url), verdict.crawlDelayMs)
    if (!verdict.allowed) return undefined
    const release = await gate.acquire(hostOf(url))
    options.onRequest?.(url, clock.now())
    try {
      return await guardedFetch(url, limits, policy, gateFor, accept)
    } finally {
      release()
    }
  }

  /** Fetches `start`, following redirects; the final body outcome or the item that ends it. */
  const fetchFollowing = async (
    start: string,
    gateFor: typeof htmlGate,
    accept?: string
  ): Promise<{ readonly body: Extract<FetchOutcome, { _tag: "Body" }> } | { readonly item: SourceItem }> => {
    const chain = [start]
    let url = start
    for (;;) {
      const outcome = await politeFetch(url, gateFor, accept)
      if (outcome === undefined) return { item: { _tag: "Skipped", origin: url, reason: "disallowed by robots.txt" } }
      switch (outcome._tag) {
        case "Body":
          return { body: outcome }
        case "Refused":
          return { item: { _tag: "Skipped", origin: url, reason: `refused: ${outcome.reason}` } }
        case "Rejected":
          return { item: { _tag: "Skipped", origin: url, reason: outcome.reason } }
        case "Failed":
          return { item: { _tag: "Failed", origin: url, message: outcome.message } }
        case "Redirect": {
          let next: string
          try {
            const target = new URL(outcome.location, url)
            target.hash = ""
            next = target.href
          } catch {
            return { item: { _tag: "Failed", origin: start, message: `redirect to an invalid URL ${JSON.stringify(outcome.location)}` } }
          }
          if (chain.includes(next)) {
            return { item: { _tag: "Failed", origin: start, message: `redirect loop: ${[...chain, next].join(" -> ")}` } }
          }
          if (chain.length > maxRedirects) {
            return { item: { _tag: "Failed", origin: start, message: `more than ${maxRedirects} redirects` } }
          }
          if (!next.startsWith("http:") && !next.startsWith("https:")) {
            return { item: { _tag: "Skipped", origin: start, reason: `redirected to a non-http URL` } }
          }
          if (!inScope(next)) return { item: { _tag: "Skipped", origin: start, reason: `redirected off-site` } }
          chain.push(next)
          url = next
        }
      }
    }
  }

  const crawlPage = async (entry: Entry) => {
    const fetched = await fetchFollowing(entry.url, htmlGate)
    if ("item" in fetched) return channel.push(fetched.item)
    const { body, url, contentType } = fetched.body
    if (contentType.trim() === "" && !looksLikeHtml(body)) {
      return channel.push({ _tag: "Skipped", origin: url, reason: "not HTML (no Content-Type)" })
    }
    // A redirect target may be a page the crawl reaches by another path: fetched once only.
    if (url !== entry.url) {
      if (seen.has(url)) return channel.push({ _tag: "Skipped", origin: entry.url, reason: "redirect to a page already crawled" })
      seen.add(url)
    }
    const page = extractPage(decodeHtml(body, contentType), url)
    if (entry.depth < maxDepth) for (const link of page.links) enqueue(link, entry.depth + 1)
    if (page.robots.noindex) return channel.push({ _tag: "Skipped", origin: url, reason: "noindex" })
    channel.push(documentItem(url, page.document))
  }

  const readSitemaps = async () => {
    const pending = [...sitemaps]
    let read = 0
    while (pending.length > 0 && read < MAX_SITEMAP_FILES && !stopped) {
      const sitemapUrl = pending.shift()!
      read++
      const fetched = await fetchFollowing(sitemapUrl, sitemapGate, "application/xml,text/xml;q=0.9,*/*;q=0.5")
      if ("item" in fetched) {
        channel.push(fetched.item)
        continue
      }
      let bytes = fetched.body.body
      if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
        try {
          bytes = new Uint8Array(gunzipSync(bytes, { maxOutputLength: limits.maxBytes * 10 }))
        } catch (error) {
          channel.push({ _tag: "Failed", origin: sitemapUrl, message: `sitemap: bad gzip (${(error as Error).message})` })
          continue
        }
      }
      const entries = parseSitemap(new TextDecoder().decode(bytes), fetched.body.url)
      if ("error" in entries) {
        channel.push({ _tag: "Failed", origin: sitemapUrl, message: `sitemap: ${entries.error}` })
        continue
      }
      pending.push(...entries.sitemaps)
      for (const page of entries.pages) enqueue(page, 0)
    }
  }

  /** The next entry whose host may be fetched now; undefined when the crawl is over. */
  const next = async (): Promise<Entry | undefined> => {
    for (;;) {
      if (stopped || started >= maxPages) return undefined
      const now = clock.now()
      let soonest = Number.POSITIVE_INFINITY
      for (let i = 0; i < frontier.length; i++) {
        const readyAt = gate.readyAt(hostOf(frontier[i]!.url))
        if (readyAt <= now) {
          // Counted as active here, synchronously: another worker checking "anything left?"
          // before this one resumes must see that a page is still being crawled.
          started++
          active++
          return frontier.splice(i, 1)[0]
        }
        soonest = Math.min(soonest, readyAt)
      }
      if (frontier.length === 0 && active === 0) return undefined
      const changed = schedulerChanged
      await (soonest === Number.POSITIVE_INFINITY ? changed : Promise.race([changed, clock.sleep(soonest - now)]))
    }
  }

  const worker = async () => {
    for (let entry = await next(); entry !== undefined; entry = await next()) {
      try {
        await crawlPage(entry)
      } catch (error) {
        channel.push({ _tag: "Failed", origin: entry.url, message: error instanceof Error ? error.message : String(error) })
      } finally {
        active--
        wakeScheduler()
      }
    }
  }

  for (const url of [...seeds, ...sitemaps]) {
    try {
      sites.add(siteOf(url))
    } catch {
      yield { _tag: "Failed", origin: url, message: "not a valid URL" }
    }
  }
  let running = 0
  const run = (task: () => Promise<void>) => {
    running++
    void task().finally(() => {
      running--
      wakeScheduler()
      channel.notify()
    })
  }
  run(async () => {
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
    await readSitemaps()
    for (let i = 0; i < concurrency; i++) run(worker)
  })
  try {
    while (running > 0 || channel.size > 0) {
      const item = channel.take()
      if (item !== undefined) yield item
      else await channel.wait()
    }
  } finally {
    // The consumer stopped early or the crawl ended: let workers wind down.
    stopped = true
    wakeScheduler()
  }
}
