/**
 * Jobs on Deno's Web Workers: core/jobs/WorkerPool.ts over `new Worker(..., {type: "module"})`.
 * A job past its deadline is answered then and its worker replaced, as on Node; but Deno's
 * `terminate()` lets a worker finish the synchronous work it is in, so that work still takes a
 * core until it ends (the page bounds keep it short). Deno gives a worker no heap limit of its
 * own: `jobs.memoryMb` is not enforced here, the process's limit is the only one. Where the
 * runtime has no Workers (Deno Deploy), jobs run on the calling thread.
 */
import { Effect } from "effect"
import { JobRunner, type JobLimits, type JobWorkersShape, pooledRunner } from "../../core/jobs/JobRunner.ts"
import { type SpawnThread, WorkerPool } from "../../core/jobs/WorkerPool.ts"

const workerUrl = new URL("./jobWorker.ts", import.meta.url).href

const spawnDenoWorker: SpawnThread = (index, events) => {
  const worker = new Worker(workerUrl, { type: "module", name: `periscope-jobs-${index}` })
  worker.onmessage = (event) => events.message(event.data)
  worker.onerror = (event) => {
    // Handled here: an uncaught error in a worker would otherwise end the process.
    event.preventDefault()
    events.died("crashed", event.message)
  }
  worker.onmessageerror = () => events.died("crashed", "a message could not be read")
  return {
    post: (message, transfer) => worker.postMessage(message, [...transfer]),
    terminate: () => worker.terminate()
  }
}

const hasWorkers = (): boolean => {
  if (typeof Worker !== "function") return false
  try {
    new Worker(workerUrl, { type: "module" }).terminate()
    return true
  } catch {
    return false
  }
}

/** Threads when `jobs.workers` is not set: one fewer than the cores, at least one. */
const defaultWorkers = (): number => Math.max(1, Math.min(8, (globalThis.navigator?.hardwareConcurrency ?? 2) - 1))

/** The Deno adapter's JobWorkers: Web Workers, or the calling thread where there are none. */
export const denoJobWorkers: JobWorkersShape = {
  start: (limits: JobLimits) =>
    hasWorkers()
      ? Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => new WorkerPool({ size: limits.workers ?? defaultWorkers(), spawn: spawnDenoWorker, queue: limits.queue, endAbandoned: true })),
          (pool) => Effect.sync(() => pool.close())
        ),
        (pool) => pooledRunner(pool, limits)
      )
      : JobRunner.sameThread.start(limits)
}
