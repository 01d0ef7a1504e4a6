/**
 * Search at scale: Periscope over 100k, 300k and 1M passages of Debian documentation
 * (support/scaleCorpus.ts; each size is a prefix of one shuffled file, so the smaller ones are
 * even samples of the larger), beside the search bench's 56k corpus, each size built in a fresh
 * process: build time, heap and ArrayBuffers after build, memory and snapshot bytes per passage,
 * snapshot load time (in fresh processes, as a server starts, and in the building process),
 * queries per second and p99 for both query sets with and without snippets.
 * One query set for every size, drawn from the titles of the first 100k passages.
 *
 * Then the query rounds: each size's snapshot opened in a fresh process as a server opens it
 * (support/snapshotQueries.ts), the sizes in a rotating order, `--rounds` times (default 5). The
 * q/s share of 1M against 100k is checked
 * on the median of the shares paired within a round: columns built minutes apart had given 0.24x
 * and 0.59x for the same code on this machine.
 *
 * Targets (issue 13): memory per passage at 1M no worse than at 56k, q/s at 1M at least half
 * of q/s at 100k, snapshot load under 1 s.
 *
 * Run: node test/bench/scale.ts [--xapian] [--rounds N] [size ...]   (sizes default to 100000
 *   300000 1000000; --xapian adds Xapian's glass backend at every size, about 20 minutes per
 *   million passages)
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { makeBenchQueries } from "./support/benchQueries.ts"
import { lastJsonLine, readJsonlLines } from "./support/jsonlLines.ts"
import { ensurePassageCorpus } from "./support/passageCorpus.ts"
import { ensureScaleCorpus, scaleDir, scaleTarget } from "./support/scaleCorpus.ts"
import { bareAndResultRows, bareFigures, type FigureRow, type FigureValue } from "./support/figureRows.ts"
import type { QuerySetFigures } from "./support/queryTiming.ts"
import type { WorkerFigures } from "./support/searchWorker.ts"
import { describePaired, median, medianBy } from "./support/stats.ts"
import { runXapianBench, xapianMissing } from "./support/xapianPeer.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values, positionals } = parseArgs({ options: { xapian: { type: "boolean", default: false }, rounds: { type: "string", default: "5" } }, allowPositionals: true })
const withXapian = values.xapian
const rounds = wholeNumberOption("--rounds", values.rounds)
const sizes = positionals.map(Number)
if (sizes.some((n) => !Number.isInteger(n) || n <= 0 || n > scaleTarget)) throw new Error(`sizes must be whole numbers from 1 to ${scaleTarget}`)
if (sizes.length === 0) sizes.push(100_000, 300_000, 1_000_000)

const skip = (reason: string) => {
  if (process.env.CI === "true") throw new Error(`scale benchmark corpus missing under CI=true: ${reason}`)
  console.log(`[skip] ${reason}`)
  process.exit(0)
}
const base = ensurePassageCorpus()
if (base._tag === "Missing") skip(`Debian documentation corpus unavailable: ${base.reason}`)
console.log("preparing the scale corpus (first run: about 15 minutes of parsing) ...")
const corpus = ensureScaleCorpus()
if (corpus._tag === "Missing") skip(`scale corpus unavailable: ${corpus.reason}`)
if (base._tag === "Missing" || corpus._tag === "Missing") process.exit(0)
console.log(`corpus: ${corpus.count} passages (${corpus.path}); from ${Object.entries(corpus.perPackage).map(([k, v]) => `${k} ${v}`).join(", ")}`)

const queriesPath = join(scaleDir, "queries.json")
const queries = makeBenchQueries(readJsonlLines<{ title: string }>(corpus.path, 100_000).map((d) => d.title))
writeFileSync(queriesPath, JSON.stringify(queries))
console.log(`queries: ${queries.andLike.length} AND-like, ${queries.orLike.length} OR-like, from the titles of the first 100,000 passages`)

const snapshotDir = join(scaleDir, "snapshots")
mkdirSync(snapshotDir, { recursive: true })
const worker = resolve(import.meta.dirname, "support/searchWorker.ts")

const openTimer = resolve(import.meta.dirname, "support/snapshotOpenTime.ts")

interface Column {
  readonly label: string
  readonly figures: WorkerFigures
  /** Median of three fresh processes opening the snapshot (Periscope only). */
  readonly freshLoadMs?: number
}
const columns: Array<Column> = []
/** The median open time of three fresh processes, each as a server starting on the snapshot. */
const freshLoad = (snapshot: string): number =>
  median([0, 1, 2].map(() =>
    lastJsonLine<{ openMs: number }>(execFileSync(process.execPath, [openTimer, snapshot], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 600_000 })).openMs))
/** Each scale size's snapshot (not the search bench's), for the query rounds. */
const roundSnapshots: Array<{ readonly documents: number; readonly path: string }> = []
const runPeriscope = (label: string, path: string, limit: number | undefined) => {
  process.stdout.write(`running Periscope on ${label} ... `)
  const snapshot = join(snapshotDir, `periscope-${label}.bin`)
  if (limit !== undefined) roundSnapshots.push({ documents: limit, path: snapshot })
  const argv = ["--expose-gc", "--max-old-space-size=16384", worker, "periscope", path, queriesPath, snapshot]
  if (limit !== undefined) argv.push(String(limit))
  const out = execFileSync(process.execPath, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20, timeout: 3_600_000 })
  const figures = lastJsonLine<WorkerFigures>(out)
  columns.push({ label: `Periscope ${label}`, figures, freshLoadMs: freshLoad(snapshot) })
  console.log(`done (build ${(figures.buildMs / 1000).toFixed(1)} s)`)
}
const noXapian = withXapian ? xapianMissing() : undefined
if (noXapian !== undefined) console.log(`[skip] Xapian: ${noXapian}`)

const sizeLabel = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${Math.round(n / 1000)}k`)
runPeriscope(`${sizeLabel(base.count)} (search bench)`, base.path, undefined)
for (const n of sizes) {
  runPeriscope(sizeLabel(n), corpus.path, n)
  if (withXapian && noXapian === undefined) {
    process.stdout.write(`running Xapian glass on ${sizeLabel(n)} ... `)
    const figures = runXapianBench("glass", corpus.path, queriesPath, n)
    columns.push({ label: `Xapian glass ${sizeLabel(n)}`, figures })
    console.log(`done (build ${(figures.buildMs / 1000).toFixed(1)} s)`)
  }
}

// The query rounds: fresh processes on each size's snapshot, the sizes in a rotating order.
type RoundFigures = Required<QuerySetFigures>
type QuerySet = keyof RoundFigures
const roundTimer = resolve(import.meta.dirname, "support/snapshotQueries.ts")
const runs = roundSnapshots.map((snapshot) => ({ ...snapshot, key: String(snapshot.documents) }))
const roundsBySize = new Map<string, Array<RoundFigures>>(runs.map((run) => [run.key, []]))
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < runs.length; i++) {
    const run = runs[(i + r) % runs.length]!
    process.stdout.write(`query round ${r + 1}/${rounds}: ${sizeLabel(run.documents)} ... `)
    const out = execFileSync(process.execPath, ["--max-old-space-size=16384", roundTimer, run.path, queriesPath], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 1_800_000 })
    roundsBySize.get(run.key)!.push(lastJsonLine<RoundFigures>(out))
    console.log("done")
  }
}

const freshLoadOf = (f: WorkerFigures) => columns.find((c) => c.figures === f)?.freshLoadMs
/** Memory the index holds: heap and buffers after the build, less the process's heap before it read anything. */
const indexMemory = (f: WorkerFigures): FigureValue =>
  f.heapMB === null || f.buffersMB === null ? (f.rssMB !== undefined && f.baselineRssMB !== undefined ? f.rssMB - f.baselineRssMB : null) : f.heapMB + f.buffersMB - (f.baselineHeapMB ?? 0)
const rows: Array<FigureRow> = [
  ["passages", (f) => f.documents, 0],
  ["build (s)", (f) => f.buildMs / 1000, 1],
  ["build (passages/s)", (f) => f.documents / (f.buildMs / 1000), 0],
  ["JS heap after build (MB)", (f) => f.heapMB, 1],
  ["ArrayBuffers after build (MB)", (f) => f.buffersMB, 1],
  ["index memory: heap + buffers - baseline heap (MB; RSS growth for Xapian)", indexMemory, 1],
  ["index memory per passage (bytes)", (f) => { const m = indexMemory(f); return m === null || m === undefined ? null : (m * 1e6) / f.documents }, 0],
  ["snapshot / index files (MB)", (f) => f.snapshotMB, 1],
  ["snapshot bytes per passage", (f) => (f.snapshotMB === null ? null : (f.snapshotMB * 1e6) / f.documents), 0],
  ["snapshot load in a fresh process, as a server starts (ms; median of 3)", (f) => freshLoadOf(f) ?? null, 0],
  ["snapshot load in the building process / database open (ms)", (f) => f.loadMs, 0],
  ["warm-up queries after the load, as npm start answers them (ms)", (f) => f.warmUpMs, 0],
  ["AND-like queries/s", (f) => f.andLike.qps, 0],
  ["AND-like p99 (ms)", (f) => f.andLike.p99Ms, 2],
  ["OR-like queries/s", (f) => f.orLike.qps, 0],
  ["OR-like p99 (ms)", (f) => f.orLike.p99Ms, 2],
  ...bareAndResultRows
]
console.log(`\nnode ${process.version}, one run, each column in its own process (built there, queries timed there); with snippets unless said\n`)
console.log(`| measure | ${columns.map((c) => c.label).join(" | ")} |`)
console.log(`|---|${columns.map(() => "---").join("|")}|`)
for (const [label, value, digits] of rows) {
  console.log(`| ${label} | ${columns.map((c) => { const v = value(c.figures); return v === null || v === undefined ? "-" : v.toFixed(digits) }).join(" | ")} |`)
}

/** An engine's figures at one size of the scale corpus (not the search bench's column). */
const at = (engine: string, n: number) => columns.find((c) => c.label.startsWith(engine) && c.figures.documents === n && !c.label.includes("search bench"))?.figures
const reference = columns.find((c) => c.label.startsWith("Periscope"))?.figures
const million = at("Periscope", 1_000_000)
const checks: Array<[string, boolean]> = []
if (million !== undefined && reference !== undefined) {
  const perPassage = (f: WorkerFigures) => (indexMemory(f) ?? 0) / f.documents
  checks.push([
    `index memory per passage at 1M <= at ${sizeLabel(reference.documents)} (${((perPassage(million) * 1e6)).toFixed(0)} vs ${((perPassage(reference) * 1e6)).toFixed(0)} bytes)`,
    perPassage(million) <= perPassage(reference)
  ])
  const load = freshLoadOf(million) ?? Infinity
  checks.push([`snapshot load at 1M < 1 s (fresh process: ${load.toFixed(0)} ms; in the building process: ${(million.loadMs ?? 0).toFixed(0)} ms)`, load < 1000])
}
// The rounds' table, then the share target on the medians of the shares paired within a round.
const setLabel: Record<QuerySet, string> = { andLike: "AND-like", orLike: "OR-like", andLikeBare: "AND-like, no snippets", orLikeBare: "OR-like, no snippets" }
const querySets: Array<QuerySet> = ["andLike", "orLike", "andLikeBare", "orLikeBare"]
if (runs.length > 0) {
  console.log(`\nQuery rounds: ${rounds}, each size's snapshot opened in a fresh process as \`npm start\` opens it, sizes in a rotating order; each one's median round\n`)
  console.log(`| measure | ${runs.map((run) => `Periscope ${sizeLabel(run.documents)}`).join(" | ")} |`)
  console.log(`|---|${runs.map(() => "---").join("|")}|`)
  for (const set of querySets) {
    const typical = runs.map((run) => medianBy(roundsBySize.get(run.key)!, (f) => f[set].qps)[set])
    console.log(`| ${setLabel[set]} queries/s | ${typical.map((f) => f.qps.toFixed(0)).join(" | ")} |`)
    console.log(`| ${setLabel[set]} p99 (ms) | ${typical.map((f) => f.p99Ms.toFixed(2)).join(" | ")} |`)
  }
}
/** The share of 100k's q/s that 1M keeps, round by round. */
const roundShares = (set: QuerySet) => {
  const million = roundsBySize.get("1000000")
  const hundred = roundsBySize.get("100000")
  return million === undefined || hundred === undefined ? undefined : million.map((f, r) => f[set].qps / hundred[r]![set].qps)
}
for (const set of ["andLike", "orLike"] as const) {
  const shares = roundShares(set)
  if (shares !== undefined) checks.push([`${setLabel[set]} q/s at 1M >= 0.5x q/s at 100k (${describePaired(shares)})`, median(shares) >= 0.5])
}
if (checks.length > 0) {
  console.log("\nTargets:")
  for (const [label, ok] of checks) console.log(`  ${ok ? "met " : "MISS"}  ${label}`)
}

// The same scaling measure for each engine that ran at both sizes: how much of its 100k q/s it keeps at 1M.
const kept = (engine: string) => {
  const big = at(engine, 1_000_000)
  const small = at(engine, 100_000)
  if (big === undefined || small === undefined) return undefined
  const ratio = (read: (f: WorkerFigures) => number) => `${(read(big) / read(small)).toFixed(2)}x`
  return `AND-like ${ratio((f) => f.andLike.qps)}, OR-like ${ratio((f) => f.orLike.qps)}; ` +
    `no snippets: AND-like ${ratio((f) => bareFigures(f, "andLike").qps)}, OR-like ${ratio((f) => bareFigures(f, "orLike").qps)}`
}
const keptRows = ["Periscope", "Xapian glass"].flatMap((engine) => { const k = kept(engine); return k === undefined ? [] : [`  ${engine.padEnd(13)} ${k}`] })
if (roundShares("andLike") !== undefined) {
  keptRows.unshift(`  Periscope, query rounds (medians of paired shares): ${querySets.map((set) => `${setLabel[set]} ${median(roundShares(set)!).toFixed(2)}x`).join(", ")}`)
}
if (keptRows.length > 0) console.log(["", "q/s at 1M as a share of q/s at 100k (the building processes' one run, then the query rounds):", ...keptRows].join("\n"))
