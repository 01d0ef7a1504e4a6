/**
 * A bounded pool of workers for jobs (core/jobs/Job.ts), with the runtime left out: an adapter
 * gives the way to start one worker (a Node child process or worker thread, a Deno Web Worker),
 * called a thread below, and the pool does the rest, the same on every runtime.
 *
 * - A job waits in a queue of bounded length for a thread; past the bound it is refused at once
 *   as busy, with a guess of when to retry.
 * - A job's deadline counts from its submission, waiting included. At the deadline a waiting
 *   job leaves the queue, and a running one's thread is ended there and then (mid-loop: a
 *   process is killed, a worker thread terminated) and replaced: the caller hears at its
 *   deadline, not when the work would have ended.
 * - A thread that dies (out of memory under its limit, a crash) fails the job it was running
 *   with the reason and is replaced; jobs sent to it behind that one go to another thread.
 * - A thread that says it holds too much memory after a job (JobHost's `retire`) takes no more
 *   jobs and is replaced once its last one is answered: ending a process gives its heap back.
 * - Threads that die before they start, again and again, mark the pool broken: every job then
 *   fails as crashed instead of spawning threads in a loop.
 *
 * `depth` jobs may be sent to one thread ahead of its answers (the indexer keeps threads fed);
 * jobs with deadlines want 1, so that a job's thread is at work on it when its deadline comes.
 *
 * No runtime import of effect here: the pool is plain callbacks, wrapped once by JobRunner.
 */
import type { FromWorker, ToWorker } from "./JobHost.ts"
import type { Job } from "./Job.ts"

/** One thread, as the pool drives it. */
export interface WorkerThread {
  readonly post: (message: ToWorker, transfer: ReadonlyArray<ArrayBuffer>) => void
  /** Ends the thread at once, even mid-job. */
  readonly terminate: () => void
  /** Whether the thread keeps the process alive (true while it has work). */
  readonly hold?: ((held: boolean) => void) | undefined
}

/** What a thread reports to the pool. */
export interface ThreadEvents {
  readonly message: (message: FromWorker) => void
  /** The thread is gone: out of its memory limit, an uncaught error, or it exited. */
  readonly died: (reason: "memory" | "crashed", detail: string) => void
}

/** Starts thread number `index` of the pool (0-based; a replacement gets its predecessor's index). */
export type SpawnThread = (index: number, events: ThreadEvents) => WorkerThread

export type JobFailureReason = "timeout" | "memory" | "busy" | "crashed" | "failed"

export type JobOutcome =
  | { readonly ok: true; readonly output: unknown }
  | { readonly ok: false; readonly reason: JobFailureReason; readonly message: string; readonly retryAfterSeconds?: number }

export interface WorkerPoolOptions {
  readonly size: number
  readonly spawn: SpawnThread
  /** Jobs sent to one thread ahead of its answers (default 1). */
  readonly depth?: number | undefined
  /** Jobs that may wait for a thread (default unbounded). */
  readonly queue?: number | undefined
  /** The threads' memory limit as errors name it ("512 MB (jobs.memoryMb)"). */
  readonly memoryLimit?: string | undefined
  /** A running job whose caller gave up ends its thread (true), or is left to finish (false, the default). */
  readonly endAbandoned?: boolean | undefined
}

export interface SubmitOptions {
  /** From submission to answer, waiting included; none by default. */
  readonly deadlineMs?: number | undefined
  /** Only the first `workers` threads of the pool may take the job (default: any). */
  readonly workers?: number | undefined
  /** Buffers of the input to move to the thread instead of copying them. */
  readonly transfer?: ReadonlyArray<ArrayBuffer> | undefined
}

interface Task {
  readonly id: number
  readonly name: string
  readonly module: string
  readonly input: unknown
  readonly options: SubmitOptions
  readonly settle: (outcome: JobOutcome) => void
  timer: ReturnType<typeof setTimeout> | undefined
  sentAt: number
  /** Answered, failed or given up: an answer that still comes is dropped. */
  done: boolean
}

interface Slot {
  readonly index: number
  thread: WorkerThread
  /** Each spawn's number: events of a thread that was replaced are ignored. */
  generation: number
  alive: boolean
  ready: boolean
  /** Takes no more jobs; replaced once its pending ones are answered. */
  retiring: boolean
  /** Sent and not answered, oldest first: the thread answers in this order. */
  readonly pending: Array<Task>
}

/** Consecutive deaths before a first "ready" that mark the pool broken. */
const START_FAILURES = 3

export class WorkerPool {
  private readonly slots: Array<Slot> = []
  private readonly waiting: Array<Task> = []
  private readonly modules = new Set<string>()
  private nextId = 0
  private startFailures = 0
  private brokenBy: string | undefined
  private closed = false
  /** Recent job time (ms), for Retry-After. */
  private typicalMs = 1000
  private readonly depth: number
  private readonly queue: number
  private readonly options: WorkerPoolOptions

  constructor(options: WorkerPoolOptions) {
    this.options = options
    this.depth = Math.max(1, Math.floor(options.depth ?? 1))
    this.queue = options.queue ?? Number.POSITIVE_INFINITY
    for (let index = 0; index < Math.max(1, Math.floor(options.size)); index++) {
      const slot: Slot = { index, thread: undefined as unknown as WorkerThread, generation: 0, alive: false, ready: false, retiring: false, pending: [] }
      this.slots.push(slot)
      this.start(slot)
    }
  }

  get size(): number {
    return this.slots.length
  }

  /** Why the pool gave up starting threads, if it did. */
  get broken(): string | undefined {
    return this.brokenBy
  }

  /** Runs `job` on a thread; `settle` hears once. The returned function gives the job up. */
  submit<I, O>(job: Job<I, O>, input: I, options: SubmitOptions, settle: (outcome: JobOutcome) => void): () => void {
    const task: Task = {
      id: this.nextId++,
      name: job.name,
      module: job.module,
      input,
      options,
      settle,
      timer: undefined,
      sentAt: 0,
      done: false
    }
    if (this.closed) {
      settle({ ok: false, reason: "crashed", message: `the ${job.name} job was not run: the job threads are closed` })
      return () => undefined
    }
    if (this.brokenBy !== undefined) {
      settle({ ok: false, reason: "crashed", message: `the ${job.name} job was not run: ${this.brokenBy}` })
      return () => undefined
    }
    this.modules.add(job.module)
    if (this.freeSlot(task) === undefined && this.waiting.length >= this.queue) {
      const retryAfterSeconds = Math.min(60, Math.max(1, Math.ceil((this.typicalMs * (this.waiting.length / this.slots.length + 1)) / 1000)))
      settle({
        ok: false,
        reason: "busy",
        message: `the ${job.name} job was not run: ${this.waiting.length} jobs are waiting for a thread, the limit`,
        retryAfterSeconds
      })
      return () => undefined
    }
    if (options.deadlineMs !== undefined) {
      task.timer = setTimeout(() => this.expire(task), Math.max(0, options.deadlineMs))
    }
    this.waiting.push(task)
    this.dispatch()
    return () => this.abandon(task)
  }

  /** Every thread, and every one started later, imports these modules ahead of their jobs. */
  load(modules: ReadonlyArray<string>): void {
    const fresh = modules.filter((module) => !this.modules.has(module))
    if (fresh.length === 0 || this.closed) return
    for (const module of fresh) this.modules.add(module)
    for (const slot of this.slots) if (slot.alive) slot.thread.post({ type: "load", modules: fresh }, [])
  }

  /** Ends every thread; jobs not answered fail as crashed. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const task of this.waiting.splice(0)) this.fail(task, "crashed", `the ${task.name} job was not run: the job threads are closed`)
    for (const slot of this.slots) {
      slot.alive = false
      for (const task of slot.pending.splice(0)) this.fail(task, "crashed", `the ${task.name} job was stopped: the job threads are closed`)
      slot.thread.terminate()
    }
  }

  private start(slot: Slot): void {
    const generation = ++slot.generation
    slot.alive = true
    slot.ready = false
    slot.retiring = false
    const current = () => slot.generation === generation && slot.alive
    slot.thread = this.options.spawn(slot.index, {
      message: (message) => {
        if (current()) this.received(slot, message)
      },
      died: (reason, detail) => {
        if (current()) this.died(slot, reason, detail)
      }
    })
    slot.thread.hold?.(false)
    // A replacement loads what its predecessor had loaded, before its first job asks.
    if (this.modules.size > 0) slot.thread.post({ type: "load", modules: [...this.modules] }, [])
  }

  private received(slot: Slot, message: FromWorker): void {
    if (message.type === "ready") {
      slot.ready = true
      this.startFailures = 0
      return
    }
    // Said with the answer, so that no job is sent to the thread in between.
    if (message.retire === true) slot.retiring = true
    const at = slot.pending.findIndex((task) => task.id === message.id)
    if (at === -1) return
    const [task] = slot.pending.splice(at, 1)
    if (slot.pending.length === 0) slot.thread.hold?.(false)
    if (!task!.done) {
      this.typicalMs = this.typicalMs * 0.8 + (Date.now() - task!.sentAt) * 0.2
      this.finish(task!)
      task!.settle(message.type === "done" ? { ok: true, output: message.output } : { ok: false, reason: "failed", message: message.message })
    }
    this.recycleIfIdle(slot)
    this.dispatch()
  }

  /** A retiring thread with nothing left to answer is ended and replaced. */
  private recycleIfIdle(slot: Slot): void {
    if (!slot.retiring || slot.pending.length > 0 || this.closed) return
    slot.alive = false
    slot.thread.terminate()
    this.start(slot)
    this.dispatch()
  }

  /**
   * The thread is gone: its job at work fails with the reason, the ones behind it wait again.
   * `ended`: the pool ended it (a deadline, a caller gone), which says nothing about starting.
   */
  private died(slot: Slot, reason: "memory" | "crashed", detail: string, ended = false): void {
    slot.alive = false
    const pending = slot.pending.splice(0)
    const atWork = pending.shift()
    if (atWork !== undefined && !atWork.done) {
      this.fail(atWork, reason, reason === "memory"
        ? `the ${atWork.name} job ran out of memory${this.options.memoryLimit === undefined ? "" : ` (limit ${this.options.memoryLimit})`}`
        : `the worker running the ${atWork.name} job stopped (${detail})`)
    }
    this.waiting.unshift(...pending.filter((task) => !task.done))
    if (this.closed) return
    if (!slot.ready && !ended && ++this.startFailures >= START_FAILURES) {
      this.brokenBy = `the job threads cannot start (${detail})`
      for (const task of this.waiting.splice(0)) this.fail(task, "crashed", `the ${task.name} job was not run: ${this.brokenBy}`)
      return
    }
    this.start(slot)
    this.dispatch()
  }

  /** Ends a thread at work on a job that must stop now, and starts its replacement. */
  private kill(slot: Slot, detail: string): void {
    slot.thread.terminate()
    this.died(slot, "crashed", detail, true)
  }

  private expire(task: Task): void {
    task.timer = undefined
    if (task.done) return
    const deadline = task.options.deadlineMs
    this.giveUp(task, () => this.fail(task, "timeout", `the ${task.name} job did not finish within ${deadline} ms`), true)
  }

  private abandon(task: Task): void {
    if (task.done) return
    this.giveUp(task, () => this.finish(task), this.options.endAbandoned === true)
  }

  /** Takes a task out of the queue or off its thread; a thread at work on it ends when `end`. */
  private giveUp(task: Task, settle: () => void, end: boolean): void {
    const waitingAt = this.waiting.indexOf(task)
    if (waitingAt !== -1) {
      this.waiting.splice(waitingAt, 1)
      settle()
      return
    }
    settle()
    const slot = this.slots.find((s) => s.pending.includes(task))
    if (slot === undefined) return
    if (end && slot.pending[0] === task) this.kill(slot, `${task.name} ended at its deadline or abandoned`)
  }

  private fail(task: Task, reason: JobFailureReason, message: string): void {
    if (task.done) return
    this.finish(task)
    task.settle({ ok: false, reason, message })
  }

  private finish(task: Task): void {
    task.done = true
    if (task.timer !== undefined) clearTimeout(task.timer)
    task.timer = undefined
  }

  private freeSlot(task: Task): Slot | undefined {
    const limit = Math.min(this.slots.length, task.options.workers ?? this.slots.length)
    let best: Slot | undefined
    for (let i = 0; i < limit; i++) {
      const slot = this.slots[i]!
      if (!slot.alive || slot.retiring || slot.pending.length >= this.depth) continue
      if (best === undefined || slot.pending.length < best.pending.length) best = slot
    }
    return best
  }

  private dispatch(): void {
    for (let i = 0; i < this.waiting.length;) {
      const task = this.waiting[i]!
      const slot = this.freeSlot(task)
      if (slot === undefined) {
        i++
        continue
      }
      this.waiting.splice(i, 1)
      if (slot.pending.length === 0) slot.thread.hold?.(true)
      slot.pending.push(task)
      task.sentAt = Date.now()
      slot.thread.post({ type: "run", id: task.id, module: task.module, name: task.name, input: task.input }, task.options.transfer ?? [])
    }
  }
}
