/**
 * Page extraction on every core: the job threads (adapters/node/jobThreads.ts, the same pool
 * the server runs its jobs on) running core/ingest/RawPage.ts's extractRawPage, as the
 * PageExtractor the read loop (core/ingest/IndexRun.ts) takes. The loop keeps `concurrency`
 * pages in flight (`depth` per thread, so a thread always has pages waiting while the main
 * thread takes answers back, and pages behind a slow one keep coming) and restores their
 * order itself, so the snapshot is the same bytes as a one-thread run.
 *
 * The pool lives in a Scope: closing it (the run ends, fails or is interrupted, e.g. by
 * Ctrl-C) terminates every thread at once, mid-page. A thread that dies (out of memory on a
 * monstrous page, a crash) fails the page it was working on with the reason and is replaced;
 * the pages queued behind it go to another thread. If threads cannot start at all, the
 * remaining pages are extracted on the main thread, so a run always finishes.
 *
 * The same threads then do the build's analysis (`analyze`: a page's field texts in, their
 * tokens out, core/index/analysis/AnalyzedText.ts), which the build replays in page order. In
 * a one-thread run it is two thirds of the build, which otherwise ran on one core while the
 * others sat idle. A page whose thread dies is analysed on the main thread: the build needs
 * them all.
 */
import { availableParallelism } from "node:os"
import type { Worker } from "node:worker_threads"
import { Effect, type Scope } from "effect"
import type { Job } from "../../core/jobs/Job.ts"
import type { JobOutcome, WorkerPool } from "../../core/jobs/WorkerPool.ts"
import { failed, type SourceItem } from "../../core/ingest/DocumentSource.ts"
import { extractRawPage, type PageExtractor, type RawPage } from "../../core/ingest/RawPage.ts"
import type { AnalyzedPage, PageToAnalyze } from "../../core/index/PageLanguages.ts"
import { analyzeTexts } from "./analyzeTexts.ts"
import { analyzeJob, extractJob } from "./extractJobs.ts"
import { nodeWorkerPool } from "./jobThreads.ts"

export interface ExtractPoolOptions {
  /** Worker threads; all cores by default. */
  readonly workers?: number | undefined
  /**
   * Pages in flight per worker (default 32). The read loop keeps answers in order, so pages done
   * behind a slow one still count as in flight: with 8, one big page stalled both workers; 32
   * keeps them busy (test/bench/ingest.ts, a worker per core against one thread).
   */
  readonly depth?: number | undefined
  /** Sees every worker the pool starts (tests watch them exit). */
  readonly onWorker?: ((worker: Worker) => void) | undefined
}

/** Worker threads to use when --workers is not given: one per core the process may use. */
export const defaultWorkers = (): number => availableParallelism()

const DEFAULT_DEPTH = 32

/** Runs a job on the pool; `other` answers any failure (on this thread if need be). */
const runOn = <I, O>(
  pool: WorkerPool,
  job: Job<I, O>,
  input: I,
  workers: number,
  other: (failure: Exclude<JobOutcome, { ok: true }>) => O
): Effect.Effect<O> =>
  Effect.callback<O>((resume) => {
    const cancel = pool.submit(job, input, { workers }, (outcome) =>
      resume(outcome.ok ? Effect.succeed(outcome.output as O) : Effect.sync(() => other(outcome))))
    return Effect.sync(cancel)
  })

/**
 * A PageExtractor on `workers` threads, for as long as the scope is open.
 * Give runIndex no extractor for one thread: that is the same work without a pool.
 */
export const extractPool = (options: ExtractPoolOptions = {}): Effect.Effect<PageExtractor, never, Scope.Scope> => {
  const workers = Math.max(1, Math.floor(options.workers ?? defaultWorkers()))
  const depth = Math.max(1, Math.floor(options.depth ?? DEFAULT_DEPTH))
  return Effect.map(nodeWorkerPool({ name: "periscope-extract", size: workers, depth, onWorker: options.onWorker }), (pool): PageExtractor => ({
    concurrency: workers * depth,
    extract: (origin: string, page: RawPage): Effect.Effect<SourceItem> =>
      runOn(pool, extractJob, { origin, page }, workers, (failure) =>
        // Threads that cannot start: the main thread does what is left.
        pool.broken !== undefined ? extractRawPage(origin, page) : failed(origin, `the extraction worker stopped on this page: ${failure.message}`)),
    // One worker fewer than the cores: the main thread, replaying the tokens in page order, is the
    // build's critical path, and a third busy thread on two cores took a third of its core (no
    // gain in the build's time with both workers analysing). A page cannot be left out of the
    // build: one a worker died on is analysed here.
    analyze: (page: PageToAnalyze): Effect.Effect<AnalyzedPage> =>
      runOn(pool, analyzeJob, page, Math.max(1, workers - 1), () => analyzeTexts(page))
  }))
}
