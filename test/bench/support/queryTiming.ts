/**
 * What the search benchmarks measure in their worker processes: memory after full
 * collections, and a query set's throughput and latency percentiles. Needs --expose-gc.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { percentile } from "./stats.ts"

export interface LatencyFigures {
  readonly queries: number
  readonly qps: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly meanResults: number
}

const gc = (globalThis as { gc?: () => void }).gc

/** Full collections with a pause between, so ArrayBuffer backing stores are really released. */
export const settle = async () => {
  if (gc === undefined) throw new Error("run with --expose-gc")
  for (let i = 0; i < 3; i++) {
    gc()
    await sleep(50)
  }
  return process.memoryUsage()
}

/** Both query sets timed with snippets and, when `bare` is given, without: the workers' figures. */
export interface QuerySetFigures {
  /** Top 10 with snippets where the engine makes them (Periscope, Xapian). */
  readonly andLike: LatencyFigures
  readonly orLike: LatencyFigures
  /** Top 10 with stored title and URL only, for engines that make snippets. */
  readonly andLikeBare?: LatencyFigures
  readonly orLikeBare?: LatencyFigures
}

/**
 * One warm-up pass over both sets, then each set with `search` (snippets where the engine makes
 * them) and, when given, with `bare` (without): what searchWorker.ts and snapshotQueries.ts time.
 */
export const timeQuerySets = async (
  queries: { readonly andLike: ReadonlyArray<string>; readonly orLike: ReadonlyArray<string> },
  search: (q: string) => number | Promise<number>,
  bare?: (q: string) => number
): Promise<QuerySetFigures> => {
  for (const q of [...queries.andLike, ...queries.orLike]) await search(q)
  const andLike = await timeQueries(search, queries.andLike)
  const orLike = await timeQueries(search, queries.orLike)
  if (bare === undefined) return { andLike, orLike }
  return { andLike, orLike, andLikeBare: await timeQueries(bare, queries.andLike), orLikeBare: await timeQueries(bare, queries.orLike) }
}

/** Runs the queries one after another; `run` answers the number of results. */
export const timeQueries = async (run: (q: string) => number | Promise<number>, queries: ReadonlyArray<string>): Promise<LatencyFigures> => {
  const latencies: Array<number> = []
  let results = 0
  const start = performance.now()
  for (const q of queries) {
    const t = performance.now()
    const answer = run(q)
    results += typeof answer === "number" ? answer : await answer
    latencies.push(performance.now() - t)
  }
  const total = performance.now() - start
  latencies.sort((a, b) => a - b)
  return { queries: queries.length, qps: (queries.length * 1000) / total, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), meanResults: results / queries.length }
}
