/**
 * Page extraction on every core (issue 13): a small pool of worker threads
 * running core/ingest/RawPage.ts's extractRawPage, as the PageExtractor the
 * read loop (core/ingest/IndexRun.ts) takes. The loop keeps `concurrency`
 * pages in flight (`depth` per worker, so a worker always has pages waiting
 * while the main thread takes answers back, and pages behind a slow one keep
 * coming) and restores their order itself, so the snapshot is the same bytes
 * as a one-thread run.
 *
 * The pool lives in a Scope: closing it (the run ends, fails or is
 * interrupted, e.g. by Ctrl-C) terminates every worker at once, mid-page.
 * A worker that dies (out of memory on a monstrous page, a crash) fails the
 * page it was working on with the reason; the pages queued behind it go to
 * a fresh worker. Past a few deaths the pool stops spawning and extracts the
 * remaining pages on the main thread, so a run always finishes.
 *
 * The same workers then do the build's analysis (`analyze`: a page's field
 * texts in, their tokens out, core/index/analysis/AnalyzedText.ts), which the
 * build replays in page order. In a one-thread run it is two thirds of the
 * build, which otherwise ran on one core while the others sat idle. A page
 * whose worker dies is analysed on the main thread: the build needs them all.
 */
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { Effect, type Scope } from "effect"
import { failed, type SourceItem } from "../../core/ingest/DocumentSource.ts"
import { extractRawPage, type PageExtractor, type RawPage } from "../../core/ingest/RawPage.ts"
import type { AnalyzedFields } from "../../core/index/analysis/AnalyzedText.ts"
import { analyzeTexts } from "./analyzeTexts.ts"
import type { WorkerAnswer, WorkerRequest } from "./extractWorker.ts"

export interface ExtractPoolOptions {
  /** Worker threads; all cores by default. */
  readonly workers?: number | undefined
  /**
   * Pages in flight per worker (default 32). The read loop keeps answers in order, so pages done
   * behind a slow one still count as in flight: with 8, one big page stalled both workers
   * (1.59-1.85x on 2 cores, 1.71 cores busy); with 32, 1.87-2.03x (test/bench/ingest.ts).
   */
  readonly depth?: number | undefined
  /** Sees every worker the pool starts (tests watch them exit). */
  readonly onWorker?: ((worker: Worker) => void) | undefined
}

/** Worker threads to use when --workers is not given: one per core the process may use. */
export const defaultWorkers = (): number => availableParallelism()

// The worker file next to this one: .ts when run from source, .js in the built package.
const workerUrl = new URL(`./extractWorker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url)

/** A request in flight, and what to do with it in each of the ways it can end. */
interface Pending {
  readonly request: WorkerRequest
  /** The worker answered. */
  readonly answered: (answer: WorkerAnswer) => void
  /** The worker died on this request. */
  readonly crashed: (reason: string) => void
  /** No worker is left: the work is done on this thread. */
  readonly inPlace: () => void
  /** How many of the pool's workers (the first ones) may take it. */
  readonly workers: number
}

interface Slot {
  worker: Worker
  /** Sent to this worker and not answered yet, oldest first (a worker answers in order). */
  readonly pending: Map<number, Pending>
}

const DEFAULT_DEPTH = 32

class Pool {
  private readonly slots: Array<Slot> = []
  private nextId = 0
  private deaths = 0
  private readonly dead = new WeakSet<Worker>()
  private closed = false

  private readonly size: number
  private readonly onWorker: ExtractPoolOptions["onWorker"]

  constructor(size: number, onWorker: ExtractPoolOptions["onWorker"]) {
    this.size = size
    this.onWorker = onWorker
    for (let i = 0; i < size; i++) this.slots.push({ worker: this.spawn(i), pending: new Map() })
  }

  private spawn(index: number): Worker {
    const worker = new Worker(workerUrl, { name: `periscope-extract-${index}` })
    worker.on("message", (answer: WorkerAnswer) => {
      const slot = this.slots[index]
      const entry = slot?.pending.get(answer.id)
      if (slot === undefined || entry === undefined) return
      slot.pending.delete(answer.id)
      entry.answered(answer)
    })
    worker.on("error", (error: unknown) => this.died(index, worker, error instanceof Error ? error.message : String(error)))
    worker.on("exit", (code) => this.died(index, worker, `exited with code ${code}`))
    this.onWorker?.(worker)
    return worker
  }

  /** The request in work ends with the reason; the requests queued behind it go elsewhere. */
  private died(index: number, worker: Worker, reason: string): void {
    if (this.closed || this.dead.has(worker)) return
    this.dead.add(worker)
    this.deaths++
    const slot = this.slots[index]!
    const queued = [...slot.pending.values()]
    slot.pending.clear()
    if (!this.tooManyDeaths()) slot.worker = this.spawn(index)
    queued.shift()?.crashed(reason)
    for (const entry of queued) this.send(entry)
  }

  private tooManyDeaths(): boolean {
    return this.deaths > this.size * 2
  }

  private send(entry: Pending): void {
    let best: Slot | undefined
    for (let i = 0; i < entry.workers; i++) {
      const slot = this.slots[i]!
      if (!this.dead.has(slot.worker) && (best === undefined || slot.pending.size < best.pending.size)) best = slot
    }
    // No worker left (too many deaths): the main thread does what is left.
    if (best === undefined || this.tooManyDeaths()) {
      entry.inPlace()
      return
    }
    best.pending.set(entry.request.id, entry)
    best.worker.postMessage(entry.request)
  }

  /** Sends one request; interrupted, its answer is dropped when it comes. */
  private run<A>(request: WorkerRequest, handle: (resume: (a: A) => void) => Omit<Pending, "request">): Effect.Effect<A> {
    return Effect.callback<A>((resume) => {
      this.send({ request, ...handle((a) => resume(Effect.succeed(a))) })
      return Effect.sync(() => {
        for (const slot of this.slots) slot.pending.delete(request.id)
      })
    })
  }

  readonly extract = (origin: string, page: RawPage): Effect.Effect<SourceItem> =>
    this.run<SourceItem>({ kind: "extract", id: this.nextId++, origin, page }, (resume) => ({
      workers: this.size,
      answered: (answer) => answer.kind === "extract" && resume(answer.item),
      crashed: (reason) => resume(failed(origin, `the extraction worker stopped on this page (${reason})`)),
      inPlace: () => resume(extractRawPage(origin, page))
    }))

  // One worker fewer than the cores: the main thread, replaying the tokens in page order, is the
  // build's critical path, and a third busy thread on two cores took a third of its core (no
  // gain in the build's time with both workers analysing). A page cannot be left out of the
  // build: one a worker died on is analysed here.
  readonly analyze = (texts: ReadonlyArray<string>, stemming: boolean): Effect.Effect<AnalyzedFields> =>
    this.run<AnalyzedFields>({ kind: "analyze", id: this.nextId++, texts, stemming }, (resume) => ({
      workers: Math.max(1, this.size - 1),
      answered: (answer) => answer.kind === "analyze" && resume(answer.analyzed),
      crashed: () => resume(analyzeTexts(texts, stemming)),
      inPlace: () => resume(analyzeTexts(texts, stemming))
    }))

  close(): Promise<unknown> {
    this.closed = true
    return Promise.all(this.slots.map((slot) => slot.worker.terminate()))
  }
}

/**
 * A PageExtractor on `workers` threads, for as long as the scope is open.
 * Give runIndex no extractor for one thread: that is the same work without a pool.
 */
export const extractPool = (options: ExtractPoolOptions = {}): Effect.Effect<PageExtractor, never, Scope.Scope> => {
  const workers = Math.max(1, Math.floor(options.workers ?? defaultWorkers()))
  const depth = Math.max(1, Math.floor(options.depth ?? DEFAULT_DEPTH))
  return Effect.acquireRelease(
    Effect.sync(() => new Pool(workers, options.onWorker)),
    (pool) => Effect.promise(() => pool.close())
  ).pipe(Effect.map((pool): PageExtractor => ({ concurrency: workers * depth, extract: pool.extract, analyze: pool.analyze })))
}
