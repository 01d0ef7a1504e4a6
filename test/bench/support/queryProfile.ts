/**
 * The query path alone, for profiling: loads a snapshot, runs both query sets a few times
 * (with snippets, then without) and prints q/s. Run it under the V8 profiler and read the
 * profile with profileSummary.ts:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof test/bench/support/queryProfile.ts <snapshot> <queries.json> [rounds]
 *   node test/bench/support/profileSummary.ts /tmp/prof/<file>.cpuprofile
 */
import { readFileSync } from "node:fs"
import { decodeSnapshot } from "../../../core/index/Snapshot.ts"
import type { BenchQueries } from "./benchQueries.ts"

const [snapshotPath, queriesPath, roundsArg] = process.argv.slice(2)
if (snapshotPath === undefined || queriesPath === undefined) throw new Error("usage: queryProfile.ts <snapshot> <queries.json> [rounds]")
const rounds = Number(roundsArg ?? 3)
const loadStart = performance.now()
const index = decodeSnapshot(readFileSync(snapshotPath))
console.log(`loaded ${index.documentCount} documents in ${(performance.now() - loadStart).toFixed(0)} ms`)
const queries = JSON.parse(readFileSync(queriesPath, "utf8")) as BenchQueries
const all = [...queries.andLike, ...queries.orLike]
for (const mode of ["snippets", "bare"] as const) {
  const start = performance.now()
  let results = 0
  for (let r = 0; r < rounds; r++) {
    for (const q of all) results += mode === "snippets" ? index.search(q, 10).hits.length : index.rank(q, 10).length
  }
  const ms = performance.now() - start
  console.log(`${mode}: ${((rounds * all.length * 1000) / ms).toFixed(0)} q/s (${results} results)`)
}
