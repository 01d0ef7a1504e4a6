/**
 * One engine of the search benchmark, alone in its own process so heaps are not shared:
 * build from the corpus, measure memory after a full GC, save and reload a snapshot (and warm
 * it up as the engine's server does before serving), then time the AND-like and OR-like query
 * sets (after one warm-up pass), with snippets and, for engines that can leave them out,
 * without. Prints one JSON line with the figures on stdout.
 *
 * Run by test/bench/search.ts and scale.ts as:
 *   node --expose-gc searchWorker.ts <engine> <corpus.jsonl> <queries.json> <snapshot path> [max passages] [declared language]
 */
import { readFileSync, writeFileSync } from "node:fs"
import type { IndexDocument } from "../../../core/index/Document.ts"
import { benchEngines } from "./benchEngines.ts"
import type { BenchQueries } from "./benchQueries.ts"
import { readJsonlLines } from "./jsonlLines.ts"
import { type LatencyFigures, type QuerySetFigures, settle, timeQuerySets } from "./queryTiming.ts"

export type { LatencyFigures }

export interface WorkerFigures extends QuerySetFigures {
  readonly engine: string
  readonly documents: number
  readonly buildMs: number
  /** V8 heap used and ArrayBuffer memory after the build and a full GC (whole process); null for non-JS peers. */
  readonly heapMB: number | null
  readonly buffersMB: number | null
  /** Resident set size after the build (corpus released), and before the corpus was read. */
  readonly rssMB?: number
  readonly baselineRssMB?: number
  /** The same process's heap before it read the corpus (runtime, modules, queries). */
  readonly baselineHeapMB: number | null
  /** Null when the engine has no saved form (Xapian's in-memory backend). */
  readonly snapshotMB: number | null
  readonly saveMs: number
  readonly loadMs: number | null
  /** The warm-up after the load, as the engine's server does it before serving (null: none). */
  readonly warmUpMs: number | null
  readonly warmUpQueries: number | null
}

const main = async () => {
  const [engineName, corpusPath, queriesPath, snapshotPath, maxPassages, declared] = process.argv.slice(2)
  const factory = benchEngines[engineName ?? ""]
  if (factory === undefined || corpusPath === undefined || queriesPath === undefined || snapshotPath === undefined) {
    throw new Error("usage: searchWorker.ts <engine> <corpus.jsonl> <queries.json> <snapshot path>")
  }
  const engine = factory()
  const queries = JSON.parse(readFileSync(queriesPath, "utf8")) as BenchQueries
  const base = await settle()

  let docs: Array<IndexDocument> | undefined = readJsonlLines<IndexDocument>(corpusPath, maxPassages === undefined || maxPassages === "" ? Infinity : Number(maxPassages))
  // Every page declaring a language, as a site's <html lang> does: the build then detects none.
  if (declared !== undefined && declared !== "") docs = docs.map((doc) => ({ ...doc, lang: declared }))
  const documents = docs.length
  const buildStart = performance.now()
  await engine.build(docs)
  const buildMs = performance.now() - buildStart
  docs = undefined
  const built = await settle()

  const saveStart = performance.now()
  const bytes = await engine.save()
  const saveMs = performance.now() - saveStart
  writeFileSync(snapshotPath, bytes)
  // Load from the file as a server would: opened in place (Periscope, whose queries are then answered
  // from the opened index, as the server answers them), else read the bytes and make a queryable index.
  const loadStart = performance.now()
  let loaded: unknown = engine.open !== undefined ? await engine.open(snapshotPath) : await engine.load(readFileSync(snapshotPath))
  const loadMs = performance.now() - loadStart
  // Then what the server does before it opens its port (Periscope answers warm-up queries), timed apart.
  const warmed = engine.open !== undefined ? engine.warm?.() : undefined
  if (engine.open !== undefined) await (loaded as { settled: Promise<unknown> }).settled
  loaded = undefined
  void loaded
  // Queries are timed on a collected heap, as a server that opened its snapshot has: the build's
  // garbage (hundreds of MB) would otherwise be collected during the timed queries.
  await settle()

  const timed = await timeQuerySets(queries, (q) => engine.search(q), engine.searchBare)

  const figures: WorkerFigures = {
    engine: engine.name,
    documents,
    buildMs,
    heapMB: built.heapUsed / 1e6,
    buffersMB: built.arrayBuffers / 1e6,
    rssMB: built.rss / 1e6,
    baselineRssMB: base.rss / 1e6,
    baselineHeapMB: base.heapUsed / 1e6,
    snapshotMB: bytes.length / 1e6,
    saveMs,
    loadMs,
    warmUpMs: warmed?.ms ?? null,
    warmUpQueries: warmed?.queries ?? null,
    ...timed
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`)
}

await main()
