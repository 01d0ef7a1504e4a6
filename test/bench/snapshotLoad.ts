/**
 * Snapshot loading, two ways side by side on the snapshots the search and scale benchmarks
 * left in .cache/bench (56k to 1M passages): the whole file read and decoded
 * (decodeSnapshot, what Deno and the embed library do) and opened in place
 * (openSnapshotFile, what `npm start` does: it answers once everything but the page text is
 * read, then reads the page text into memory in the background). Each in a fresh process:
 * time until the index answers (checksum over every byte included), time until the page
 * text is in memory, memory after that (V8 heap plus ArrayBuffers after full collections,
 * and the resident set), and the AND-like and OR-like query sets with snippets.
 *
 *   node test/bench/snapshotLoad.ts [--rounds 2]
 *
 * The queries are the search benchmark's (.cache/bench/queries.json) at every size. Run
 * test/bench/search.ts and test/bench/scale.ts first; without their snapshots this skips.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { loadSnapshotFile, openInPlace } from "../../adapters/node/snapshotFile.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import type { BenchQueries } from "./support/benchQueries.ts"
import { lastJsonLine } from "./support/jsonlLines.ts"
import { type LatencyFigures, settle, timeQueries } from "./support/queryTiming.ts"
import { median } from "./support/stats.ts"

const root = resolve(import.meta.dirname, "../..")
const cache = join(root, ".cache/bench")
type Way = "decoded" | "opened"

interface LoadFigures {
  readonly way: Way
  readonly documents: number
  readonly loadMs: number
  /** Until the page text was in memory too (the same as loadMs when decoded). */
  readonly heldMs: number
  readonly memoryMB: number
  readonly rssMB: number
  readonly andLike: LatencyFigures
  readonly orLike: LatencyFigures
}

const worker = async (way: Way, snapshot: string, queriesPath: string) => {
  const queries = JSON.parse(readFileSync(queriesPath, "utf8")) as BenchQueries
  const before = await settle()
  const start = performance.now()
  let index: SearchIndex
  let heldMs: number
  let loadMs: number
  if (way === "decoded") {
    index = await Effect.runPromise(loadSnapshotFile(snapshot))
    heldMs = loadMs = performance.now() - start
  } else {
    const opened = await Effect.runPromise(openInPlace(snapshot))
    loadMs = performance.now() - start
    index = opened.index
    const end = await opened.settled
    heldMs = performance.now() - start
    if (end !== "held") throw new Error(`the page text was not kept in memory: ${end}`)
  }
  const after = await settle()
  const run = (q: string) => index.search(q, 10).hits.length
  for (const q of [...queries.andLike, ...queries.orLike]) run(q) // warm-up
  const figures: LoadFigures = {
    way,
    documents: index.documentCount,
    loadMs,
    heldMs,
    memoryMB: (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / 1e6,
    rssMB: after.rss / 1e6,
    andLike: await timeQueries(run, queries.andLike),
    orLike: await timeQueries(run, queries.orLike)
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`)
}

if (process.argv[2] === "--worker") {
  await worker(process.argv[3] as Way, process.argv[4]!, process.argv[5]!)
  process.exit(0)
}

const { values } = parseArgs({ options: { rounds: { type: "string", default: "2" } } })
const rounds = Number(values.rounds)
const queriesPath = join(cache, "queries.json")
const snapshots = [
  ["56k", join(cache, "snapshots/periscope.bin")],
  ["100k", join(cache, "scale/snapshots/periscope-100k.bin")],
  ["300k", join(cache, "scale/snapshots/periscope-300k.bin")],
  ["1M", join(cache, "scale/snapshots/periscope-1M.bin")]
].filter(([, path]) => existsSync(path!))
if (snapshots.length === 0 || !existsSync(queriesPath)) {
  const reason = "no snapshots in .cache/bench: run test/bench/search.ts and test/bench/scale.ts first"
  if (process.env.CI === "true") throw new Error(reason)
  console.log(`[skip] ${reason}`)
  process.exit(0)
}

const measure = (way: Way, path: string): LoadFigures =>
  lastJsonLine<LoadFigures>(execFileSync(process.execPath, ["--expose-gc", "--max-old-space-size=16384", import.meta.filename, "--worker", way, path, queriesPath], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 1_800_000
  }))

console.log(`Snapshot load, read and decoded vs opened in place; ${rounds} rounds, fresh process each; node ${process.version}\n`)
console.log("| passages | snapshot MB | way | answers after (ms) | text in memory after (ms) | heap + buffers MB | RSS MB | AND q/s | AND p99 ms | OR q/s | OR p99 ms |")
console.log("|---|---|---|---|---|---|---|---|---|---|---|")
for (const [label, path] of snapshots) {
  const runs: Record<Way, Array<LoadFigures>> = { decoded: [], opened: [] }
  for (let round = 0; round < rounds; round++) {
    // Alternating order: whichever runs second finds the file in the page cache as the first left it.
    for (const way of (round % 2 === 0 ? ["decoded", "opened"] : ["opened", "decoded"]) as Array<Way>) runs[way].push(measure(way, path!))
  }
  const size = (readFileSync(path!).length / 1e6).toFixed(0)
  for (const way of ["decoded", "opened"] as const) {
    const rs = runs[way]
    const cell = (f: (r: LoadFigures) => number, digits: number) => median(rs.map(f)).toFixed(digits)
    console.log(`| ${label} | ${size} | ${way} | ${cell((r) => r.loadMs, 0)} | ${cell((r) => r.heldMs, 0)} | ${cell((r) => r.memoryMB, 0)} | ${cell((r) => r.rssMB, 0)} | ${cell((r) => r.andLike.qps, 0)} | ${cell((r) => r.andLike.p99Ms, 2)} | ${cell((r) => r.orLike.qps, 0)} | ${cell((r) => r.orLike.p99Ms, 2)} |`)
  }
}
