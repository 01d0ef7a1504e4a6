/**
 * Ranks queries in a worker thread for rankWithDeadline (rankingDeadline.ts): it builds the
 * index from the documents it is sent, then answers each query's top k as "score:doc" keys.
 * Before each query it says which one it starts, so that a query that never returns is named.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { IndexDocument } from "../../core/index/Document.ts"
import type { EngineOptions } from "../../core/index/IndexBuilder.ts"
import { buildIndex, rankKey } from "./support.ts"

export interface RankJob {
  readonly docs: ReadonlyArray<IndexDocument>
  readonly options: EngineOptions
  readonly queries: ReadonlyArray<string>
  readonly k: number
}

export type RankMessage =
  | { readonly _tag: "Started"; readonly query: number }
  | { readonly _tag: "Done"; readonly ranked: ReadonlyArray<ReadonlyArray<string>> }

if (parentPort !== null && workerData !== undefined) {
  const job = workerData as RankJob
  const index = buildIndex(job.docs, job.options)
  const ranked = job.queries.map((query, i) => {
    parentPort!.postMessage({ _tag: "Started", query: i } satisfies RankMessage)
    return index.rank(query, job.k, { collapse: false }).map((r) => rankKey(r.score, r.doc))
  })
  parentPort.postMessage({ _tag: "Done", ranked } satisfies RankMessage)
}
