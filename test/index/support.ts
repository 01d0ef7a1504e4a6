/** Small helpers shared by the index tests. */
import type { IndexDocument } from "../../core/index/Document.ts"
import { type EngineOptions, IndexBuilder } from "../../core/index/IndexBuilder.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"

export const buildIndex = (docs: ReadonlyArray<IndexDocument>, options?: EngineOptions): SearchIndex => {
  const builder = new IndexBuilder(options)
  const report = builder.add(docs)
  if (report.rejected.length > 0) throw new Error(`test documents rejected: ${JSON.stringify(report.rejected)}`)
  return builder.build()
}

/** Plain BM25 on the text field only, no proximity, no collapsing: scores are checkable by hand. */
export const plainBm25: EngineOptions = { fieldWeights: { title: 0, body: 1, url: 0 }, proximity: 0, nearDuplicateBits: -1 }

/** A ranked document as the exactness tests compare it: its score to nine places, then its id. */
export const rankKey = (score: number, doc: number) => `${score.toFixed(9)}:${doc}`

export const links = (index: SearchIndex, query: string, limit = 10) => index.search(query, limit).hits.map((h) => h.link)

/** mulberry32, for reproducible random corpora. */
export const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/**
 * `count` pages at https://t.example/00000 on, each titled with 1-3 words of `pick` and holding a
 * `paragraph()`; every tenth repeats the one before at another URL (near-duplicates to collapse).
 */
export const pagesWithNearDuplicates = (count: number, random: () => number, pick: () => string, paragraph: () => string): Array<IndexDocument> => {
  const docs: Array<IndexDocument> = []
  for (let i = 0; i < count; i++) {
    const url = `https://t.example/${String(i).padStart(5, "0")}`
    const before = docs[i - 1]
    docs.push(i % 10 === 9 && before !== undefined
      ? { url, title: before.title, text: before.text }
      : { url, title: Array.from({ length: 1 + Math.floor(random() * 3) }, pick).join(" "), text: paragraph() })
  }
  return docs
}
