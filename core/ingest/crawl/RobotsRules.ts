/**
 * robots.txt per origin, fetched once and read with robots-parser, following
 * RFC 9309: a missing file (4xx) allows everything; a server error or an
 * unreachable file disallows everything until the crawl ends; redirects are
 * followed up to five hops. Crawl-delay raises the politeness delay for that
 * host (capped, so a hostile value cannot stall a run). A file over 512 KiB
 * disallows everything, and says that it is too large. The file's Sitemap lines are kept for
 * whoever maps the site.
 */
import { Deferred, Effect } from "effect"
import robotsParserModule from "robots-parser"
import { formatBytes } from "../DocumentSource.ts"
import type { HostGate } from "./HostGate.ts"
import type { PageFetcher, PageResponse } from "./PageFetcher.ts"

export interface RobotsVerdict {
  readonly allowed: boolean
  /** Why every page of the host is disallowed when it is not the file's rules that say so (the file is too large). */
  readonly blocked: string | undefined
  /** Set when the host itself was refused (e.g. a private address): no request may go there. */
  readonly refused: string | undefined
  /** Set when robots.txt could not be read (network error, 5xx): the host's pages are errors, not skips. */
  readonly unreachable: string | undefined
  /** Delay in ms the file asks for, if any. */
  readonly crawlDelayMs: number | undefined
  /** The sitemaps the file lists (Sitemap lines), absolute; none when it lists none or could not be read. */
  readonly sitemaps: ReadonlyArray<string>
}

interface Rules {
  readonly isAllowed: (url: string) => boolean
  readonly blocked?: string
  readonly refused?: string
  readonly unreachable?: string
  readonly crawlDelayMs: number | undefined
  readonly sitemaps?: ReadonlyArray<string>
}

interface ParsedRobots {
  isAllowed(url: string, ua?: string): boolean | undefined
  getCrawlDelay(ua?: string): number | undefined
  getSitemaps(): Array<string>
}
// robots-parser is CommonJS exporting the function itself; its typings describe an ES default export.
const robotsParser = robotsParserModule as unknown as (url: string, text: string) => ParsedRobots

const ROBOTS_MAX_BYTES = 512 * 1024
const MAX_HOPS = 5
export const MAX_CRAWL_DELAY_MS = 30_000

/** Sitemap lines read from a file, at most this many. */
const MAX_SITEMAPS = 50

/** The file's Sitemap lines as absolute http(s) URLs, each once. */
const sitemapsOf = (lines: ReadonlyArray<string>, robotsUrl: string): Array<string> => {
  const out = new Set<string>()
  for (const line of lines) {
    if (out.size === MAX_SITEMAPS) break
    try {
      const url = new URL(line.trim(), robotsUrl)
      if (url.protocol === "http:" || url.protocol === "https:") out.add(url.href)
    } catch {
      // not a URL: left out
    }
  }
  return [...out]
}

const allowAll: Rules = { isAllowed: () => true, crawlDelayMs: undefined }
const disallowAll: Rules = { isAllowed: () => false, crawlDelayMs: undefined }

export interface RobotsLimits {
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly userAgent: string
}

/** Which requests to a host are allowed, plus the delay it asks for. */
export class RobotsRules {
  readonly #cache = new Map<string, Deferred.Deferred<Rules>>()
  readonly agent: string
  readonly limits: RobotsLimits
  readonly fetcher: PageFetcher["Service"]
  readonly gate: HostGate

  /** `agent` is the product token matched against User-agent lines; robots.txt fetches take the host's turn too. */
  constructor(agent: string, limits: RobotsLimits, fetcher: PageFetcher["Service"], gate: HostGate) {
    this.agent = agent
    this.limits = limits
    this.fetcher = fetcher
    this.gate = gate
  }

  verdict(url: string): Effect.Effect<RobotsVerdict> {
    return Effect.map(this.#rules(new URL(url).origin), (rules) => ({
      allowed: rules.isAllowed(url),
      blocked: rules.blocked,
      refused: rules.refused,
      unreachable: rules.unreachable,
      crawlDelayMs: rules.crawlDelayMs,
      sitemaps: rules.sitemaps ?? []
    }))
  }

  #rules(origin: string): Effect.Effect<Rules> {
    return Effect.suspend(() => {
      const known = this.#cache.get(origin)
      if (known !== undefined) return Deferred.await(known)
      const loaded = Deferred.makeUnsafe<Rules>()
      this.#cache.set(origin, loaded)
      return this.#load(origin).pipe(Effect.onExit((exit) => Deferred.done(loaded, exit)))
    })
  }

  #fetch(url: string): Effect.Effect<PageResponse | Rules> {
    const maxBytes = Math.min(this.limits.maxBytes, ROBOTS_MAX_BYTES)
    const request = this.fetcher.fetch({
      url,
      accept: "text/plain,*/*;q=0.5",
      userAgent: this.limits.userAgent,
      timeoutMs: this.limits.timeoutMs,
      maxBytes,
      wanted: () => true
    })
    return this.gate.use(new URL(url).host, request).pipe(
      Effect.catchTag("FetchFailure", (failure) =>
        // Over the size limit: RFC 9309 lets a crawler parse the first 500 KiB; without them, be safe.
        Effect.succeed<Rules>(
          failure.reason === "refused" ? { ...disallowAll, refused: failure.message }
          : failure.reason === "failed" || failure.reason === "unsupported"
          ? { ...disallowAll, unreachable: `robots.txt could not be read: ${failure.message}` }
          : failure.limit === "size"
          ? { ...disallowAll, blocked: `robots.txt too large (over ${formatBytes(maxBytes)})` }
          : disallowAll
        ))
    )
  }

  #load(origin: string): Effect.Effect<Rules> {
    const self = this
    return Effect.gen(function*() {
      let target = `${origin}/robots.txt`
      for (let hop = 0; hop <= MAX_HOPS; hop++) {
        const outcome = yield* self.#fetch(target)
        if (!("_tag" in outcome)) return outcome
        if (outcome._tag === "Redirect") {
          target = new URL(outcome.location, target).href
          continue
        }
        if (outcome.status >= 400 && outcome.status < 500) return allowAll
        if (outcome.status < 200 || outcome.status >= 300) return { ...disallowAll, unreachable: `robots.txt answered HTTP ${outcome.status}` }
        return self.#parse(target, new TextDecoder().decode(outcome.body))
      }
      return allowAll // RFC 9309: more redirects than that count as a missing file
    })
  }

  #parse(url: string, text: string): Rules {
    const robots = robotsParser(url, text)
    const delay = robots.getCrawlDelay(this.agent)
    return {
      isAllowed: (page) => robots.isAllowed(page, this.agent) !== false,
      sitemaps: sitemapsOf(robots.getSitemaps(), url),
      crawlDelayMs: delay === undefined || !Number.isFinite(delay) || delay <= 0
        ? undefined
        : Math.min(delay * 1000, MAX_CRAWL_DELAY_MS)
    }
  }
}
