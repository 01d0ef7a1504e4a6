/**
 * A job thread of the Node adapter (adapters/node/jobThreads.ts): core/jobs/JobHost.ts over
 * this thread's port. It loads nothing else up front: each job's module is imported when the
 * pool first sends one of its jobs, so a thread (or its replacement) is ready at once. Given
 * `retireAboveMb`, it asks to be replaced after a job that left its heap larger than that.
 */
import { readlinkSync } from "node:fs"
import { setPriority } from "node:os"
import { getHeapStatistics } from "node:v8"
import { parentPort, workerData } from "node:worker_threads"
import { hostJobs } from "../../core/jobs/JobHost.ts"

const port = parentPort
if (port === null) throw new Error("jobWorker.ts runs as a worker thread of jobThreads.ts, not on its own")
const options = (workerData ?? {}) as { readonly retireAboveMb?: number; readonly nice?: number }
// A heap grown past this by one large job stays grown: the thread asks to be replaced.
const retireAbove = options.retireAboveMb
// Linux: this thread below the threads answering requests, so a long job takes only what they leave.
if (options.nice !== undefined && options.nice > 0 && process.platform === "linux") {
  try {
    // /proc/thread-self names this thread's task; setpriority(2) with its id sets this thread alone.
    setPriority(Number(readlinkSync("/proc/thread-self").split("/").pop()), options.nice)
  } catch {
    // Not permitted or not there: the thread keeps its priority.
  }
}
hostJobs({
  post: (message, transfer) => port.postMessage(message, transfer as Array<ArrayBuffer>),
  listen: (handler) => void port.on("message", handler)
}, {
  retire: retireAbove === undefined ? undefined : () => getHeapStatistics().total_heap_size > retireAbove * 1024 * 1024
})
