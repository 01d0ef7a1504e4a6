/**
 * Where CPU-heavy work runs (HTML and PDF reading, large validations): off the thread that
 * answers requests, each job under a deadline that ends it and a memory bound, behind a
 * bounded queue. Core declares the contract; each adapter provides the workers through
 * `JobWorkers` (Node: child processes with a heap limit; Deno: Web Workers), and where a
 * runtime has none, jobs run on the calling thread (`JobRunner.sameThread`: no memory bound,
 * and a deadline that can only end a job where it awaits).
 *
 * Failures are typed so that each caller answers with its own documented error: timeout
 * (504 for a request), memory (413), busy (503 with Retry-After), crashed, failed (the job's
 * own error, e.g. a broken PDF).
 */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import type { Job } from "./Job.ts"
import type { JobOutcome, WorkerPool } from "./WorkerPool.ts"

export class JobError extends Schema.TaggedError<JobError>()("JobError", {
  /** The job's name. */
  job: Schema.String,
  reason: Schema.Literals(["timeout", "memory", "busy", "crashed", "failed"]),
  message: Schema.String,
  /** For busy: seconds after which a retry is likely to find room. */
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

/** The bounds of a runner (the config file's `jobs` section: core/config/JobsConfig.ts). */
export interface JobLimits {
  /** Workers; undefined: the adapter's choice (Node: one fewer than the cores, at least one). */
  readonly workers?: number | undefined
  /** Heap of each worker, in MB. */
  readonly memoryMb: number
  /** Jobs that may wait for a worker; past that, busy. */
  readonly queue: number
  /** Deadline of a job whose caller names none, in ms. */
  readonly deadlineMs: number
  /** Where the runtime can (Node on Linux): the workers' nice value, so requests win a contended core; none: as the server. */
  readonly nice?: number | undefined
}

export const DEFAULT_JOB_LIMITS: JobLimits = { memoryMb: 512, queue: 32, deadlineMs: 15_000, nice: 10 }

export interface RunOptions {
  /** From the call to the answer, waiting for a worker included; the runner's `deadlineMs` by default. */
  readonly deadlineMs?: number | undefined
}

export interface JobRunnerShape {
  readonly run: <I, O>(job: Job<I, O>, input: I, options?: RunOptions) => Effect.Effect<O, JobError>
  /** Has every worker load these jobs' code now, so that the first of them does not wait for it. */
  readonly prepare: (jobs: ReadonlyArray<Job<any, any>>) => Effect.Effect<void>
  /** "threads" when jobs run away from the calling thread (worker threads, processes, Web Workers), "same thread" otherwise. */
  readonly where: "threads" | "same thread"
  readonly limits: JobLimits
}

/** How an adapter starts a runner with given limits (its workers live as long as the scope). */
export interface JobWorkersShape {
  readonly start: (limits: JobLimits) => Effect.Effect<JobRunnerShape, never, Scope.Scope>
}

const errorOf = (job: string, outcome: Exclude<JobOutcome, { ok: true }>): JobError =>
  new JobError({
    job,
    reason: outcome.reason,
    message: outcome.message,
    ...(outcome.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: outcome.retryAfterSeconds })
  })

/** A runner over a WorkerPool the adapter started (the pool stays the adapter's to close). */
export const pooledRunner = (pool: WorkerPool, limits: JobLimits): JobRunnerShape => ({
  where: "threads",
  limits,
  prepare: (jobs) => Effect.sync(() => pool.load(jobs.map((job) => job.module))),
  run: <I, O>(job: Job<I, O>, input: I, options?: RunOptions) =>
    Effect.callback<O, JobError>((resume) => {
      const cancel = pool.submit(job, input, { deadlineMs: options?.deadlineMs ?? limits.deadlineMs }, (outcome) =>
        resume(outcome.ok ? Effect.succeed(outcome.output as O) : Effect.fail(errorOf(job.name, outcome))))
      return Effect.sync(cancel)
    })
})

/**
 * Jobs on the calling thread, at most `queue` at once (the same busy answer as a full queue).
 * The deadline ends a job only at an await (a PDF between pages); synchronous work runs to its end.
 */
const sameThreadRunner = (limits: JobLimits): JobRunnerShape => {
  let running = 0
  return {
    where: "same thread",
    limits,
    prepare: () => Effect.void,
    run: <I, O>(job: Job<I, O>, input: I, options?: RunOptions) =>
      Effect.suspend(() => {
        if (running >= limits.queue) {
          return Effect.fail(new JobError({ job: job.name, reason: "busy", message: `the ${job.name} job was not run: ${running} jobs are running, the limit`, retryAfterSeconds: 1 }))
        }
        running++
        const deadlineMs = options?.deadlineMs ?? limits.deadlineMs
        return Effect.tryPromise({
          try: async () => job.run(input),
          catch: (error) => new JobError({ job: job.name, reason: "failed", message: error instanceof Error ? error.message : String(error) })
        }).pipe(
          Effect.timeoutOrElse({
            duration: deadlineMs,
            orElse: () => Effect.fail(new JobError({ job: job.name, reason: "timeout", message: `the ${job.name} job did not finish within ${deadlineMs} ms` }))
          }),
          Effect.ensuring(Effect.sync(() => void running--))
        )
      })
  }
}

const sameThread: JobWorkersShape = { start: (limits) => Effect.succeed(sameThreadRunner(limits)) }

/** The adapter's way to run jobs; without one, jobs run on the calling thread. */
export const JobWorkers = Context.Reference<JobWorkersShape>("periscope/jobs/JobWorkers", { defaultValue: () => sameThread })

export class JobRunner extends Context.Service<JobRunner, JobRunnerShape>()("periscope/jobs/JobRunner") {
  /** A runner with these limits on the adapter's JobWorkers, for as long as the layer lives. */
  static readonly layer = (limits: JobLimits): Layer.Layer<JobRunner> =>
    Layer.effect(JobRunner, Effect.gen(function*() {
      const workers = yield* JobWorkers
      return yield* workers.start(limits)
    }))

  /** Jobs on the calling thread: for runtimes without workers, and for tests of the jobs themselves. */
  static readonly sameThread: JobWorkersShape = sameThread
}
