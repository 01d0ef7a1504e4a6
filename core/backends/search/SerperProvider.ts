/**
 * Serper (Google results): POST /search and /images with {q, num, gl, hl, tbs} and the
 * key in X-API-KEY. `organic[]` has our webSearch's own shape; `date` is written ("Jan 15,
 * 2024") or relative ("3 days ago"). Serper has no safe-search parameter. Domains go as
 * `site:` words within Google's 2048 characters and 32 words.
 */
import { Clock, Effect, Redacted } from "effect"
import { HttpClientRequest } from "effect/http"
import type { ProviderOption, SearchQuery } from "../../search/SearchQuery.ts"
import type { SearchProvider } from "../../search/SearchProvider.ts"
import type { ImageResult } from "../../search/SearchResult.ts"
import { endpoint, field, makeProviderHttp, organicHits, type ProviderConfig, str } from "./ProviderHttp.ts"
import { forImages, siteKeywords, unappliedOptions, usDate } from "./ProviderOptions.ts"

const QDR = { day: "qdr:d", week: "qdr:w", month: "qdr:m", year: "qdr:y" } as const
/** What Google reads of a query. */
const QUERY_LIMITS = { maxChars: 2048, maxWords: 32 }

const body = (query: SearchQuery) => {
  const applied = new Set<ProviderOption>()
  const why: Partial<Record<ProviderOption, string>> = { safeSearch: "Serper has no safe-search parameter" }
  const b: Record<string, unknown> = { q: siteKeywords(query, "Serper", QUERY_LIMITS, applied, why), num: Math.min(query.num, 100) }
  if (query.freshness !== undefined) {
    b.tbs = typeof query.freshness === "string"
      ? QDR[query.freshness]
      : `cdr:1,cd_min:${usDate(query.freshness.from)},cd_max:${usDate(query.freshness.to)}`
    applied.add("freshness")
  }
  if (query.language !== undefined) {
    b.hl = query.language.toLowerCase()
    applied.add("language")
  }
  if (query.region !== undefined) {
    b.gl = query.region.toLowerCase()
    applied.add("region")
  }
  return { body: b, unapplied: unappliedOptions(query, applied, why) }
}

export const make = (config: ProviderConfig) =>
  Effect.map(makeProviderHttp(config), (http): SearchProvider => {
    const post = (path: string, b: Record<string, unknown>) => {
      let request = HttpClientRequest.post(endpoint(config.baseUrl, path)).pipe(HttpClientRequest.bodyJsonUnsafe(b))
      if (config.apiKey !== undefined) request = HttpClientRequest.setHeader(request, "x-api-key", Redacted.value(config.apiKey))
      return http.json(request)
    }
    return {
      name: config.name,
      kind: "serper",
      images: true,
      web: (query) =>
        Effect.gen(function*() {
          const { body: b, unapplied } = body(query)
          const answer = yield* post("/search", b)
          const organic = field(answer, "organic")
          if (!Array.isArray(organic)) return yield* Effect.fail(http.fail("bad_response", "the answer has no organic array"))
          const now = yield* Clock.currentTimeMillis
          return { hits: organicHits(organic, now, query.num), unapplied }
        }),
      image: (query) =>
        Effect.gen(function*() {
          const { body: b, unapplied } = body(query)
          const answer = yield* post("/images", b)
          const images = field(answer, "images")
          if (!Array.isArray(images)) return yield* Effect.fail(http.fail("bad_response", "the answer has no images array"))
          const hits: Array<ImageResult> = []
          for (const r of images) {
            const url = str(field(r, "imageUrl"))
            if (url === "") continue
            hits.push({ url, refUrl: str(field(r, "link")), title: str(field(r, "title")) })
          }
          return { hits: hits.slice(0, query.num), unapplied: forImages(unapplied) }
        })
    }
  })

export const SerperProvider = { make } as const
