/**
 * Any endpoint that speaks our own wire API: the seed's provider or another Periscope.
 * POST /api/search/webSearch and /imageSearch {keywords, num} with a bearer key, answers in
 * the {success, code, message, exception, data, extra} envelope. A Periscope peer applies
 * our options itself (`forwardOptions`, the default); the seed's provider knows none, so
 * with forwardOptions false freshness is filtered our side and the rest reported ignored.
 */
import { Clock, Effect, Redacted } from "effect"
import { HttpClientRequest } from "effect/http"
import { type ProviderOption, PROVIDER_OPTIONS, type SearchQuery } from "../../search/SearchQuery.ts"
import type { SearchProvider } from "../../search/SearchProvider.ts"
import type { ImageResult } from "../../search/SearchResult.ts"
import { endpoint, field, makeProviderHttp, organicHits, type ProviderConfig, str } from "./ProviderHttp.ts"
import { forImages, unappliedOptions } from "./ProviderOptions.ts"

export interface IflowConfig extends ProviderConfig {
  /** Send freshness, language, region and safeSearch on (a Periscope peer applies them). Default true. */
  readonly forwardOptions?: boolean | undefined
  /** The most results one request may ask for (the seed's client caps num at 20). Default 100. */
  readonly maxNum?: number | undefined
}

const ALL: ReadonlySet<ProviderOption> = new Set(PROVIDER_OPTIONS)
const NONE: ReadonlySet<ProviderOption> = new Set()

export const make = (config: IflowConfig) =>
  Effect.map(makeProviderHttp(config), (http): SearchProvider => {
    const forward = config.forwardOptions !== false
    const maxNum = config.maxNum ?? 100
    const post = (path: string, query: SearchQuery) => {
      const b: Record<string, unknown> = { keywords: query.keywords, num: Math.min(query.num, maxNum) }
      if (forward) {
        for (const option of PROVIDER_OPTIONS) if (query[option] !== undefined) b[option] = query[option]
      }
      let request = HttpClientRequest.post(endpoint(config.baseUrl, path)).pipe(HttpClientRequest.bodyJsonUnsafe(b))
      if (config.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, Redacted.value(config.apiKey))
      return Effect.flatMap(http.json(request), (answer) => {
        // An envelope that says failure with HTTP 200 (the seed's provider does this).
        if (field(answer, "success") === false) {
          const code = str(field(answer, "code"))
          const message = str(field(answer, "message")) || str(field(answer, "exception", "detail")) || "the provider answered success: false"
          const reason = code === "40303" ? "rate_limited" : code === "90402" ? "unauthorized" : "unavailable"
          return Effect.fail(http.fail(reason, `${message} (code ${code || "none"})`))
        }
        return Effect.succeed(field(answer, "data"))
      })
    }
    const unapplied = (query: SearchQuery) => unappliedOptions(query, forward ? ALL : NONE, {
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
          const data = yield* post("/api/search/webSearch", query)
          const organic = field(data, "organic")
          if (!Array.isArray(organic)) return yield* Effect.fail(http.fail("bad_response", "the answer has no data.organic array"))
          const now = yield* Clock.currentTimeMillis
return { hits: organicHits(organic, now, query.num), unapplied: unapplied(query) }
        }),
      image: (query) =>
        Effect.gen(function*() {
          const data = yield* post("/api/search/imageSearch", query)
          if (!Array.isArray(data)) return yield* Effect.fail(http.fail("bad_response", "the answer's data is not an array"))
          const hits: Array<ImageResult> = []
          for (const r of data) {
            const url = str(field(r, "url"))
            if (url === "") continue
            hits.push({ url, refUrl: str(field(r, "refUrl")), title: str(field(r, "title")) })
          }
          return { hits: hits.slice(0, query.num), unapplied: forImages(unapplied(query)) }
        })
    }
  })

export const IflowProvider = { make } as const
