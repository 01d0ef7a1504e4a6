/**
 * Jobs on Node worker threads: core/jobs/WorkerPool.ts over node:worker_threads. Each thread
 * has the heap limit of `jobs.memoryMb` (resourceLimits: V8 ends a thread that outgrows it,
 * which the pool reports as out of memory and replaces), and `terminate()` ends a thread
 * mid-job at its deadline. Threads keep the process alive only while they have work.
 *
 * The server's JobRunner (`nodeJobWorkers`) and the indexer's extraction pool
 * (adapters/node/extractPool.ts) are both this pool, over the same worker file.
 */
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { Effect, Layer, type Scope } from "effect"
import { type JobLimits, pooledRunner, JobWorkers, type JobWorkersShape } from "../../core/jobs/JobRunner.ts"
import { type SpawnThread, WorkerPool, type WorkerPoolOptions } from "../../core/jobs/WorkerPool.ts"

// The worker file next to this one: .ts when run from source, .js in the built package.
const workerUrl = new URL(`./jobWorker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url)

export interface ThreadOptions {
  /** Thread names: `${name}-${index}`. */
  readonly name: string
  /** Heap limit of each thread in MB (V8's old generation); none: Node's default. */
  readonly memoryMb?: number | undefined
  /** Sees every thread the pool starts (tests watch them). */
  readonly onWorker?: ((worker: Worker) => void) | undefined
}

/** Starts worker threads running adapters/node/jobWorker.ts. */
export const spawnNodeThread = (options: ThreadOptions): SpawnThread => (index, events) => {
  const worker = new Worker(workerUrl, {
    name: `${options.name}-${index}`,
    ...(options.memoryMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: options.memoryMb } })
  })
  worker.on("message", events.message)
  worker.on("error", (error: Error & { readonly code?: string }) =>
    events.died(error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "memory" : "crashed", error.message))
  worker.on("exit", (code) => events.died("crashed", `exited with code ${code}`))
  options.onWorker?.(worker)
  return {
    post: (message, transfer) => worker.postMessage(message, transfer as Array<ArrayBuffer>),
    terminate: () => void worker.terminate(),
    hold: (held) => (held ? worker.ref() : worker.unref())
  }
}

/** A WorkerPool of Node threads, closed with the scope (every thread ended at once, mid-job). */
export const nodeWorkerPool = (
  options: Omit<WorkerPoolOptions, "spawn"> & ThreadOptions
): Effect.Effect<WorkerPool, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => new WorkerPool({ ...options, spawn: spawnNodeThread(options) })),
    (pool) => Effect.sync(() => pool.close())
  )

/** Threads for request jobs when `jobs.workers` is not set: one fewer than the cores, so one is left to answer requests. */
export const defaultJobThreads = (): number => Math.max(1, Math.min(8, availableParallelism() - 1))

/** The Node adapter's JobWorkers: a pool of worker threads under the limits given. */
export const nodeJobWorkers: JobWorkersShape = {
  start: (limits: JobLimits) =>
    Effect.map(
      nodeWorkerPool({
        name: "periscope-jobs",
        size: limits.workers ?? defaultJobThreads(),
        memoryMb: limits.memoryMb,
        memoryLimit: `${limits.memoryMb} MB, jobs.memoryMb`,
        queue: limits.queue,
        endAbandoned: true
      }),
      (pool) => pooledRunner(pool, limits)
    )
}

/** Provides nodeJobWorkers to the application (part of the Node platform). */
export const nodeJobWorkersLayer = Layer.succeed(JobWorkers, nodeJobWorkers)
