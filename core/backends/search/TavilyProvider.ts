/**
 * Tavily: POST /search {query, max_results <= 20, time_range | start_date/end_date} with
 * `Authorization: Bearer tvly-...`. Errors come as {detail: {error}}; 432/433 are plan and
 * pay-as-you-go limits (treated as rate_limited). Its images have no source page, so it
 * offers no image search here. It takes countries by name and has no language or
 * safe-search parameter: those options are reported as ignored. Domains go as its
 * include_domains and exclude_domains.
 */
import { Clock, Effect, Redacted } from "effect"
import { HttpClientRequest } from "effect/http"
import { publishedDate } from "../../search/PublishedDate.ts"
import type { ProviderOption, SearchQuery } from "../../search/SearchQuery.ts"
import type { SearchProvider } from "../../search/SearchProvider.ts"
import type { WebHit } from "../../search/SearchResult.ts"
import { endpoint, field, makeProviderHttp, type ProviderConfig, str } from "./ProviderHttp.ts"
import { domainParams, unappliedOptions } from "./ProviderOptions.ts"

const body = (query: SearchQuery) => {
  const b: Record<string, unknown> = { query: query.keywords, max_results: Math.min(query.num, 20), topic: "general" }
  const applied = new Set<ProviderOption>()
  if (query.freshness !== undefined) {
    if (typeof query.freshness === "string") b.time_range = query.freshness
    else {
      b.start_date = query.freshness.from
      b.end_date = query.freshness.to
    }
    applied.add("freshness")
  }
  const why: Partial<Record<ProviderOption, string>> = {}
  const domains = domainParams(query, "Tavily", applied, why)
  if (domains.include !== undefined) b.include_domains = domains.include
  if (domains.exclude !== undefined) b.exclude_domains = domains.exclude
  return {
    body: b,
    unapplied: unappliedOptions(query, applied, {
      ...why,
      language: "Tavily has no language parameter",
      region: "Tavily takes country names, not codes; not mapped",
      safeSearch: "Tavily has no safe-search parameter"
    })
  }
}

export const make = (config: ProviderConfig) =>
  Effect.map(makeProviderHttp(config), (http): SearchProvider => ({
    name: config.name,
    kind: "tavily",
    images: false,
    web: (query) =>
      Effect.gen(function*() {
        const { body: b, unapplied } = body(query)
        let request = HttpClientRequest.post(endpoint(config.baseUrl, "/search")).pipe(HttpClientRequest.bodyJsonUnsafe(b))
        if (config.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, Redacted.value(config.apiKey))
        const answer = yield* http.json(request)
        const results = field(answer, "results")
        if (!Array.isArray(results)) return yield* Effect.fail(http.fail("bad_response", "the answer has no results array"))
        const now = yield* Clock.currentTimeMillis
        const hits: Array<WebHit> = []
        for (const r of results) {
          const link = str(field(r, "url"))
          if (link === "") continue
          hits.push({ title: str(field(r, "title")), link, snippet: str(field(r, "content")), date: publishedDate(field(r, "published_date"), now) })
        }
        return { hits: hits.slice(0, query.num), unapplied }
      }),
    image: () => Effect.fail(http.fail("unsupported", "Tavily's images have no source page; no image search"))
  }))

export const TavilyProvider = { make } as const
