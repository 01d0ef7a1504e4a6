/**
 * Warming an opened index before it serves: queries made from its own page titles, answered as
 * real ones are (ranking, snippets, image search), so the JIT has compiled the query path
 * before the first user waits.
 * Solr's firstSearcher warming queries do the same for its caches.
 *
 * Why: a server just started answers its first queries slower than later ones, until the JIT
 * has compiled the query path; the search bench's p99 right after a short warm-up is worse than
 * after these queries, which warm it as well as passes of the bench's own (test/bench/search.ts).
 */
import { PageField, type SearchIndex } from "./SearchIndex.ts"

export interface WarmUpOptions {
  /** Stop after this many queries. */
  readonly maxQueries: number
  /** Stop once this much time has gone (checked between queries). */
  readonly maxMs: number
}

export interface WarmUpReport {
  readonly queries: number
  readonly ms: number
}

/** What warming adds to a start by default: enough queries for the JIT, bounded for a large index. */
export const defaultWarmUp: WarmUpOptions = { maxQueries: 2_000, maxMs: 1_500 }

/**
 * Answers up to `maxQueries` queries within about `maxMs`: 2-4 words of one page's title, or
 * words of two pages' titles (words that rarely meet, as in a query of unrelated words), pages
 * picked by a fixed hash of the query's number; every eighth query also searches images.
 * Deterministic for an index; never throws on an index without pages or titles.
 */
export const warmUp = (index: SearchIndex, options: WarmUpOptions = defaultWarmUp): WarmUpReport => {
  const start = performance.now()
  let queries = 0
  if (index.documentCount === 0) return { queries, ms: 0 }
  for (; queries < options.maxQueries && performance.now() - start < options.maxMs; queries++) {
    const query = warmUpQuery(index, queries)
    index.search(query, 10)
    if (queries % 8 === 0 && index.imageCount > 0) index.searchImages(query, 10)
  }
  return { queries, ms: performance.now() - start }
}

/** Warm-up query i of an index with pages: even ones 2-4 words of one title, odd ones 1-2 words of one and 2 of another. */
export const warmUpQuery = (index: SearchIndex, i: number): string => {
  const titleWords = (n: number): Array<string> =>
    index.parts.pages.get(pageFor(n, index.documentCount), PageField.Title).toLowerCase().match(titleWord) ?? []
  const words = titleWords(2 * i)
  return i % 2 === 0
    ? words.slice(0, 2 + (i % 3)).join(" ")
    : [...words.slice(0, 1 + ((i >>> 1) % 2)), ...titleWords(2 * i + 1).slice(0, 2)].join(" ")
}

// Words of three letters or more: shorter ones are mostly stop words and parts of identifiers.
const titleWord = /\p{L}[\p{L}\p{N}]{2,}/gu

/** The page of query i: a multiplicative hash, so consecutive queries read pages far apart. */
const pageFor = (i: number, pages: number): number => (Math.imul(i + 1, 0x9e3779b1) >>> 0) % pages
