/**
 * How much an exact ranking has to look at as the corpus grows: the question behind issue 13's
 * 1M/100k share. Each query of the scale bench is ranked twice on each snapshot:
 *
 * - by the engine (rankTopK, one thread, the top 15 the server ranks before its proximity pass),
 *   timed, the best of `--runs`;
 * - by an oracle of score-at-a-time ranking, the way impact-ordered indexes rank: every word's
 *   postings sorted by the score they add (exactly, posting by posting: no index keeps them that
 *   finely), taken from whichever word's next posting adds most, each document met for the first
 *   time scored whole, until what the words' next postings could add together falls below the
 *   k-th score found. It counts the documents it scored. No score-at-a-time ranking with exact
 *   results can stop sooner with these bounds, and one that kept impacts in coarser steps would
 *   score more. The oracle's results must be the engine's, document for document and score for
 *   score, or the run fails.
 *
 * The table gives, per snapshot and query set, the engine's ranking time, the postings of the
 * queries' words and the documents the oracle scored, then how each grows from the smallest
 * snapshot to the largest. If the oracle's count grows about as much as the engine's time, ranking
 * in impact order would not make the largest snapshot's share better.
 *
 *   node test/bench/rankingBound.ts [--runs 3] [--worst 10]
 *
 * On the snapshots the scale bench left in .cache/bench/scale (100k and 1M passages; run
 * node test/bench/scale.ts first), each in a fresh process; without them this skips. A
 * diagnostic, not in `npm run bench`.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { openInPlace } from "../../adapters/node/snapshotFile.ts"
import { endOfPostings, type InvertedIndex, PostingCursor } from "../../core/index/InvertedIndex.ts"
import { type CompiledQuery, proximityDepth, type RankedDocuments, rankTopK } from "../../core/index/Ranker.ts"
import { TopK } from "../../core/index/TopK.ts"
import { alignedTable } from "./support/alignedTable.ts"
import type { BenchQueries } from "./support/benchQueries.ts"
import { lastJsonLine } from "./support/jsonlLines.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const root = resolve(import.meta.dirname, "../..")
const scaleCache = join(root, ".cache/bench/scale")
const k = proximityDepth

interface QueryRow {
  readonly set: "AND-like" | "OR-like"
  readonly query: string
  /** The engine's ranking time (best of the runs). */
  readonly ms: number
  /** Postings of the query's words together. */
  readonly postings: number
  /** Documents the score-at-a-time oracle scored before it could stop. */
  readonly scored: number
}

/** One word's postings, highest score first (ties: smaller document first). */
interface ScoreOrdered {
  readonly docs: Int32Array
  readonly scores: Float64Array
}

/**
 * The oracle (see the top): the documents it scored, and its top k. `contributions[i]` is a
 * per-document array for word i, zero everywhere, left zero again on return.
 */
const scoreAtATime = (index: InvertedIndex, query: CompiledQuery, cluster: Int32Array, contributions: Array<Float64Array>) => {
  const lists: Array<ScoreOrdered> = query.terms.map((term, i) => {
    const cursor = new PostingCursor(index, term.termId, term.weight)
    const docs = new Int32Array(cursor.df)
    const scores = new Float64Array(cursor.df)
    let n = 0
    for (; cursor.doc !== endOfPostings; cursor.next(), n++) {
      docs[n] = cursor.doc
      scores[n] = cursor.score()
    }
    cursor.close()
    const byScore = Array.from(docs.keys()).sort((a, b) => scores[b]! - scores[a]! || docs[a]! - docs[b]!)
    const contribution = contributions[i] ??= new Float64Array(index.documentCount)
    for (let j = 0; j < n; j++) contribution[docs[j]!] = scores[j]!
    return { docs: Int32Array.from(byScore, (j) => docs[j]!), scores: Float64Array.from(byScore, (j) => scores[j]!) }
  })
  const m = lists.length
  const next = new Int32Array(m)
  const seen = new Set<number>()
  const heap = new TopK(k, cluster)
  for (;;) {
    let best = -1
    let bestScore = 0
    let frontier = 0
    for (let i = 0; i < m; i++) {
      const list = lists[i]!
      const s = next[i]! < list.docs.length ? list.scores[next[i]!]! : 0
      frontier += s
      if (s > bestScore) {
        bestScore = s
        best = i
      }
    }
    // No document left unscored can beat the k-th score: what it could add is below it.
    if (best < 0 || (heap.full && frontier < heap.threshold)) break
    const doc = lists[best]!.docs[next[best]!++]!
    if (seen.has(doc)) continue
    seen.add(doc)
    // Summed in the query's word order, as the engine sums: equal documents tie exactly.
    let score = 0
    for (let i = 0; i < m; i++) score += contributions[i]![doc]!
    heap.offer(doc, score)
  }
  for (let i = 0; i < m; i++) for (const doc of lists[i]!.docs) contributions[i]![doc] = 0
  return { scored: seen.size, top: heap.sorted() }
}

/** In a fresh process: one row per query of the snapshot, as one JSON line. */
const worker = async (snapshot: string, queriesPath: string, runs: number) => {
  const queries = JSON.parse(readFileSync(queriesPath, "utf8")) as BenchQueries
  const { index, settled } = await Effect.runPromise(openInPlace(snapshot, { rankingThreads: 1 }))
  await settled
  const web = index.parts.web
  const cluster = index.parts.pageCluster
  const all = [...queries.andLike.map((query) => ["AND-like", query] as const), ...queries.orLike.map((query) => ["OR-like", query] as const)]
  const compiled = all.map(([, query]) => index.compile(query))
  for (const query of compiled) if (query !== undefined) rankTopK(web, query, k, cluster) // warm-up
  const contributions: Array<Float64Array> = []
  const rows: Array<QueryRow> = []
  for (let q = 0; q < all.length; q++) {
    const [set, text] = all[q]!
    const query = compiled[q]
    if (query === undefined) continue
    // runs is at least 1 (wholeNumberOption), so the last run's ranking is compared below.
    let ms = Infinity
    let ranked: RankedDocuments | undefined
    for (let r = 0; r < runs; r++) {
      const start = performance.now()
      ranked = rankTopK(web, query, k, cluster)
      ms = Math.min(ms, performance.now() - start)
    }
    if (ranked === undefined) throw new Error("--runs must be at least 1")
    const oracle = scoreAtATime(web, query, cluster, contributions)
    const same = oracle.top.docs.length === ranked.docs.length &&
      oracle.top.docs.every((doc, i) => doc === ranked.docs[i] && oracle.top.scores[i] === ranked.scores[i])
    if (!same) throw new Error(`"${text}": the oracle's top ${k} differs from the engine's; the oracle is wrong`)
    let postings = 0
    for (const term of query.terms) postings += web.arrays.termDf[term.termId]!
    rows.push({ set, query: text, ms, postings, scored: oracle.scored })
  }
  process.stdout.write(`${JSON.stringify({ documents: index.documentCount, rows })}\n`)
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: "string", default: "3" }, worst: { type: "string", default: "10" } }
})
if (positionals[0] === "worker") {
  await worker(positionals[1]!, positionals[2]!, Number(positionals[3]))
  process.exit(0)
}
const runs = wholeNumberOption("--runs", values.runs)
const worst = wholeNumberOption("--worst", values.worst)

const queriesPath = join(scaleCache, "queries.json")
const snapshots = [
  { label: "100k", snapshot: join(scaleCache, "snapshots/periscope-100k.bin") },
  { label: "1M", snapshot: join(scaleCache, "snapshots/periscope-1M.bin") }
].filter((s) => existsSync(s.snapshot))
if (snapshots.length === 0 || !existsSync(queriesPath)) {
  const reason = "no scale snapshots in .cache/bench/scale: run node test/bench/scale.ts first"
  if (process.env.CI === "true") throw new Error(reason)
  console.log(`[skip] ${reason}`)
  process.exit(0)
}

const results = snapshots.map(({ label, snapshot }) => {
  process.stdout.write(`ranking the scale queries on ${label} ... `)
  const output = execFileSync(process.execPath, ["--max-old-space-size=12000", import.meta.filename, "worker", snapshot, queriesPath, String(runs)], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 << 20,
    // A worker that never answers fails the run (the 1M snapshot's takes a few minutes here).
    timeout: 3_600_000
  })
  console.log("done")
  return { label, ...(lastJsonLine(output) as { documents: number; rows: Array<QueryRow> }) }
})

const sum = (rows: ReadonlyArray<QueryRow>, pick: (row: QueryRow) => number) => rows.reduce((total, row) => total + pick(row), 0)
const sets = ["AND-like", "OR-like"] as const
console.log(`\nExact top ${k}, one thread, the engine's ranking time the best of ${runs} runs a query; ${process.version}\n`)
const header = ["snapshot", "set", "queries", "engine ranking ms", "postings of their words", "documents the oracle scored"]
const rows = results.flatMap((r) =>
  sets.map((set) => {
    const of = r.rows.filter((row) => row.set === set)
    return [`${r.label} (${r.documents.toLocaleString("en-US")})`, set, String(of.length), sum(of, (x) => x.ms).toFixed(1), sum(of, (x) => x.postings).toLocaleString("en-US"), sum(of, (x) => x.scored).toLocaleString("en-US")]
  })
)
console.log(alignedTable(header, rows))

if (results.length === 2) {
  const [small, large] = results as [typeof results[0], typeof results[0]]
  console.log(`\nGrowth from ${small.label} to ${large.label} (the share target asks the time to grow at most 2x, snippets included):`)
  for (const set of sets) {
    const a = small.rows.filter((row) => row.set === set)
    const b = large.rows.filter((row) => row.set === set)
    const ratio = (pick: (row: QueryRow) => number) => (sum(b, pick) / sum(a, pick)).toFixed(2)
    console.log(`  ${set}: engine ranking time ${ratio((x) => x.ms)}x, postings ${ratio((x) => x.postings)}x, documents the oracle scored ${ratio((x) => x.scored)}x`)
  }
  const byQuery = new Map(small.rows.map((row) => [`${row.set}\t${row.query}`, row]))
  console.log(`\nThe ${worst} queries with the most ranking time on ${large.label} (${small.label} -> ${large.label}):`)
  for (const row of [...large.rows].sort((x, y) => y.ms - x.ms).slice(0, worst)) {
    const before = byQuery.get(`${row.set}\t${row.query}`)
    const was = (pick: (r: QueryRow) => number, digits: number) => (before === undefined ? "-" : pick(before).toFixed(digits))
    console.log(`  "${row.query}" (${row.set}): ${was((r) => r.ms, 2)} -> ${row.ms.toFixed(2)} ms, oracle scored ${was((r) => r.scored, 0)} -> ${row.scored} documents`)
  }
}
