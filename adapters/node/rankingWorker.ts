/**
 * The ranking helper's thread (adapters/node/rankingHelper.ts starts it): serves the channel
 * over the index arrays it was sent until the channel is stopped, then ends.
 */
import { workerData } from "node:worker_threads"
import { type RankingArrays, serveRanking } from "../../core/index/HelperThread.ts"
import { RankingChannel } from "../../core/index/RankingChannel.ts"

export interface RankingWorkerData {
  readonly buffer: SharedArrayBuffer
  readonly arrays: RankingArrays
}

const data = workerData as RankingWorkerData
serveRanking(new RankingChannel(data.buffer), data.arrays)
