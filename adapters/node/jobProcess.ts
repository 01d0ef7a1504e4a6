/**
 * A job process of the Node adapter (adapters/node/jobThreads.ts: the server's request jobs):
 * core/jobs/JobHost.ts over this child process's IPC channel. It ends with its parent (the
 * channel closing). Its one argument, JSON: `retireAboveMb` (ask to be replaced after a job that
 * left the heap larger than that) and `nice` (Linux: every thread of this process below the
 * server's, so a long job takes only what the answering thread leaves).
 */
import { readdirSync } from "node:fs"
import { setPriority } from "node:os"
import { getHeapStatistics } from "node:v8"
import { hostJobs } from "../../core/jobs/JobHost.ts"

const send = process.send?.bind(process)
if (send === undefined) throw new Error("jobProcess.ts runs as a child process of jobThreads.ts, not on its own")
const options = JSON.parse(process.argv[2] ?? "{}") as { readonly retireAboveMb?: number; readonly nice?: number }

if (options.nice !== undefined && options.nice > 0 && process.platform === "linux") {
  // setpriority(2) with a thread id sets that thread alone: each thread started so far.
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      setPriority(Number(tid), options.nice)
    } catch {
      // Not permitted, or gone: it keeps its priority.
    }
  }
}

process.on("disconnect", () => process.exit(0))
const retireAbove = options.retireAboveMb
hostJobs({
  post: (message) => void send(message),
  listen: (handler) => void process.on("message", handler)
}, {
  retire: retireAbove === undefined ? undefined : () => getHeapStatistics().total_heap_size > retireAbove * 1024 * 1024
})
