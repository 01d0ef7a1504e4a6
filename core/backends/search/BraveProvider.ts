/**
 * Brave Search API: GET /res/v1/web/search and /res/v1/images/search with the key in
 * X-Subscription-Token. Web answers `web.results[]` with `page_age` (ISO) and `age`
 * (relative or written); a 429 carries X-RateLimit-Reset per window. Web count is at
 * most 20, image count at most 200; image safesearch is only off or strict. Domains go as
 * `site:` words within its query's 400 characters and 50 words.
 */
import { Clock, Effect, Redacted } from "effect"
import { HttpClientRequest } from "effect/http"
import { publishedDate } from "../../search/PublishedDate.ts"
import type { ProviderOption, SearchQuery } from "../../search/SearchQuery.ts"
import type { SearchProvider } from "../../search/SearchProvider.ts"
import type { ImageResult, WebHit } from "../../search/SearchResult.ts"
import { arr, endpoint, field, makeProviderHttp, type ProviderConfig, str } from "./ProviderHttp.ts"
import { forImages, plainText, siteKeywords, unappliedOptions } from "./ProviderOptions.ts"

const FRESHNESS = { day: "pd", week: "pw", month: "pm", year: "py" } as const
/** What Brave's `q` takes. */
const QUERY_LIMITS = { maxChars: 400, maxWords: 50 }

const params = (query: SearchQuery, images: boolean) => {
  const applied = new Set<ProviderOption>()
  const why: Partial<Record<ProviderOption, string>> = {}
  const p: Record<string, string> = { q: siteKeywords(query, "Brave", QUERY_LIMITS, applied, why), count: String(Math.min(query.num, images ? 200 : 20)) }
  if (query.freshness !== undefined && !images) {
    p.freshness = typeof query.freshness === "string" ? FRESHNESS[query.freshness] : `${query.freshness.from}to${query.freshness.to}`
    applied.add("freshness")
  }
  if (query.language !== undefined) {
    p.search_lang = query.language.toLowerCase()
    applied.add("language")
  }
  if (query.region !== undefined) {
    p.country = query.region.toUpperCase()
    applied.add("region")
  }
  if (query.safeSearch !== undefined) {
    // Image search knows only off and strict: moderate errs on the safe side.
    p.safesearch = images && query.safeSearch === "moderate" ? "strict" : query.safeSearch
    applied.add("safeSearch")
  }
  return { params: p, unapplied: unappliedOptions(query, applied, why) }
}

export const make = (config: ProviderConfig) =>
  Effect.map(makeProviderHttp(config), (http): SearchProvider => {
    const get = (path: string, p: Record<string, string>) => {
      let request = HttpClientRequest.get(endpoint(config.baseUrl, path)).pipe(HttpClientRequest.setUrlParams(p))
      if (config.apiKey !== undefined) request = HttpClientRequest.setHeader(request, "x-subscription-token", Redacted.value(config.apiKey))
      return http.json(request)
    }
    return {
      name: config.name,
      kind: "brave",
      images: true,
      web: (query) =>
        Effect.gen(function*() {
          const { params: p, unapplied } = params(query, false)
          const body = yield* get("/res/v1/web/search", p)
          const now = yield* Clock.currentTimeMillis
          const hits: Array<WebHit> = []
          // A query with no web results answers without a `web` section.
          for (const r of arr(field(body, "web", "results"))) {
            const link = str(field(r, "url"))
            if (link === "") continue
            hits.push({
              title: plainText(str(field(r, "title"))),
              link,
              snippet: plainText(str(field(r, "description"))),
              date: publishedDate(field(r, "page_age"), now) ?? publishedDate(field(r, "age"), now)
            })
          }
          if (field(body, "web") === undefined && field(body, "type") !== "search") {
            return yield* Effect.fail(http.fail("bad_response", "the answer is not a Brave search response"))
          }
          return { hits: hits.slice(0, query.num), unapplied }
        }),
      image: (query) =>
        Effect.gen(function*() {
          const { params: p, unapplied } = params(query, true)
          const body = yield* get("/res/v1/images/search", p)
          const results = field(body, "results")
          if (!Array.isArray(results)) return yield* Effect.fail(http.fail("bad_response", "the answer has no results array"))
          const hits: Array<ImageResult> = []
          for (const r of results) {
            const url = str(field(r, "properties", "url")) || str(field(r, "thumbnail", "src"))
            if (url === "") continue
            hits.push({ url, refUrl: str(field(r, "url")), title: plainText(str(field(r, "title"))) })
          }
          return { hits: hits.slice(0, query.num), unapplied: forImages(unapplied) }
        })
    }
  })

export const BraveProvider = { make } as const
