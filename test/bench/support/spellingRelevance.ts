/**
 * The relevance bench's Did you mean rows: every query with one deterministic typo (the n-th
 * query gets a deletion, a transposition or a substitution in turn, in a word of four letters or
 * more picked by a seeded generator, at a seeded place; substitutions by a seeded other letter
 * a-z), ranked by Periscope as typed and through its spelling (the corrected query searched when
 * the engine would search it, as webSearch does), beside Xapian 1.4 as typed and through its own
 * spelling correction; and the clean queries through Periscope's spelling, which must lose nothing.
 * Also what spelling costs a query, clean and misspelt (medians over the collection's queries).
 */
import { IndexBuilder } from "../../../core/index/IndexBuilder.ts"
import type { SearchIndex } from "../../../core/index/SearchIndex.ts"
import { spellQuery } from "../../../core/index/Spelling.ts"
import { seededRandom } from "./seededRandom.ts"
import type { Collection } from "./smart.ts"
import { xapianMissing, xapianRanking } from "./xapianPeer.ts"

type Run = Map<string, Array<string>>

const letters = "abcdefghijklmnopqrstuvwxyz"
export const typoKinds = ["deletion", "transposition", "substitution"] as const

/** `text` with one typo of `kind` in one of its words of four letters or more (the text as it is when it has none). */
export const withTypo = (text: string, kind: typeof typoKinds[number], random: () => number): string => {
  const words = text.split(" ")
  const eligible = words.flatMap((w, i) => (/^[A-Za-z]{4,}$/.test(w) ? [i] : []))
  if (eligible.length === 0) return text
  const at = eligible[Math.floor(random() * eligible.length)]!
  const w = words[at]!
  if (kind === "deletion") {
    const p = Math.floor(random() * w.length)
    words[at] = w.slice(0, p) + w.slice(p + 1)
  } else if (kind === "transposition") {
    // Two different letters side by side (swapping equal ones changes nothing).
    const places = Array.from({ length: w.length - 1 }, (_, p) => p).filter((p) => w[p] !== w[p + 1])
    if (places.length === 0) return text
    const p = places[Math.floor(random() * places.length)]!
    words[at] = w.slice(0, p) + w[p + 1] + w[p] + w.slice(p + 2)
  } else {
    const p = Math.floor(random() * w.length)
    const others = letters.split("").filter((c) => c !== w[p]!.toLowerCase())
    words[at] = w.slice(0, p) + others[Math.floor(random() * others.length)] + w.slice(p + 1)
  }
  return words.join(" ")
}

/** Each query with one typo, the kinds in turn, from one seed. */
export const typoQueries = (queries: ReadonlyArray<{ readonly id: string; readonly text: string }>, seed: number) => {
  const random = seededRandom(seed)
  return queries.map((q, i) => ({ id: q.id, text: withTypo(q.text, typoKinds[i % typoKinds.length]!, random) }))
}

/** The query webSearch would search: corrected when the engine would search the correction. */
const spelled = (index: SearchIndex, text: string) => {
  const spelling = spellQuery(index, text)
  return spelling?.searched === true ? spelling.query : text
}

const median = (values: Array<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

export interface SpellingRows {
  readonly rows: Array<[string, Run]>
  /** Median microseconds of spelling per query: clean queries (all words known: the check alone), misspelt ones. */
  readonly cleanMicros: number
  readonly typoMicros: number
  /** Queries whose typo the engine corrected back to the clean query's words, and queries it searched corrected. */
  readonly fixed: number
  readonly searched: number
  readonly queries: number
}

export const spellingRows = (
  c: Collection,
  docUrl: (collection: string, id: string) => string,
  idOfUrl: (url: string) => string,
  queryText: (text: string) => string,
  depth: number,
  titleWeight: number,
  seed: number
): SpellingRows => {
  const builder = new IndexBuilder()
  builder.add(c.documents.map((d) => ({ url: docUrl(c.name, d.id), title: d.title, text: d.text })))
  const index = builder.build()
  const clean = c.queries.map((q) => ({ id: q.id, text: queryText(q.text) }))
  const typos = typoQueries(clean, seed)
  const rank = (queries: ReadonlyArray<{ id: string; text: string }>): Run =>
    new Map(queries.map((q) => [q.id, index.rank(q.text, depth).map((r) => idOfUrl(r.url))]))
  const timed = (queries: ReadonlyArray<{ id: string; text: string }>) => {
    // A first pass for the JIT, then each query timed on its own in a second.
    for (const q of queries) spellQuery(index, q.text)
    const micros: Array<number> = []
    const out = queries.map((q) => {
      const start = performance.now()
      const text = spelled(index, q.text)
      micros.push((performance.now() - start) * 1000)
      return { id: q.id, text }
    })
    return { out, micros }
  }
  const cleanSpelled = timed(clean)
  const typoSpelled = timed(typos)
  const fixed = typoSpelled.out.filter((q, i) => q.text.toLowerCase() === clean[i]!.text.toLowerCase()).length
  const searched = typoSpelled.out.filter((q, i) => q.text !== typos[i]!.text).length
  const rows: Array<[string, Run]> = [
    ["Periscope, clean queries, spelling on", rank(cleanSpelled.out)],
    ["Periscope, one typo per query, spelling off", rank(typos)],
    ["Periscope, one typo per query, spelling on", rank(typoSpelled.out)]
  ]
  const missing = xapianMissing()
  if (missing === undefined) {
    rows.push(
      [`Xapian 1.4 BM25 (title x${titleWeight}), one typo per query`, xapianRanking(c.documents, typos, titleWeight, depth)],
      [`Xapian 1.4 BM25 + its spelling correction, one typo per query`, xapianRanking(c.documents, typos, titleWeight, depth, { spelling: true })],
      [`Xapian 1.4 BM25 + its spelling correction, clean queries`, xapianRanking(c.documents, clean, titleWeight, depth, { spelling: true })]
    )
  }
  return { rows, cleanMicros: median(cleanSpelled.micros), typoMicros: median(typoSpelled.micros), fixed, searched, queries: clean.length }
}
