/**
 * The engine's query path, old code against the working tree, in one process: the core/ of a
 * git revision is extracted to a temporary folder, both decode the same snapshot, and whole
 * passes over the query sets alternate between them (the order flipped each round), so a slow
 * stretch of the machine lands on both. Prints each side's median queries/s and the median of
 * the ratios paired within a round, with snippets (`search`) and without (`rank`), and the
 * young-generation bytes each allocates per query.
 *
 *   node --expose-gc --min-semi-space-size=256 --max-semi-space-size=256 \
 *     test/bench/engineAB.ts <revision> [snapshot.bin] [queries.json] [--passes 12]
 *
 * (The semi-space flags let a pass allocate without a scavenge, so its growth is what it
 * allocated; without them that column says a scavenge ran.)
 * Defaults: the search bench's snapshot and queries (.cache/bench/, made by search.ts). With
 * fewer than a dozen passes the ratio drifts: the same code on both sides (`engineAB.ts HEAD`
 * on a clean tree) gave 0.80x with two passes, 1.01x and 1.00x with twelve.
 * Run it with the snapshot format unchanged between the two (decodeSnapshot must read both).
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { parseArgs } from "node:util"
import v8 from "node:v8"
import { decodeSnapshot } from "../../core/index/Snapshot.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import type { BenchQueries } from "./support/benchQueries.ts"
import { median } from "./support/stats.ts"

const root = resolve(import.meta.dirname, "../..")
const { values, positionals } = parseArgs({ allowPositionals: true, options: { passes: { type: "string", default: "12" } } })
const [revision, snapshotArg, queriesArg] = positionals
if (revision === undefined) throw new Error("usage: engineAB.ts <revision> [snapshot.bin] [queries.json] [--passes 12]")
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc")
const snapshotPath = snapshotArg ?? join(root, ".cache/bench/snapshots/periscope.bin")
const queriesPath = queriesArg ?? join(root, ".cache/bench/queries.json")
for (const path of [snapshotPath, queriesPath]) {
  if (!existsSync(path)) throw new Error(`${path} is missing: run node test/bench/search.ts first, or name a snapshot and queries`)
}
const passes = Number(values.passes)

// Inside the project, so the old code's imports find node_modules.
mkdirSync(join(root, ".cache"), { recursive: true })
const folder = mkdtempSync(join(root, ".cache", "engine-ab-"))
let scavenges = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++
}).observe({ entryTypes: ["gc"] })
try {
  execFileSync("sh", ["-c", `git -C "${root}" archive "${revision}" core | tar -x -C "${folder}"`], { timeout: 60_000 })
  const old = (await import(join(folder, "core/index/Snapshot.ts"))) as { decodeSnapshot: (bytes: Uint8Array) => SearchIndex }
  const bytes = readFileSync(snapshotPath)
  const engines = { [revision]: old.decodeSnapshot(bytes), "working tree": decodeSnapshot(bytes) }
  const names = Object.keys(engines)
  const queries = JSON.parse(readFileSync(queriesPath, "utf8")) as BenchQueries
  const all = [...queries.andLike, ...queries.orLike]
  console.log(`${all.length} queries, ${engines["working tree"].documentCount} documents, ${passes} passes each, node ${process.version}`)

  for (const mode of ["search", "rank"] as const) {
    const pass = (index: SearchIndex) => {
      const start = performance.now()
      for (const q of all) mode === "search" ? index.search(q, 10) : index.rank(q, 10)
      return performance.now() - start
    }
    for (let w = 0; w < 3; w++) for (const name of names) pass(engines[name]!)
    const times: Record<string, Array<number>> = Object.fromEntries(names.map((n) => [n, []]))
    for (let round = 0; round < passes; round++) {
      for (const name of round % 2 === 0 ? names : [...names].reverse()) times[name]!.push(pass(engines[name]!))
    }
    // Bytes allocated: the young generation's growth over one pass, with no scavenge in it (see below).
    const allocated: Array<number | undefined> = []
    for (const name of names) {
      gc()
      await observed()
      const [before, scavengesBefore] = [newSpaceUsed(), scavenges]
      pass(engines[name]!)
      const grown = newSpaceUsed() - before
      await observed()
      allocated.push(scavenges === scavengesBefore ? grown / all.length : undefined)
    }
    // Time of the revision over time of the working tree, per round: the working tree's speed-up.
    const ratios = times[names[0]!]!.map((t, i) => t / times[names[1]!]![i]!)
    const qps = (name: string) => ((all.length * 1000) / median(times[name]!)).toFixed(0)
    console.log(
      `${mode === "search" ? "with snippets" : "without snippets"}: ${names[0]} ${qps(names[0]!)} q/s, working tree ${qps(names[1]!)} q/s, ` +
        `the working tree at ${median(ratios).toFixed(3)}x the queries/s (rounds ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}); ` +
        `allocated per query ${allocated.map((b) => (b === undefined ? "(a scavenge ran)" : `${(b / 1024).toFixed(0)} KB`)).join(" vs ")}`
    )
  }
} finally {
  rmSync(folder, { recursive: true, force: true })
}

/** Lets the GC observer hear of collections so far (its entries arrive on a later turn). */
function observed(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20))
}

function newSpaceUsed(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.space_used_size
}
