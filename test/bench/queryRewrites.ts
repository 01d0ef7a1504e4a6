/**
 * What Did you mean and query expansion cost a query at 56,000 passages of Debian documentation
 * (the search bench's corpus and query sets, its snapshot when there is one):
 *
 * - spelling on queries with hits as typed (every word known: the check alone, what every query
 *   pays), and on the same queries with one typo each (support/spellingRelevance.ts's typos):
 *   the spelling step's own time (p50, p99), how many it corrected, and the whole answer
 *   (spelling, then the query searched) against the misspelt query searched as typed;
 * - expansion: a query served (10 results with snippets) expanded against plain, with every
 *   feedback page analysed afresh, and again with the pages analysed before (kept term vectors);
 * - the heap before and after, spelling keeping nothing per passage.
 *
 * Each query is timed alone, both ways in turn (paired), over `--rounds` rounds after one for
 * the JIT; medians and p99 are of those times.
 *
 * Run: node test/bench/queryRewrites.ts [--rounds 3] (with --expose-gc the heap is measured after a collection)
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { openInPlace } from "../../adapters/node/snapshotFile.ts"
import { engineWebAnswer } from "../../core/backends/EngineWebAnswer.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { defaultExpansionSettings, forgetTermVectors, searchExpanded } from "../../core/index/Expansion.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { spellQuery } from "../../core/index/Spelling.ts"
import { makeBenchQueries } from "./support/benchQueries.ts"
import { readJsonlLines } from "./support/jsonlLines.ts"
import { ensurePassageCorpus } from "./support/passageCorpus.ts"
import { percentile } from "./support/stats.ts"
import { typoQueries } from "./support/spellingRelevance.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" } } })
const rounds = wholeNumberOption("--rounds", values.rounds)

const corpus = ensurePassageCorpus(false)
if (corpus._tag === "Missing") {
  if (process.env.CI === "true") throw new Error(`query rewrite bench corpus missing under CI=true: ${corpus.reason}`)
  console.log(`[skip] Debian documentation corpus unavailable: ${corpus.reason}`)
  process.exit(0)
}
const documents = readJsonlLines<IndexDocument>(corpus.path)
const queries = makeBenchQueries(documents.map((d) => d.title))
const clean = [...queries.andLike, ...queries.orLike]

/** The search bench's snapshot when it holds this corpus, else the corpus built here. */
const loadIndex = async (): Promise<SearchIndex> => {
  const snapshot = join(corpus.path, "..", "snapshots", "periscope.bin")
  if (existsSync(snapshot)) {
    try {
      const { index, settled } = await Effect.runPromise(openInPlace(snapshot))
      await settled
      if (index.documentCount === documents.length) return index
    } catch {
      // Written by another version: build it again below.
    }
  }
  const builder = new IndexBuilder()
  builder.add(documents)
  return builder.build()
}
const index = await loadIndex()
const gc = (globalThis as { gc?: () => void }).gc
const heapMB = () => {
  gc?.()
  return process.memoryUsage().heapUsed / 1e6
}

/** Times `a` and `b` on each query in turn, `rounds` rounds after one for the JIT: their times in ms. */
const paired = (items: ReadonlyArray<string>, a: (q: string) => unknown, b: (q: string) => unknown) => {
  const times = { a: [] as Array<number>, b: [] as Array<number> }
  for (let round = 0; round <= rounds; round++) {
    for (const q of items) {
      let start = performance.now()
      a(q)
      const ta = performance.now() - start
      start = performance.now()
      b(q)
      const tb = performance.now() - start
      if (round > 0) {
        times.a.push(ta)
        times.b.push(tb)
      }
    }
  }
  const sorted = (xs: Array<number>) => [...xs].sort((x, y) => x - y)
  return { a: sorted(times.a), b: sorted(times.b) }
}
const ms = (x: number) => `${x.toFixed(3)} ms`
const p50 = (xs: ReadonlyArray<number>) => percentile(xs, 0.5)
const p99 = (xs: ReadonlyArray<number>) => percentile(xs, 0.99)

console.log(`corpus: ${index.documentCount} passages; queries: ${clean.length} (the search bench's AND-like and OR-like sets)`)
const heapBefore = heapMB()

const withHits = clean.filter((q) => index.search(q, 1).hits.length > 0)
const known = paired(withHits, (q) => spellQuery(index, q), (q) => index.search(q, 10))
console.log(
  `spelling, ${withHits.length} queries with hits as typed: the spelling step p50 ${ms(p50(known.a))}, p99 ${ms(p99(known.a))} ` +
    `(target: at most 0.2 ms p50); the query itself p50 ${ms(p50(known.b))}`
)

const typos = typoQueries(withHits.map((text, i) => ({ id: String(i), text })), 56).map((q) => q.text).filter((q, i) => q !== withHits[i])
const misspelt = paired(typos, (q) => spellQuery(index, q), (q) => index.search(q, 10))
const corrected = typos.filter((q) => spellQuery(index, q)?.searched === true).length
const suggested = typos.filter((q) => spellQuery(index, q) !== undefined).length
const served = paired(
  typos,
  (q) => engineWebAnswer(index, { keywords: q, num: 10 }, defaultExpansionSettings),
  (q) => index.search(q, 10)
)
console.log(
  `spelling, the same queries with one typo each (${typos.length}): the spelling step p50 ${ms(p50(misspelt.a))}, p99 ${ms(p99(misspelt.a))}; ` +
    `${suggested} corrected, ${corrected} of them searched corrected; the answer with spelling p50 ${ms(p50(served.a))} ` +
    `against the misspelt query searched as typed ${ms(p50(served.b))}`
)

const cold = paired(clean, (q) => index.search(q, 10), (q) => {
  forgetTermVectors(index)
  return searchExpanded(index, q, 10)
})
const warm = paired(clean, (q) => index.search(q, 10), (q) => searchExpanded(index, q, 10))
console.log(
  `expansion (RM3: ${defaultExpansionSettings.documents} pages, ${defaultExpansionSettings.terms} words): a query served p50 ` +
    `${ms(p50(cold.b))} expanded, feedback pages analysed afresh, against ${ms(p50(cold.a))} plain ` +
    `(${(p50(cold.b) / p50(cold.a)).toFixed(2)}x, target at most 3x); with the pages' term vectors kept ` +
    `${ms(p50(warm.b))} (${(p50(warm.b) / p50(warm.a)).toFixed(2)}x)`
)
const heapAfter = heapMB()
console.log(`heap ${heapBefore.toFixed(1)} MB before, ${heapAfter.toFixed(1)} MB after (spelling keeps no structure per passage; expansion keeps at most 131,072 words of term vectors)`)
process.exit(0)
