/**
 * The relevance bench's query expansion rows: Periscope with RM3 (expand: true, its default
 * settings) beside Xapian 1.4's own expansion (its ESet of the best terms of the query's first
 * documents, added with OP_OR as Xapian's documentation does relevance feedback), both from 10
 * documents and 10 terms; and what expansion costs a query as webSearch serves it (top 10 with
 * snippets), against the plain query (medians over the collection's queries, several rounds),
 * every feedback page analysed afresh (the term vectors kept from earlier queries forgotten).
 */
import { defaultExpansionSettings, expandQuery, type ExpansionSettings, forgetTermVectors, rankExpanded, searchExpanded } from "../../../core/index/Expansion.ts"
import { IndexBuilder } from "../../../core/index/IndexBuilder.ts"
import { PageField, type SearchIndex } from "../../../core/index/SearchIndex.ts"
import type { Collection } from "./smart.ts"
import { xapianMissing, xapianRanking } from "./xapianPeer.ts"

type Run = Map<string, Array<string>>

/** The URLs of a query's best `k` pages, expanded or not. */
export const rankedUrls = (index: SearchIndex, text: string, k: number, expand: boolean, settings: ExpansionSettings = defaultExpansionSettings): Array<string> => {
  if (!expand) return index.rank(text, k).map((r) => r.url)
  const expansion = expandQuery(index, text, settings)
  if (expansion === undefined) return []
  return Array.from(rankExpanded(index, expansion, k).docs, (doc) => index.parts.pages.get(doc, PageField.Url))
}

const median = (values: Array<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

export interface ExpansionRows {
  readonly rows: Array<[string, Run]>
  /** Median milliseconds of a query served (10 results with snippets), plain and expanded. */
  readonly plainMs: number
  readonly expandedMs: number
}

export const expansionRows = (
  c: Collection,
  docUrl: (collection: string, id: string) => string,
  idOfUrl: (url: string) => string,
  queryText: (text: string) => string,
  depth: number,
  titleWeight: number
): ExpansionRows => {
  const builder = new IndexBuilder()
  builder.add(c.documents.map((d) => ({ url: docUrl(c.name, d.id), title: d.title, text: d.text })))
  const index = builder.build()
  const queries = c.queries.map((q) => ({ id: q.id, text: queryText(q.text) }))
  const { documents, terms, originalWeight } = defaultExpansionSettings
  const rows: Array<[string, Run]> = [
    [`Periscope + RM3 expansion (${documents} pages, ${terms} words, query weight ${originalWeight})`, new Map(queries.map((q) => [q.id, rankedUrls(index, q.text, depth, true).map(idOfUrl)]))]
  ]
  if (xapianMissing() === undefined) {
    rows.push([`Xapian 1.4 BM25 + its ESet expansion (${documents} documents, ${terms} terms)`, xapianRanking(c.documents, queries, titleWeight, depth, { feedback: { documents, terms } })])
  }
  // Plain and expanded in turn, query by query, three rounds after one for the JIT.
  const plain: Array<number> = []
  const expanded: Array<number> = []
  for (let round = 0; round < 4; round++) {
    for (const q of queries) {
      let start = performance.now()
      index.search(q.text, 10)
      const a = performance.now() - start
      forgetTermVectors(index)
      start = performance.now()
      searchExpanded(index, q.text, 10)
      const b = performance.now() - start
      if (round > 0) {
        plain.push(a)
        expanded.push(b)
      }
    }
  }
  return { rows, plainMs: median(plain), expandedMs: median(expanded) }
}
