/**
 * The job runner of the Node server (adapters/node/jobThreads.ts: core/jobs/WorkerPool.ts over
 * child processes) with real processes running real jobs (testJobs.ts): answers cross over; a
 * job past its deadline is ended there, mid-loop, and its process replaced; a job past the
 * memory limit fails as such and the server goes on; a full queue answers busy with a time to
 * retry; a job's own error and a process that exits are told apart; a caller that gives up ends
 * the work. The same pool over worker threads (the indexer's carrier): a thread ended at its
 * deadline exits at once, one left large by a job is replaced. The same-thread runner (runtimes
 * without workers) answers the same jobs with the same errors.
 */
import { Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { nodeJobWorkers, nodeWorkerPool } from "../../adapters/node/jobThreads.ts"
import { type JobError, type JobLimits, JobRunner, type JobRunnerShape, pooledRunner } from "../../core/jobs/JobRunner.ts"
import { echoJob, exitJob, growJob, niceJob, spinJob, throwJob, whereJob } from "./testJobs.ts"

const limits = (overrides: Partial<JobLimits> = {}): JobLimits => ({ workers: 1, memoryMb: 128, queue: 4, deadlineMs: 30_000, ...overrides })

const withRunner = <A>(given: JobLimits, body: (runner: JobRunnerShape) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(nodeJobWorkers.start(given), body)))

const failureOf = <A>(effect: Effect.Effect<A, JobError>) => Effect.flip(effect)

const here = `${process.pid}/0`

describe("job runner of the Node server (child processes)", () => {
  it("runs a job in another process and brings its output back", async () => {
    const value = { text: "héllo", list: [1, 2, 3], bytes: new Uint8Array([7, 8]), nested: { date: null, when: new Date(0) } }
    const { output, where } = await withRunner(limits(), (runner) =>
      Effect.all({ output: runner.run(echoJob, value), where: runner.run(whereJob, null) }))
    expect(output).toEqual(value)
    expect(where).not.toBe(here)
    expect(await withRunner(limits(), (runner) => Effect.succeed(runner.where))).toBe("threads")
  })

  it("ends a job at its deadline, mid-loop, and replaces its process", async () => {
    const result = await withRunner(limits(), (runner) =>
      Effect.gen(function*() {
        const before = yield* runner.run(whereJob, null)
        const started = Date.now()
        const error = yield* failureOf(runner.run(spinJob, { ms: 60_000 }, { deadlineMs: 300 }))
        const waited = Date.now() - started
        const after = yield* runner.run(whereJob, null)
        return { error, waited, before, after }
      }))
    expect(result.error.reason).toBe("timeout")
    expect(result.error.message).toBe("the spin job did not finish within 300 ms")
    // Answered at the deadline, not when the minute of work would have ended.
    expect(result.waited).toBeLessThan(10_000)
    expect(result.after).not.toBe(result.before)
  })

  it("on threads too: the thread of a job past its deadline exits, its work does not go on", async () => {
    const exits: Array<number> = []
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const pool = yield* nodeWorkerPool({
        name: "test-jobs",
        size: 1,
        onWorker: (worker) => void worker.on("exit", () => exits.push(Date.now()))
      })
      const runner = pooledRunner(pool, limits())
      const error = yield* failureOf(runner.run(spinJob, { ms: 60_000 }, { deadlineMs: 300 }))
      const answeredAt = Date.now()
      while (exits.length === 0) yield* Effect.sleep(20)
      return { error, answeredAt }
    })))
    expect(result.error.reason).toBe("timeout")
    // The spinning thread is gone within moments of the answer, not a minute later.
    expect(exits[0]! - result.answeredAt).toBeLessThan(5000)
  })

  it("keeps going after many processes ended at their deadlines before they had started", async () => {
    const result = await withRunner(limits(), (runner) =>
      Effect.gen(function*() {
        const reasons: Array<string> = []
        for (let i = 0; i < 6; i++) reasons.push((yield* failureOf(runner.run(spinJob, { ms: 60_000 }, { deadlineMs: 30 }))).reason)
        return { reasons, next: yield* runner.run(echoJob, "next") }
      }))
    expect(result.reasons).toEqual(Array(6).fill("timeout"))
    expect(result.next).toBe("next")
  })

  it("on threads too: replaces a thread whose heap a job left larger than retireAboveMb, once idle, and keeps one that stayed small", async () => {
    const threads = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const pool = yield* nodeWorkerPool({ name: "test-jobs", size: 1, memoryMb: 512, retireAboveMb: 64 })
      const runner = pooledRunner(pool, limits())
      const first = yield* runner.run(whereJob, null)
      yield* runner.run(echoJob, "small")
      const afterSmall = yield* runner.run(whereJob, null)
      yield* runner.run(growJob, { megabytes: 128 })
      const afterLarge = yield* runner.run(whereJob, null)
      return { first, afterSmall, afterLarge }
    })))
    expect(threads.afterSmall).toBe(threads.first)
    expect(threads.afterLarge).not.toBe(threads.first)
  })

  it("replaces a process a large job left large, so that its memory goes back to the system", async () => {
    const where = await withRunner(limits({ memoryMb: 256 }), (runner) =>
      Effect.gen(function*() {
        const first = yield* runner.run(whereJob, null)
        yield* runner.run(growJob, { megabytes: 160 })
        return { first, after: yield* runner.run(whereJob, null) }
      }))
    expect(where.after).not.toBe(where.first)
  })

  it.skipIf(process.platform !== "linux")("runs its processes at the nice value given, and threads too (Linux)", async () => {
    expect(await withRunner(limits({ nice: 7 }), (runner) => runner.run(niceJob, null))).toBe(7)
    expect(await withRunner(limits(), (runner) => runner.run(niceJob, null))).toBe(0)
    const onThread = await Effect.runPromise(Effect.scoped(Effect.flatMap(
      nodeWorkerPool({ name: "test-jobs", size: 1, nice: 5 }),
      (pool) => pooledRunner(pool, limits()).run(niceJob, null)
    )))
    expect(onThread).toBe(5)
  })

  it("counts the deadline from the call: a job still waiting for a thread times out in the queue", async () => {
    const error = await withRunner(limits(), (runner) =>
      Effect.gen(function*() {
        const busy = yield* Effect.forkChild(runner.run(spinJob, { ms: 60_000 }, { deadlineMs: 20_000 }))
        yield* Effect.yieldNow
        const waiting = yield* failureOf(runner.run(echoJob, 1, { deadlineMs: 300 }))
        yield* Fiber.interrupt(busy)
        return waiting
      }))
    expect(error.reason).toBe("timeout")
    expect(error.job).toBe("echo")
  })

  it("fails a job that outgrows the memory limit as out of memory, naming the limit, and goes on", async () => {
    const result = await withRunner(limits({ memoryMb: 64 }), (runner) =>
      Effect.gen(function*() {
        const error = yield* failureOf(runner.run(growJob, { megabytes: 1024 }))
        const next = yield* runner.run(echoJob, "still here")
        return { error, next }
      }))
    expect(result.error.reason).toBe("memory")
    expect(result.error.message).toBe("the grow job ran out of memory (limit 64 MB, jobs.memoryMb)")
    expect(result.next).toBe("still here")
  })

  it("answers busy, with a time to retry, when the queue is full", async () => {
    const error = await withRunner(limits({ queue: 1 }), (runner) =>
      Effect.gen(function*() {
        const running = yield* Effect.forkChild(runner.run(spinJob, { ms: 60_000 }))
        const waiting = yield* Effect.forkChild(runner.run(echoJob, 1))
        yield* Effect.yieldNow
        const refused = yield* failureOf(runner.run(echoJob, 2))
        yield* Fiber.interrupt(running)
        expect(yield* Fiber.join(waiting)).toBe(1)
        return refused
      }))
    expect(error.reason).toBe("busy")
    expect(error.message).toBe("the echo job was not run: 1 jobs are waiting for a thread, the limit")
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1)
  })

  it("tells a job's own error from a process that died, and replaces the dead one", async () => {
    const result = await withRunner(limits(), (runner) =>
      Effect.gen(function*() {
        const thrown = yield* failureOf(runner.run(throwJob, { message: "the PDF is broken" }))
        const exited = yield* failureOf(runner.run(exitJob, null))
        const next = yield* runner.run(echoJob, "next")
        return { thrown, exited, next }
      }))
    expect(result.thrown).toMatchObject({ reason: "failed", message: "the PDF is broken", job: "throw" })
    expect(result.exited.reason).toBe("crashed")
    expect(result.exited.message).toBe("the worker running the exit job stopped (exited with code 3)")
    expect(result.next).toBe("next")
  })

  it("ends the work when the caller gives up on a running job", async () => {
    const result = await withRunner(limits(), (runner) =>
      Effect.gen(function*() {
        const before = yield* runner.run(whereJob, null)
        const spinning = yield* Effect.forkChild(runner.run(spinJob, { ms: 60_000 }))
        yield* Effect.sleep(200)
        const started = Date.now()
        yield* Fiber.interrupt(spinning)
        // The one process is free again: the next job runs at once, on its replacement.
        const after = yield* runner.run(whereJob, null, { deadlineMs: 10_000 })
        return { before, after, waited: Date.now() - started }
      }))
    expect(result.after).not.toBe(result.before)
    expect(result.waited).toBeLessThan(10_000)
  })
})

describe("job runner on the calling thread (no workers)", () => {
  const run = <A>(body: (runner: JobRunnerShape) => Effect.Effect<A, unknown>) =>
    Effect.runPromise(Effect.scoped(Effect.flatMap(JobRunner.sameThread.start(limits()), body)))

  it("runs the same jobs with the same errors", async () => {
    const result = await run((runner) =>
      Effect.gen(function*() {
        const echoed = yield* runner.run(echoJob, { a: 1 })
        const thrown = yield* failureOf(runner.run(throwJob, { message: "nope" }))
        return { echoed, thrown, where: runner.where }
      }))
    expect(result).toMatchObject({ echoed: { a: 1 }, thrown: { reason: "failed", message: "nope" }, where: "same thread" })
  })

  it("is what JobRunner.layer gives when the adapter provides no workers", async () => {
    const exit = await Effect.runPromiseExit(Effect.provide(Effect.map(Effect.service(JobRunner), (runner) => runner.where), JobRunner.layer(limits())))
    expect(Exit.isSuccess(exit) && exit.value).toBe("same thread")
  })
})
