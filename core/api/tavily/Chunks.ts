/**
 * Tavily's chunks: a page's passages most relevant to the query (core/search/Highlights.ts, the
 * one passage choice every path shares), at most `count` of them, in page order, joined with
 * " [...] " as Tavily joins its chunks; a short page too gives chunks, not its whole text.
 */
import { type HighlightQuery, highlights, PASSAGE_CHARS, PASSAGE_SEPARATOR } from "../../search/Highlights.ts"

/** The best `count` passages of `text` for the query; "" when the page has no text. */
export const chunksOf = (text: string, query: HighlightQuery, count: number): string =>
  highlights(text, query, { maxChars: count * (PASSAGE_CHARS + PASSAGE_SEPARATOR.length), maxPassages: count, wholeWhenFits: false })
