/**
 * Per-host politeness on Effect's TestClock: the pauses between requests are
 * virtual time, so a delay of seconds is checked without waiting for it.
 */
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { HostGate } from "../../core/ingest/crawl/HostGate.ts"

/** Runs `requests` (each a host and how long its answer takes) at once through one gate; their start times. */
const startsThrough = (gate: HostGate, requests: ReadonlyArray<readonly [string, number]>) =>
  Effect.gen(function*() {
    const starts: Array<[string, number]> = []
    const fibers = yield* Effect.forEach(requests, ([host, takesMs]) =>
      Effect.forkChild(gate.use(host, Effect.gen(function*() {
        starts.push([host, yield* Clock.currentTimeMillis])
        yield* Effect.sleep(takesMs)
      }))))
    yield* TestClock.adjust(60_000)
    yield* Fiber.joinAll(fibers)
    return starts
  }).pipe(Effect.provide(TestClock.layer()), Effect.runPromise)

describe("HostGate", () => {
  it("keeps one request per host and pauses the host's delay after each one ends", async () => {
    const gate = new HostGate(() => 1000)
    const starts = await startsThrough(gate, [["a.example", 200], ["a.example", 200], ["b.example", 50], ["a.example", 200]])
    expect(starts).toEqual([["a.example", 0], ["b.example", 0], ["a.example", 1200], ["a.example", 2400]])
  })

  it("applies a delay learnt during a request (robots.txt Crawl-delay) to the pause after it", async () => {
    const crawlDelay = new Map<string, number>()
    const gate = new HostGate((host) => Math.max(100, crawlDelay.get(host) ?? 0))
    const starts = await Effect.gen(function*() {
      const times: Array<number> = []
      const request = (learn: boolean) =>
        gate.use("a.example", Effect.gen(function*() {
          times.push(yield* Clock.currentTimeMillis)
          if (learn) crawlDelay.set("a.example", 3000)
          yield* Effect.sleep(10)
        }))
      const fibers = yield* Effect.forEach([request(false), request(true), request(false)], (r) => Effect.forkChild(r))
      yield* TestClock.adjust(60_000)
      yield* Fiber.joinAll(fibers)
      return times
    }).pipe(Effect.provide(TestClock.layer()), Effect.runPromise)
    expect(starts).toEqual([0, 110, 3120])
  })
})
