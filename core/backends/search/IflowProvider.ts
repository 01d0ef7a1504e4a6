/**
 * Any endpoint that speaks our own wire API: a hosted service of that API or another Periscope.
 * POST /api/search/webSearch and /imageSearch {keywords, num} with a bearer key, answers in
 * the {success, code, message, exception, data, extra} envelope. A Periscope peer applies
 * our options itself (`forwardOptions`, the default); a hosted service may know none, so
 * with forwardOptions false freshness is filtered our side, domains go as `site:` words (and
 * are filtered our side), and the rest reported ignored.
 */
import { Clock, Effect, Redacted } from "effect"
import { HttpClientRequest } from "effect/http"
import { domainFilterOf, siteWord } from "../../search/DomainFilter.ts"
import { MAX_DOMAINS, type ProviderOption, PROVIDER_OPTIONS, type SearchQuery } from "../../search/SearchQuery.ts"
import type { SearchProvider } from "../../search/SearchProvider.ts"
import type { ImageResult } from "../../search/SearchResult.ts"
import { endpoint, field, makeProviderHttp, organicHits, type ProviderConfig, str } from "./ProviderHttp.ts"
import { forImages, siteKeywords, unappliedOptions } from "./ProviderOptions.ts"

export interface IflowConfig extends ProviderConfig {
  /** Send freshness, language, region and safeSearch on (a Periscope peer applies them). Default true. */
  readonly forwardOptions?: boolean | undefined
  /** The most results one request may ask for (the hosted service's clients cap num at 20). Default 100. */
  readonly maxNum?: number | undefined
}

/** The hosted service's keywords limit, and the words a web search engine behind it reads. */
const QUERY_LIMITS = { maxChars: 1000, maxWords: 32 }

/** What the request carries of the query and which options it applies. */
interface Asked {
  readonly body: Record<string, unknown>
  readonly applied: Set<ProviderOption>
  readonly why: Partial<Record<ProviderOption, string>>
}

/** A Periscope peer gets every option as a field (a domain list only within its bound); a service without options gets domains as site: words. */
const ask = (query: SearchQuery, forward: boolean, maxNum: number): Asked => {
  const applied = new Set<ProviderOption>()
  const why: Partial<Record<ProviderOption, string>> = {}
  if (!forward) {
    const keywords = siteKeywords(query, "the provider", QUERY_LIMITS, applied, why)
    return { body: { keywords, num: Math.min(query.num, maxNum) }, applied, why }
  }
  const b: Record<string, unknown> = { keywords: query.keywords, num: Math.min(query.num, maxNum) }
  const filter = domainFilterOf(query)
  for (const option of PROVIDER_OPTIONS) {
    if (query[option] === undefined) continue
    if (option === "includeDomains" || option === "excludeDomains") {
      const sites = (option === "includeDomains" ? filter?.include : filter?.exclude) ?? []
      if (sites.length === 0 || sites.length > MAX_DOMAINS) {
        why[option] = `more than ${MAX_DOMAINS} sites: not sent to the peer; its results are filtered our side by host`
        continue
      }
      b[option] = sites.map(siteWord)
    } else b[option] = query[option]
    applied.add(option)
  }
  return { body: b, applied, why }
}

export const make = (config: IflowConfig) =>
  Effect.map(makeProviderHttp(config), (http): SearchProvider => {
    const forward = config.forwardOptions !== false
    const maxNum = config.maxNum ?? 100
    const post = (path: string, b: Record<string, unknown>) => {
      let request = HttpClientRequest.post(endpoint(config.baseUrl, path)).pipe(HttpClientRequest.bodyJsonUnsafe(b))
      if (config.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, Redacted.value(config.apiKey))
      return Effect.flatMap(http.json(request), (answer) => {
        // An envelope that says failure with HTTP 200 (the hosted service does this).
        if (field(answer, "success") === false) {
          const code = str(field(answer, "code"))
          const message = str(field(answer, "message")) || str(field(answer, "exception", "detail")) || "the provider answered success: false"
          const reason = code === "40303" ? "rate_limited" : code === "90402" ? "unauthorized" : "unavailable"
          return Effect.fail(http.fail(reason, `${message} (code ${code || "none"})`))
        }
        return Effect.succeed(field(answer, "data"))
      })
    }
    const unapplied = (query: SearchQuery, asked: Asked) => unappliedOptions(query, asked.applied, {
      ...asked.why,
      language: "the provider is not a Periscope (forwardOptions: false) and has no language option",
      region: "the provider is not a Periscope (forwardOptions: false) and has no region option",
      safeSearch: "the provider is not a Periscope (forwardOptions: false) and has no safe-search option"
    })
    return {
      name: config.name,
      kind: "iflow",
      images: true,
      web: (query) =>
        Effect.gen(function*() {
          const asked = ask(query, forward, maxNum)
          const data = yield* post("/api/search/webSearch", asked.body)
          const organic = field(data, "organic")
          if (!Array.isArray(organic)) return yield* Effect.fail(http.fail("bad_response", "the answer has no data.organic array"))
          const now = yield* Clock.currentTimeMillis
          return { hits: organicHits(organic, now, query.num), unapplied: unapplied(query, asked) }
        }),
      image: (query) =>
        Effect.gen(function*() {
          const asked = ask(query, forward, maxNum)
          const data = yield* post("/api/search/imageSearch", asked.body)
          if (!Array.isArray(data)) return yield* Effect.fail(http.fail("bad_response", "the answer's data is not an array"))
          const hits: Array<ImageResult> = []
          for (const r of data) {
            const url = str(field(r, "url"))
            if (url === "") continue
            hits.push({ url, refUrl: str(field(r, "refUrl")), title: str(field(r, "title")) })
          }
          return { hits: hits.slice(0, query.num), unapplied: forImages(unapplied(query, asked)) }
        })
    }
  })

export const IflowProvider = { make } as const
