/**
 * SearXNG over its JSON API (`/search?format=json`; the instance must list json in
 * `search.formats`, else it answers 403). It has no result-count parameter: one page is
 * read and cut to `num`. Dates come as `publishedDate`; images in category `images`. Domains
 * go as `site:` words, which it passes to its engines, within the 2048 characters and 32 words
 * a web search engine reads.
 */
import { Clock, Effect } from "effect"
import { HttpClientRequest } from "effect/http"
import type { ProviderOption, SearchQuery } from "../../search/SearchQuery.ts"
import type { SearchProvider } from "../../search/SearchProvider.ts"
import type { ImageResult, WebHit } from "../../search/SearchResult.ts"
import { publishedDate } from "../../search/PublishedDate.ts"
import { forImages, plainText, siteKeywords, unappliedOptions } from "./ProviderOptions.ts"
import { arr, endpoint, field, makeProviderHttp, type ProviderConfig, str } from "./ProviderHttp.ts"

const SAFE = { off: "0", moderate: "1", strict: "2" } as const
const QUERY_LIMITS = { maxChars: 2048, maxWords: 32 }

const params = (query: SearchQuery, category: "general" | "images") => {
  const applied = new Set<ProviderOption>()
  const why: Partial<Record<ProviderOption, string>> = {
    region: "SearXNG takes a region only with a language (language=en-US)",
    freshness: "SearXNG has no date range (time_range is day, week, month or year): filtered our side by publish date"
  }
  const p: Record<string, string> = { q: siteKeywords(query, "SearXNG", QUERY_LIMITS, applied, why), format: "json", pageno: "1", categories: category }
  if (typeof query.freshness === "string") {
    p.time_range = query.freshness
    applied.add("freshness")
  }
  if (query.language !== undefined) {
    p.language = query.region === undefined ? query.language.toLowerCase() : `${query.language.toLowerCase()}-${query.region.toUpperCase()}`
    applied.add("language")
    if (query.region !== undefined) applied.add("region")
  }
  if (query.safeSearch !== undefined) {
    p.safesearch = SAFE[query.safeSearch]
    applied.add("safeSearch")
  }
  return {
    params: p,
    unapplied: unappliedOptions(query, applied, why)
  }
}

/** Protocol-relative image sources ("//host/x.jpg") made absolute. */
const absolute = (url: string) => (url.startsWith("//") ? `https:${url}` : url)

export const make = (config: ProviderConfig) =>
  Effect.map(makeProviderHttp(config), (http): SearchProvider => {
    const search = (query: SearchQuery, category: "general" | "images") => {
      const { params: p, unapplied } = params(query, category)
      const request = HttpClientRequest.get(endpoint(config.baseUrl, "/search")).pipe(HttpClientRequest.setUrlParams(p))
      return Effect.map(http.json(request), (body) => ({ body, unapplied }))
    }
    /** Every engine unresponsive and nothing found: the instance could not search. */
    const check = (body: unknown) => {
      const results = field(body, "results")
      if (!Array.isArray(results)) return Effect.fail(http.fail("bad_response", "the answer has no results array"))
      const unresponsive = arr(field(body, "unresponsive_engines"))
      if (results.length === 0 && unresponsive.length > 0) {
        const said = unresponsive.map((e) => arr(e).map(str).join(": ")).join("; ")
        return Effect.fail(http.fail(/captcha/i.test(said) ? "blocked" : "unavailable", `every engine failed: ${said}`, /captcha/i.test(said) ? { captcha: true } : {}))
      }
      return Effect.succeed(results as ReadonlyArray<unknown>)
    }
    return {
      name: config.name,
      kind: "searxng",
      images: true,
      web: (query) =>
        Effect.gen(function*() {
          const { body, unapplied } = yield* search(query, "general")
          const results = yield* check(body)
          const now = yield* Clock.currentTimeMillis
          const hits: Array<WebHit> = []
          for (const r of results) {
            const link = str(field(r, "url"))
            if (link === "") continue
            hits.push({ title: plainText(str(field(r, "title"))), link, snippet: plainText(str(field(r, "content"))), date: publishedDate(field(r, "publishedDate"), now) })
            if (hits.length === query.num) break
          }
          return { hits, unapplied }
        }),
      image: (query) =>
        Effect.gen(function*() {
          const { body, unapplied } = yield* search(query, "images")
          const results = yield* check(body)
          const hits: Array<ImageResult> = []
          for (const r of results) {
            const url = absolute(str(field(r, "img_src")))
            if (url === "") continue
            hits.push({ url, refUrl: str(field(r, "url")), title: plainText(str(field(r, "title"))) })
            if (hits.length === query.num) break
          }
          return { hits, unapplied: forImages(unapplied) }
        })
    }
  })

export const SearxngProvider = { make } as const
