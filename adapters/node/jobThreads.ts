/**
 * Jobs on Node: core/jobs/WorkerPool.ts over one of two carriers, both running
 * core/jobs/JobHost.ts.
 *
 * - Child processes (`spawnNodeProcess`), for the server's request jobs (`nodeJobWorkers`). A
 *   process at its heap limit (`jobs.memoryMb`, V8's --max-old-space-size) ends alone, and
 *   SIGKILL ends one mid-job at its deadline; either way its memory goes back to the system.
 *   Worker threads give neither: a thread reaching its resourceLimits can abort the whole
 *   process when the allocation that crosses it is a large one (nodejs/node#47224), and the
 *   heap pages of a terminated thread stay with the process for the next thread to reuse.
 * - Worker threads (`spawnNodeThread`), for the indexer's extraction pool
 *   (adapters/node/extractPool.ts): its many small pages cross by memory copy, the build's
 *   tokens move back without a copy, and an index run is one command, not a server.
 *
 * On Linux both run at `nice`, below the thread that answers requests (test/bench/stall.ts: the
 * searches' p99 while pages are read). Carriers keep the process alive only while they have work.
 */
import { fork } from "node:child_process"
import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import { Effect, Layer, type Scope } from "effect"
import { type JobLimits, pooledRunner, JobWorkers, type JobWorkersShape } from "../../core/jobs/JobRunner.ts"
import { type SpawnThread, WorkerPool, type WorkerPoolOptions } from "../../core/jobs/WorkerPool.ts"

// The carriers' files next to this one: .ts when run from source, .js in the built package.
const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js"
const workerUrl = new URL(`./jobWorker${extension}`, import.meta.url)
const processPath = fileURLToPath(new URL(`./jobProcess${extension}`, import.meta.url))

export interface ThreadOptions {
  /** Thread names: `${name}-${index}`. */
  readonly name: string
  /** Heap limit of each thread in MB (V8's old generation); none: Node's default. */
  readonly memoryMb?: number | undefined
  /** A thread whose heap is larger than this after a job is replaced once idle; none: kept. */
  readonly retireAboveMb?: number | undefined
  /** Linux: the threads' nice value (0 to 19), below the request threads; none: as the process. */
  readonly nice?: number | undefined
  /** Sees every thread the pool starts (tests watch them). */
  readonly onWorker?: ((worker: Worker) => void) | undefined
}

/** Starts worker threads running adapters/node/jobWorker.ts. */
export const spawnNodeThread = (options: ThreadOptions): SpawnThread => (index, events) => {
  const worker = new Worker(workerUrl, {
    name: `${options.name}-${index}`,
    workerData: { retireAboveMb: options.retireAboveMb, nice: options.nice },
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

export interface ProcessOptions {
  /** Heap limit of each process in MB (V8's old generation); none: Node's default. */
  readonly memoryMb?: number | undefined
  /** A process whose heap is larger than this after a job is replaced once idle; none: kept. */
  readonly retireAboveMb?: number | undefined
  /** Linux: the processes' nice value (0 to 19); none: as this process. */
  readonly nice?: number | undefined
}

// What V8 writes before it aborts a process at its heap limit.
const OUT_OF_MEMORY = /heap out of memory|Reached heap limit/

/** Starts child processes running adapters/node/jobProcess.ts, with this process's flags less an inspector and a heap size. */
export const spawnNodeProcess = (options: ProcessOptions): SpawnThread => (_index, events) => {
  const execArgv = [
    ...process.execArgv.filter((flag) => !/^--(inspect|max-old-space-size)/.test(flag)),
    ...(options.memoryMb === undefined ? [] : [`--max-old-space-size=${options.memoryMb}`])
  ]
  const child = fork(processPath, [JSON.stringify({ retireAboveMb: options.retireAboveMb, nice: options.nice })], {
    execArgv,
    serialization: "advanced",
    stdio: ["ignore", "ignore", "pipe", "ipc"]
  })
  // The end of its error output says whether V8 ended it for memory.
  let errors = ""
  child.stderr?.on("data", (chunk: Buffer) => void (errors = (errors + String(chunk)).slice(-4096)))
  child.on("message", events.message)
  child.on("error", (error) => events.died("crashed", error.message))
  // After its output has been read: "close" comes once the process has exited and its pipes are drained.
  child.on("close", (code, signal) =>
    events.died(OUT_OF_MEMORY.test(errors) ? "memory" : "crashed", signal === null ? `exited with code ${code}` : `ended by ${signal}`))
  return {
    // A process that has just died cannot take it: its death is reported by "close".
    post: (message) => void child.send(message, () => undefined),
    terminate: () => void child.kill("SIGKILL"),
    hold: (held) => {
      if (held) {
        child.ref()
        child.channel?.ref()
      } else {
        child.unref()
        child.channel?.unref()
      }
    }
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

/** Carriers for request jobs when `jobs.workers` is not set: one fewer than the cores, so one is left to answer requests. */
export const defaultJobThreads = (): number => Math.max(1, Math.min(8, availableParallelism() - 1))

/** The Node adapter's JobWorkers: a pool of job processes under the limits given, ended with the scope. */
export const nodeJobWorkers: JobWorkersShape = {
  start: (limits: JobLimits) =>
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() =>
          new WorkerPool({
            size: limits.workers ?? defaultJobThreads(),
            spawn: spawnNodeProcess({
              memoryMb: limits.memoryMb,
              // The memory one large page took goes back to the system at once, not at some later collection.
              // Ordinary pages leave a heap of one to two hundred MB: half the limit spares them.
              retireAboveMb: Math.max(64, Math.floor(limits.memoryMb / 2)),
              nice: limits.nice
            }),
            memoryLimit: `${limits.memoryMb} MB, jobs.memoryMb`,
            queue: limits.queue,
            endAbandoned: true
          })
        ),
        (pool) => Effect.sync(() => pool.close())
      ),
      (pool) => pooledRunner(pool, limits)
    )
}

/** Provides nodeJobWorkers to the application (part of the Node platform). */
export const nodeJobWorkersLayer = Layer.succeed(JobWorkers, nodeJobWorkers)
