/**
 * A job thread of the Node adapter (adapters/node/jobThreads.ts): core/jobs/JobHost.ts over
 * this thread's port. It loads nothing else up front: each job's module is imported when the
 * pool first sends one of its jobs, so a thread (or its replacement) is ready at once.
 */
import { parentPort } from "node:worker_threads"
import { hostJobs } from "../../core/jobs/JobHost.ts"

const port = parentPort
if (port === null) throw new Error("jobWorker.ts runs as a worker thread of jobThreads.ts, not on its own")
hostJobs({
  post: (message, transfer) => port.postMessage(message, transfer as Array<ArrayBuffer>),
  listen: (handler) => void port.on("message", handler)
})
