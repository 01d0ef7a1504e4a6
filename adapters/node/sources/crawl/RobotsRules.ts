/**
 * robots.txt per origin, fetched once and read with robots-parser, following
 * RFC 9309: a missing file (4xx) allows everything; a server error or an
 * unreachable file disallows everything until the crawl ends; redirects are
 * followed up to five hops. Crawl-delay raises the politeness delay for that
 * host (capped, so a hostile value cannot stall a run).
 */
import robotsParserModule from "robots-parser"
import type { AddressPolicy } from "./AddressGuard.ts"
import { type FetchLimits, guardedFetch } from "./guardedFetch.ts"

export interface RobotsVerdict {
  readonly allowed: boolean
  /** Set when the host itself was refused by the address guard: no request may go there. */
  readonly refused: string | undefined
  /** Delay in ms the file asks for, if any. */
  readonly crawlDelayMs: number | undefined
}

interface Rules {
  readonly isAllowed: (url: string) => boolean
  readonly refused?: string
  readonly crawlDelayMs: number | undefined
  readonly sitemaps: ReadonlyArray<string>
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

const allowAll: Rules = { isAllowed: () => true, crawlDelayMs: undefined, sitemaps: [] }
const disallowAll: Rules = { isAllowed: () => false, crawlDelayMs: undefined, sitemaps: [] }

/** Which requests to a host are allowed, plus the delay it asks for. */
export class RobotsRules {
  readonly #cache = new Map<string, Promise<Rules>>()
  readonly #agent: string
  readonly #limits: FetchLimits
  readonly #policy: AddressPolicy
  readonly #beforeRequest: (url: string) => Promise<() => void>

  /**
   * `agent` is the product token matched against User-agent lines; `beforeRequest`
   * lets the crawler apply its per-host politeness to robots.txt fetches too.
   */
  constructor(
    agent: string,
    limits: FetchLimits,
    policy: AddressPolicy,
    beforeRequest: (url: string) => Promise<() => void>
  ) {
    this.#agent = agent
    this.#limits = { ...limits, maxBytes: Math.min(limits.maxBytes, ROBOTS_MAX_BYTES) }
    this.#policy = policy
    this.#beforeRequest = beforeRequest
  }

  async verdict(url: string): Promise<RobotsVerdict> {
    const rules = await this.#rules(new URL(url).origin)
    return { allowed: rules.isAllowed(url), refused: rules.refused, crawlDelayMs: rules.crawlDelayMs }
  }

  /** Sitemaps the origin's robots.txt lists. */
  async sitemaps(origin: string): Promise<ReadonlyArray<string>> {
    return (await this.#rules(origin)).sitemaps
  }

  #rules(origin: string): Promise<Rules> {
    let rules = this.#cache.get(origin)
    if (rules === undefined) {
      rules = this.#load(origin)
      this.#cache.set(origin, rules)
    }
    return rules
  }

  async #load(origin: string): Promise<Rules> {
    let target = `${origin}/robots.txt`
    for (let hop = 0; hop <= MAX_HOPS; hop++) {
      const release = await this.#beforeRequest(target)
      const outcome = await guardedFetch(target, this.#limits, this.#policy, () => true, "text/plain,*/*;q=0.5")
      release()
      switch (outcome._tag) {
        case "Redirect":
          target = new URL(outcome.location, target).href
          continue
        case "Body":
          if (outcome.status >= 400 && outcome.status < 500) return allowAll
          if (outcome.status >= 500 || outcome.status < 200 || outcome.status >= 300) return disallowAll
          return this.#parse(target, new TextDecoder().decode(outcome.body))
        case "Rejected":
          // Over the size limit: RFC 9309 lets a crawler parse the first 500 KiB; without them, be safe.
          return disallowAll
        case "Refused":
          return { ...disallowAll, refused: outcome.reason }
        case "Failed":
          return disallowAll
      }
    }
    return allowAll // RFC 9309: more redirects than that count as a missing file
  }

  #parse(url: string, text: string): Rules {
    const robots = robotsParser(url, text)
    const delay = robots.getCrawlDelay(this.#agent)
    return {
      isAllowed: (page) => robots.isAllowed(page, this.#agent) !== false,
      crawlDelayMs: delay === undefined || !Number.isFinite(delay) || delay <= 0
        ? undefined
        : Math.min(delay * 1000, MAX_CRAWL_DELAY_MS),
      sitemaps: robots.getSitemaps()
    }
  }
}
