/**
 * How well the ranking's cost model picks between MaxScore and term at a time (Ranker.ts,
 * TermAtATime.ts): every query of a snapshot ranked with each strategy forced and with the
 * model's choice ("auto"), one thread, the best of `--runs` per query. Prints the total and p99
 * of each, and of an oracle that takes the quicker of the two for every query (what a perfect
 * model would reach), then the queries the model's choice cost most on.
 *
 *   node test/bench/rankStrategies.ts [--runs 5] [--worst 8]
 *
 * On the snapshots the search and scale benchmarks left in .cache/bench (56k passages with the
 * search bench's queries; 100k and 1M with the scale bench's); without them this skips. Each
 * snapshot in a fresh process. Rank only (no snippets): both strategies give the same results,
 * so only time differs.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { openInPlace } from "../../adapters/node/snapshotFile.ts"
import type { RankStrategy } from "../../core/index/Ranker.ts"
import type { BenchQueries } from "./support/benchQueries.ts"
import { lastJsonLine } from "./support/jsonlLines.ts"
import { percentile } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const root = resolve(import.meta.dirname, "../..")
const cache = join(root, ".cache/bench")
const strategies = ["auto", "maxScore", "termAtATime"] as const

interface QueryTimes {
  readonly query: string
  readonly ms: Record<(typeof strategies)[number], number>
}

/** In a fresh process: the best time of each strategy on each query, as one JSON line. */
const worker = async (snapshot: string, queriesPath: string, runs: number) => {
  const queries = JSON.parse(readFileSync(queriesPath, "utf8")) as BenchQueries
  const { index, settled } = await Effect.runPromise(openInPlace(snapshot, { rankingThreads: 1 }))
  await settled
  const all = [...queries.andLike, ...queries.orLike]
  const best = (query: string, strategy: RankStrategy) => {
    let fastest = Infinity
    for (let i = 0; i < runs; i++) {
      const start = performance.now()
      index.rank(query, 10, { strategy })
      fastest = Math.min(fastest, performance.now() - start)
    }
    return fastest
  }
  for (const strategy of strategies) for (const query of all) index.rank(query, 10, { strategy }) // warm-up
  const times: Array<QueryTimes> = all.map((query) => ({
    query,
    ms: { auto: best(query, "auto"), maxScore: best(query, "maxScore"), termAtATime: best(query, "termAtATime") }
  }))
  process.stdout.write(`${JSON.stringify({ documents: index.documentCount, times })}\n`)
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: "string", default: "5" }, worst: { type: "string", default: "8" } }
})
if (positionals[0] === "worker") {
  await worker(positionals[1]!, positionals[2]!, Number(positionals[3]))
  process.exit(0)
}
const runs = wholeNumberOption("--runs", values.runs)
const worst = wholeNumberOption("--worst", values.worst)

const snapshots = [
  { label: "56k", snapshot: join(cache, "snapshots/periscope.bin"), queries: join(cache, "queries.json") },
  { label: "100k", snapshot: join(cache, "scale/snapshots/periscope-100k.bin"), queries: join(cache, "scale/queries.json") },
  { label: "1M", snapshot: join(cache, "scale/snapshots/periscope-1M.bin"), queries: join(cache, "scale/queries.json") }
].filter((s) => existsSync(s.snapshot) && existsSync(s.queries))
if (snapshots.length === 0) {
  const reason = "no snapshots in .cache/bench: run node test/bench/search.ts (and test/bench/scale.ts) first"
  if (process.env.CI === "true") throw new Error(reason)
  console.log(`[skip] ${reason}`)
  process.exit(0)
}

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
const p99 = (xs: ReadonlyArray<number>) => percentile([...xs].sort((a, b) => a - b), 0.99)

console.log(`Ranking strategies, one thread, best of ${runs} runs per query, rank only (top 10); ${process.version}\n`)
console.log("| snapshot | queries | auto ms (p99) | MaxScore only | term at a time only | oracle | auto vs oracle |")
console.log("|---|---|---|---|---|---|---|")
const misses: Array<{ label: string; query: string; auto: number; better: number; strategy: string }> = []
for (const { label, snapshot, queries } of snapshots) {
  const output = execFileSync(process.execPath, ["--max-old-space-size=8000", import.meta.filename, "worker", snapshot, queries, String(runs)], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 << 20,
    // A worker that never answers fails the run (a 1M snapshot's takes under a minute here).
    timeout: 1_800_000
  })
  const { documents, times } = lastJsonLine(output) as { documents: number; times: Array<QueryTimes> }
  const column = (pick: (t: QueryTimes) => number) => {
    const xs = times.map(pick)
    return `${sum(xs).toFixed(1)} (${p99(xs).toFixed(2)})`
  }
  const oracle = (t: QueryTimes) => Math.min(t.ms.maxScore, t.ms.termAtATime)
  console.log(
    `| ${label} (${documents.toLocaleString("en-US")}) | ${times.length} | ${column((t) => t.ms.auto)} | ${column((t) => t.ms.maxScore)} | ${column((t) => t.ms.termAtATime)} | ${column(oracle)} | ${(sum(times.map((t) => t.ms.auto)) / sum(times.map(oracle))).toFixed(2)}x |`
  )
  for (const t of times) {
    const better = oracle(t)
    misses.push({ label, query: t.query, auto: t.ms.auto, better, strategy: better === t.ms.maxScore ? "MaxScore" : "term at a time" })
  }
}
console.log(`\nThe ${worst} queries the model's choice cost most on (ms lost against the quicker strategy):`)
for (const m of misses.sort((a, b) => b.auto - b.better - (a.auto - a.better)).slice(0, worst)) {
  console.log(`  ${m.label} "${m.query}": auto ${m.auto.toFixed(3)} ms, ${m.strategy} ${m.better.toFixed(3)} ms`)
}
