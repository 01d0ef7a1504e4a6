/**
 * Table rows shared by the search benchmarks (search.ts, scale.ts): each row is a label, the
 * figure it reads from one engine's WorkerFigures, and its decimals.
 */
import type { LatencyFigures, WorkerFigures } from "./searchWorker.ts"

export type FigureValue = number | null | undefined
export type FigureRow = [string, (f: WorkerFigures) => FigureValue, number]

/** An engine's figures without snippets, or with them for engines that always make them. */
export const bareFigures = (f: WorkerFigures, set: "andLike" | "orLike"): LatencyFigures => (set === "andLike" ? f.andLikeBare : f.orLikeBare) ?? f[set]

/** The last rows of both tables: both query sets without snippets, then results per query. */
export const bareAndResultRows: Array<FigureRow> = [
  ["AND-like queries/s, no snippets", (f) => bareFigures(f, "andLike").qps, 0],
  ["AND-like p99 (ms), no snippets", (f) => bareFigures(f, "andLike").p99Ms, 2],
  ["OR-like queries/s, no snippets", (f) => bareFigures(f, "orLike").qps, 0],
  ["OR-like p99 (ms), no snippets", (f) => bareFigures(f, "orLike").p99Ms, 2],
  ["mean results per query", (f) => (f.andLike.meanResults + f.orLike.meanResults) / 2, 1]
]
