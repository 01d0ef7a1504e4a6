/**
 * A second thread for the search index's costly queries (core/index/RankingChannel.ts): a
 * worker thread sent the index's arrays (shared memory: the snapshot is opened into a
 * SharedArrayBuffer, so nothing is copied) that ranks part of each costly query's documents
 * while the answering thread ranks the rest. The results are the same as on one thread.
 */
import { Worker } from "node:worker_threads"
import { rankingArraysOf } from "../../core/index/HelperThread.ts"
import { RankingChannel } from "../../core/index/RankingChannel.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import type { RankingWorkerData } from "./rankingWorker.ts"

const workerUrl = new URL(`./rankingWorker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url)

export interface RankingHelper {
  readonly worker: Worker
  /** Detaches the helper from the index and ends its thread. */
  readonly stop: () => void
}

/**
 * Starts a helper for `index`; undefined when its arrays are not in shared memory (an index
 * built in this process, or decoded from bytes of an ordinary buffer). The thread does not keep
 * the process alive; it ends when the index is let go.
 */
export const startRankingHelper = (index: SearchIndex, options: { readonly minPostings?: number } = {}): RankingHelper | undefined => {
  const arrays = rankingArraysOf(index)
  if (arrays === undefined) return undefined
  const channel = new RankingChannel(undefined, options)
  const worker = new Worker(workerUrl, { name: "periscope-ranking", workerData: { buffer: channel.buffer, arrays } satisfies RankingWorkerData })
  worker.unref()
  // A thread that fails or ends is not asked again; a query it held has its chunks ranked here.
  // Held weakly: the thread's listeners must not keep a replaced index alive.
  const held = new WeakRef(index)
  const stop = () => {
    held.deref()?.shareRanking(undefined)
    channel.stop()
  }
  worker.once("error", stop)
  worker.once("exit", stop)
  index.shareRanking(channel)
  helpers.register(index, channel)
  return { worker, stop }
}

// An index replaced (a reload) and collected takes its helper thread with it.
const helpers = new FinalizationRegistry<RankingChannel>((channel) => channel.stop())

/** Allocates snapshot memory the helper thread can share. */
export const sharedBytes = (length: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(length))
