/**
 * Web and image search over an OpenSearch or Elasticsearch index loaded by
 * `periscope index --to opensearch://...` (mapping: OpenSearchMapping.ts), for
 * a corpus that outgrows one machine. Web search is BM25 `multi_match` over
 * `title^3` and `body`, snippets from the `body` highlighter (its <em> markup
 * taken out: snippets are plain text, as the engine's), the page's date as
 * stored. Image search matches the nested `images` of the same documents and
 * answers the images that matched (inner_hits), with their sizes.
 *
 * A request carrying `freshness` (the federation passes its whole query) gets
 * a `range` filter on `date`, so the cluster drops undated and older pages
 * before ranking, as the local engine's filter does after. Every failure is a
 * SearchBackendError: unreachable or missing index 503, timeout 504, anything
 * else the cluster refuses 502; messages never carry the credentials.
 */
import { Effect, Layer } from "effect"
import type { HttpClient } from "effect/http"
import { ImageSearch } from "../../search/ImageSearch.ts"
import { SearchBackendError } from "../../search/SearchError.ts"
import type { SearchQuery } from "../../search/SearchQuery.ts"
import { type ImageResult, toWebSearchData, type WebHit } from "../../search/SearchResult.ts"
import { WebSearch } from "../../search/WebSearch.ts"
import { type OpenSearchConnection, type OpenSearchError, openSearchRequest } from "./OpenSearchConnection.ts"

const SNIPPET_CHARS = 200
const SNIPPET_FRAGMENTS = 2
/** Images shown per matching page, before the answer is cut to `num`. */
const IMAGES_PER_PAGE = 5

const FRESHNESS_MATH = { day: "now-1d", week: "now-7d", month: "now-1M", year: "now-1y" } as const

/** The `range` filter of a query's freshness, or undefined when it has none. */
export const freshnessFilter = (query: SearchQuery): object | undefined => {
  const freshness = query.freshness
  if (freshness === undefined) return undefined
  if (typeof freshness === "string") return { range: { date: { gte: FRESHNESS_MATH[freshness] } } }
  return { range: { date: { gte: freshness.from, lte: freshness.to, format: "yyyy-MM-dd" } } }
}

const withFilter = (must: object, query: SearchQuery) => {
  const filter = freshnessFilter(query)
  return filter === undefined ? must : { bool: { must, filter: [filter] } }
}

/** The `_search` body of a web search. */
export const webSearchBody = (query: SearchQuery) => ({
  from: 0,
  size: query.num,
  track_total_hits: false,
  _source: ["url", "title", "date"],
  query: withFilter({ multi_match: { query: query.keywords, fields: ["title^3", "body"], type: "best_fields" } }, query),
  highlight: {
    pre_tags: ["<em>"],
    post_tags: ["</em>"],
    fields: { body: { fragment_size: SNIPPET_CHARS, number_of_fragments: SNIPPET_FRAGMENTS, no_match_size: SNIPPET_CHARS } }
  }
})

/** The `_search` body of an image search: pages whose images match, with the matching images. */
export const imageSearchBody = (query: SearchQuery) => ({
  from: 0,
  size: query.num,
  track_total_hits: false,
  _source: ["url", "title"],
  query: withFilter({
    nested: {
      path: "images",
      score_mode: "max",
      query: {
        multi_match: { query: query.keywords, fields: ["images.alt^3", "images.title^3", "images.caption^2", "images.heading"] }
      },
      inner_hits: { size: IMAGES_PER_PAGE }
    }
  }, query)
})

const record = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null ? value as Record<string, unknown> : {})
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const str = (value: unknown): string => (typeof value === "string" ? value : "")
const pixels = (value: unknown): number | undefined => (typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined)

/** Highlighter fragments as plain snippet text. */
export const snippetOf = (fragments: ReadonlyArray<unknown>): string =>
  fragments.map((f) => str(f).replace(/<\/?em>/g, "").replace(/\s+/g, " ").trim()).filter((f) => f !== "").join(" … ")

const hitsOf = (body: unknown) => list(record(record(body).hits).hits)

/** A web search answer's hits in ranking order. */
export const webHitsOf = (body: unknown): Array<WebHit> =>
  hitsOf(body).flatMap((hit): Array<WebHit> => {
    const source = record(record(hit)._source)
    const link = str(source.url)
    if (link === "") return []
    const date = str(source.date)
    return [{
      title: str(source.title) || link,
      link,
      snippet: snippetOf(list(record(record(hit).highlight).body)),
      date: date === "" ? null : date
    }]
  })

/** An image search answer's images in ranking order, one per image URL, at most `num`. */
export const imageResultsOf = (body: unknown, num: number): Array<ImageResult> => {
  const out: Array<ImageResult> = []
  const seen = new Set<string>()
  for (const hit of hitsOf(body)) {
    const page = record(record(hit)._source)
    const inner = list(record(record(record(record(hit).inner_hits).images).hits).hits)
    for (const image of inner) {
      const source = record(record(image)._source)
      const url = str(source.url)
      if (url === "" || seen.has(url)) continue
      seen.add(url)
      const width = pixels(source.width)
      const height = pixels(source.height)
      out.push({
        url,
        refUrl: str(page.url),
        title: str(source.title) || str(source.alt) || str(source.caption),
        ...(width === undefined ? {} : { width }),
        ...(height === undefined ? {} : { height })
      })
      if (out.length === num) return out
    }
  }
  return out
}

/** The cluster's failure as the error the API renders; the message is safe to show. */
const backendError = (index: string) => (error: OpenSearchError): SearchBackendError => {
  switch (error.reason) {
    case "unreachable":
      return new SearchBackendError({ reason: "unavailable", message: "the search cluster cannot be reached" })
    case "timeout":
      return new SearchBackendError({ reason: "timeout", message: "the search cluster did not answer in time" })
    case "not_found":
      return new SearchBackendError({ reason: "unavailable", message: `the search index ${JSON.stringify(index)} does not exist yet; load it with periscope index --to` })
    case "rate_limited":
      return new SearchBackendError({ reason: "unavailable", message: "the search cluster is overloaded (429); try again shortly" })
    default:
      return new SearchBackendError({ reason: "upstream", message: `the search cluster refused the query (${error.status ?? error.reason})` })
  }
}

const search = (connection: OpenSearchConnection, body: object) =>
  openSearchRequest(connection, { method: "POST", path: `/${encodeURIComponent(connection.index)}/_search`, json: body }).pipe(
    Effect.tapError((error) => Effect.logWarning(`opensearch: ${error.message}`)),
    Effect.mapError(backendError(connection.index)),
    Effect.map((answer) => answer.body)
  )

export const OpenSearchSearch = {
  /** WebSearch and ImageSearch over the index of `connection`, through the HttpClient in context. */
  layer: (connection: OpenSearchConnection): Layer.Layer<WebSearch | ImageSearch, never, HttpClient.HttpClient> =>
    Layer.mergeAll(
      Layer.effect(WebSearch, Effect.map(Effect.context<HttpClient.HttpClient>(), (context) =>
        WebSearch.of({
          search: Effect.fn("WebSearch.search")(function*(query: SearchQuery) {
            const body = yield* search(connection, webSearchBody(query)).pipe(Effect.provideContext(context))
            return toWebSearchData(query.keywords, webHitsOf(body))
          })
        }))),
      Layer.effect(ImageSearch, Effect.map(Effect.context<HttpClient.HttpClient>(), (context) =>
        ImageSearch.of({
          search: Effect.fn("ImageSearch.search")(function*(query: SearchQuery) {
            const body = yield* search(connection, imageSearchBody(query)).pipe(Effect.provideContext(context))
            return imageResultsOf(body, query.num)
          })
        })))
    )
}
