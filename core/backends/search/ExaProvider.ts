/**
 * Exa: POST /search {query, numResults <= 100, startPublishedDate, endPublishedDate,
 * contents: {highlights}} with the key in x-api-key. Snippets are the highlights (else the
 * start of the text); dates are `publishedDate`. Freshness windows become a start date
 * from our clock; domains its includeDomains and excludeDomains. No image search, language,
 * region or safe-search parameter.
 */
import { Clock, Effect, Redacted } from "effect"
import { HttpClientRequest } from "effect/http"
import { freshnessBounds, publishedDate } from "../../search/PublishedDate.ts"
import type { ProviderOption, SearchQuery } from "../../search/SearchQuery.ts"
import type { SearchProvider } from "../../search/SearchProvider.ts"
import type { WebHit } from "../../search/SearchResult.ts"
import { arr, endpoint, field, makeProviderHttp, type ProviderConfig, str } from "./ProviderHttp.ts"
import { domainParams, unappliedOptions } from "./ProviderOptions.ts"

const SNIPPET_CHARS = 300

const body = (query: SearchQuery, nowMs: number) => {
  const b: Record<string, unknown> = {
    query: query.keywords,
    numResults: Math.min(query.num, 100),
    contents: { highlights: { numSentences: 2, highlightsPerUrl: 1 }, text: { maxCharacters: SNIPPET_CHARS } }
  }
  const applied = new Set<ProviderOption>()
  if (query.freshness !== undefined) {
    const bounds = freshnessBounds(query.freshness, nowMs)
    b.startPublishedDate = `${bounds.from}T00:00:00.000Z`
    if (bounds.to !== "9999-12-31") b.endPublishedDate = `${bounds.to}T23:59:59.999Z`
    applied.add("freshness")
  }
  const why: Partial<Record<ProviderOption, string>> = {}
  const domains = domainParams(query, "Exa", applied, why)
  if (domains.include !== undefined) b.includeDomains = domains.include
  if (domains.exclude !== undefined) b.excludeDomains = domains.exclude
  return {
    body: b,
    unapplied: unappliedOptions(query, applied, {
      ...why,
      language: "Exa has no language parameter",
      region: "Exa has no region parameter",
      safeSearch: "Exa has no safe-search parameter"
    })
  }
}

export const make = (config: ProviderConfig) =>
  Effect.map(makeProviderHttp(config), (http): SearchProvider => ({
    name: config.name,
    kind: "exa",
    images: false,
    web: (query) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const { body: b, unapplied } = body(query, now)
        let request = HttpClientRequest.post(endpoint(config.baseUrl, "/search")).pipe(HttpClientRequest.bodyJsonUnsafe(b))
        if (config.apiKey !== undefined) request = HttpClientRequest.setHeader(request, "x-api-key", Redacted.value(config.apiKey))
        const answer = yield* http.json(request)
        const results = field(answer, "results")
        if (!Array.isArray(results)) return yield* Effect.fail(http.fail("bad_response", "the answer has no results array"))
        const hits: Array<WebHit> = []
        for (const r of results) {
          const link = str(field(r, "url"))
          if (link === "") continue
          const highlights = arr(field(r, "highlights")).map(str).filter((h) => h !== "")
          const text = str(field(r, "text"))
          const snippet = highlights.length > 0 ? highlights.join(" … ") : text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}…` : text
          hits.push({ title: str(field(r, "title")), link, snippet: snippet.replace(/\s+/g, " ").trim(), date: publishedDate(field(r, "publishedDate"), now) })
        }
        return { hits: hits.slice(0, query.num), unapplied }
      }),
    image: () => Effect.fail(http.fail("unsupported", "Exa has no image search"))
  }))

export const ExaProvider = { make } as const
