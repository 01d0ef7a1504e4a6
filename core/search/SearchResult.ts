/**
 * Domain schemas of search answers. The wire envelope (core/api) wraps these;
 * the embed library returns them as they are.
 */
import { Schema } from "effect"

/** One ranked page of a web search. `position` runs 1..n in ranking order. */
export const WebResult = Schema.Struct({
  title: Schema.String,
  link: Schema.String,
  snippet: Schema.String,
  position: Schema.Int,
  /** ISO 8601 (`YYYY-MM-DD` or a full timestamp) or null when the page states no date. */
  date: Schema.NullOr(Schema.String),
  /** Only when the search asked for content (highlights, markdown or text): the page's passages or main content, else its snippet. */
  content: Schema.optionalKey(Schema.String)
})
export type WebResult = typeof WebResult.Type

/** The `data` of a web search: the results and the query actually searched. */
export const WebSearchData = Schema.Struct({
  organic: Schema.Array(WebResult),
  query: Schema.String
})
export type WebSearchData = typeof WebSearchData.Type

/**
 * One image of an image search; `title` may be empty but is never missing. `width` and
 * `height` (pixels) are there only when the source knows them (clients of the search API read them).
 */
export const ImageResult = Schema.Struct({
  url: Schema.String,
  refUrl: Schema.String,
  title: Schema.String,
  width: Schema.optionalKey(Schema.Int),
  height: Schema.optionalKey(Schema.Int)
})
export type ImageResult = typeof ImageResult.Type

/** A ranked hit as a backend produces it, before positions are assigned. */
export interface WebHit {
  readonly title: string
  readonly link: string
  readonly snippet: string
  readonly date: string | null
}

/** Numbers the hits 1..n: positions are assigned in one place, after ranking. */
export const toWebSearchData = (query: string, hits: ReadonlyArray<WebHit>): WebSearchData => ({
  organic: hits.map((hit, i) => ({
    title: hit.title,
    link: hit.link,
    snippet: hit.snippet,
    position: i + 1,
    date: hit.date
  })),
  query
})
