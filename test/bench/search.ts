/**
 * Search engine benchmark: Periscope against Xapian 1.4 (C++, in-memory and glass backends,
 * through Debian's python3-xapian), MiniSearch 7, Orama 3 and FlexSearch 0.8 on 50,000+
 * passages of real Debian documentation (built from the packages on first run and cached in
 * .cache/bench), each engine in a fresh process: build time, memory after build (whole-process
 * V8 heap plus ArrayBuffers after a full GC, the runtime's own share included; resident set
 * size for every engine), snapshot/index size and load time, queries per second and p50/p99
 * latency over AND-like and OR-like multi-word queries, with snippets (Periscope, Xapian) and
 * without. Prints one table with ratios against MiniSearch, and the targets against Xapian.
 *
 * Run: node test/bench/search.ts [engine ...]
 *   engines: periscope xapian-inmemory xapian-glass minisearch orama flexsearch (default: all)
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { makeBenchQueries } from "./support/benchQueries.ts"
import { ensurePassageCorpus } from "./support/passageCorpus.ts"
import { bareAndResultRows, bareFigures, type FigureRow } from "./support/figureRows.ts"
import { lastJsonLine } from "./support/jsonlLines.ts"
import type { WorkerFigures } from "./support/searchWorker.ts"
import { runXapianBench, xapianMissing } from "./support/xapianPeer.ts"

const allEngines = ["periscope", "xapian-inmemory", "xapian-glass", "minisearch", "orama", "flexsearch"]
const engines = process.argv.length > 2 ? process.argv.slice(2) : allEngines
for (const engine of engines) if (!allEngines.includes(engine)) throw new Error(`unknown engine ${engine}; choose from ${allEngines.join(", ")}`)
const minimumDocuments = 50_000

const corpus = ensurePassageCorpus()
if (corpus._tag === "Missing") {
  if (process.env.CI === "true") throw new Error(`search benchmark corpus missing under CI=true: ${corpus.reason}`)
  console.log(`[skip] Debian documentation corpus unavailable: ${corpus.reason}`)
  process.exit(0)
}
if (corpus.count < minimumDocuments) throw new Error(`corpus has ${corpus.count} passages, fewer than ${minimumDocuments}`)

const workDir = dirname(corpus.path)
const queriesPath = join(workDir, "queries.json")
const titles = readFileSync(corpus.path, "utf8").split("\n").filter((l) => l.length > 0).map((l) => (JSON.parse(l) as { title: string }).title)
const queries = makeBenchQueries(titles)
writeFileSync(queriesPath, JSON.stringify(queries))
console.log(`corpus: ${corpus.count} passages (${corpus.path}); queries: ${queries.andLike.length} AND-like, ${queries.orLike.length} OR-like`)
console.log(`examples: AND-like "${queries.andLike[0]}", "${queries.andLike[1]}"; OR-like "${queries.orLike[0]}", "${queries.orLike[1]}"`)

const snapshotDir = join(workDir, "snapshots")
mkdirSync(snapshotDir, { recursive: true })
const worker = resolve(import.meta.dirname, "support/searchWorker.ts")
const results: Array<WorkerFigures> = []
const noXapian = engines.some((e) => e.startsWith("xapian-")) ? xapianMissing() : undefined
for (const engine of engines) {
  if (engine.startsWith("xapian-")) {
    if (noXapian !== undefined) {
      if (process.env.CI === "true") throw new Error(`Xapian peer unavailable under CI=true: ${noXapian}`)
      console.log(`[skip] ${engine}: ${noXapian}`)
      continue
    }
    process.stdout.write(`running ${engine} ... `)
    const figures = runXapianBench(engine === "xapian-glass" ? "glass" : "inmemory", corpus.path, queriesPath)
    results.push(figures)
    console.log(`done (build ${(figures.buildMs / 1000).toFixed(1)} s)`)
    continue
  }
  process.stdout.write(`running ${engine} ... `)
  const out = execFileSync(process.execPath, ["--expose-gc", "--max-old-space-size=8192", worker, engine, corpus.path, queriesPath, join(snapshotDir, `${engine}.bin`)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20,
    timeout: 1_800_000
  })
  const figures = lastJsonLine<WorkerFigures>(out)
  results.push(figures)
  console.log(`done (build ${(figures.buildMs / 1000).toFixed(1)} s)`)
}

const fixed = (x: number, digits = 1) => x.toFixed(digits)
/** Snippet-free timings fall back to the main ones for engines that never make snippets. */
const rows: Array<FigureRow> = [
  ["build (s)", (f) => f.buildMs / 1000, 1],
  ["process heap before reading the corpus (MB)", (f) => f.baselineHeapMB, 1],
  ["JS heap after build (MB)", (f) => f.heapMB, 1],
  ["ArrayBuffers after build (MB)", (f) => f.buffersMB, 1],
  ["memory after build, heap + buffers (MB)", (f) => (f.heapMB === null || f.buffersMB === null ? null : f.heapMB + f.buffersMB), 1],
  ["resident set after build (MB)", (f) => f.rssMB, 1],
  ["resident set before reading the corpus (MB)", (f) => f.baselineRssMB, 1],
  ["snapshot / index files (MB)", (f) => f.snapshotMB, 1],
  ["snapshot load / database open (ms)", (f) => f.loadMs, 0],
  ["AND-like queries/s", (f) => f.andLike.qps, 0],
  ["AND-like p50 (ms)", (f) => f.andLike.p50Ms, 2],
  ["AND-like p99 (ms)", (f) => f.andLike.p99Ms, 2],
  ["OR-like queries/s", (f) => f.orLike.qps, 0],
  ["OR-like p50 (ms)", (f) => f.orLike.p50Ms, 2],
  ["OR-like p99 (ms)", (f) => f.orLike.p99Ms, 2],
  ...bareAndResultRows
]
const mini = results.find((r) => r.engine.startsWith("MiniSearch"))
console.log(`\n${results[0]?.documents ?? 0} documents, node ${process.version}, one run; query sets with snippets where the engine makes them (Periscope, Xapian)\n`)
console.log(`| measure | ${results.map((r) => r.engine).join(" | ")} |`)
console.log(`|---|${results.map(() => "---").join("|")}|`)
for (const [label, value, digits] of rows) {
  const cells = results.map((r) => {
    const v = value(r)
    if (v === null || v === undefined) return "-"
    const m = mini === undefined ? null : value(mini)
    const ratio = m !== null && m !== undefined && r !== mini && m > 0 ? ` (${fixed(v / m, 2)}x)` : ""
    return `${fixed(v, digits)}${ratio}`
  })
  console.log(`| ${label} | ${cells.join(" | ")} |`)
}

const periscope = results.find((r) => r.engine === "Periscope")
const memory = (f: WorkerFigures) => (f.heapMB ?? 0) + (f.buffersMB ?? 0)
const checks: Array<[string, boolean]> = []
if (periscope !== undefined && mini !== undefined) {
  const qps = (f: WorkerFigures) => (f.andLike.queries + f.orLike.queries) / (f.andLike.queries / f.andLike.qps + f.orLike.queries / f.orLike.qps)
  checks.push(
    [`queries/s >= 3x MiniSearch (${fixed(qps(periscope) / qps(mini), 2)}x)`, qps(periscope) >= 3 * qps(mini)],
    [`memory (heap + buffers) <= 0.5x MiniSearch (${fixed(memory(periscope) / memory(mini), 2)}x)`, memory(periscope) <= 0.5 * memory(mini)]
  )
}
if (periscope !== undefined) {
  checks.push(
    [`p99 < 1 ms with snippets (AND ${fixed(periscope.andLike.p99Ms, 2)}, OR ${fixed(periscope.orLike.p99Ms, 2)})`, Math.max(periscope.andLike.p99Ms, periscope.orLike.p99Ms) < 1],
    [`snapshot load < 200 ms (${fixed(periscope.loadMs ?? 0, 0)} ms)`, (periscope.loadMs ?? 0) < 200]
  )
  const glass = results.find((r) => r.engine.endsWith("glass"))
  const inMemory = results.find((r) => r.engine.endsWith("in-memory"))
  for (const set of ["andLike", "orLike"] as const) {
    const name = set === "andLike" ? "AND-like" : "OR-like"
    if (glass !== undefined) {
      const ratio = periscope[set].qps / glass[set].qps
      checks.push([`${name} q/s with snippets >= Xapian glass with snippets (${fixed(ratio, 2)}x)`, ratio >= 1])
    }
    if (inMemory !== undefined) {
      const ratio = bareFigures(periscope, set).qps / bareFigures(inMemory, set).qps
      checks.push([`${name} q/s without snippets >= Xapian in-memory without snippets (${fixed(ratio, 2)}x)`, ratio >= 1])
    }
  }
}
if (checks.length > 0) {
  console.log("\nTargets:")
  for (const [label, ok] of checks) console.log(`  ${ok ? "met " : "MISS"}  ${label}`)
}
