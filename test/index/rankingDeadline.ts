/**
 * Ranking in a worker thread with a deadline. A ranking loop that never ends blocks the thread
 * it runs on, so a test that ranks in its own thread hangs instead of failing (long queries once
 * looped forever in MaxScore); here the worker is stopped at the deadline and the query named.
 */
import { Worker } from "node:worker_threads"
import type { RankJob, RankMessage } from "./rankWorker.ts"

export const rankWithDeadline = (job: RankJob, deadlineMs: number): Promise<ReadonlyArray<ReadonlyArray<string>>> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./rankWorker.ts", import.meta.url), { workerData: job })
    let started = -1
    const timer = setTimeout(() => {
      void worker.terminate()
      reject(new Error(`ranking did not finish within ${deadlineMs} ms; stuck on query ${started}: "${job.queries[started] ?? "(building the index)"}"`))
    }, deadlineMs)
    worker.on("message", (message: RankMessage) => {
      if (message._tag === "Started") {
        started = message.query
        return
      }
      clearTimeout(timer)
      void worker.terminate()
      resolve(message.ranked)
    })
    worker.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    // Settled already when it answered or failed; otherwise it stopped without a word.
    worker.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`the ranking worker exited with ${code} on query ${started}`))
    })
  })
