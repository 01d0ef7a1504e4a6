import { Clock, Duration, Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { makeAuthenticator } from "../../core/auth/ApiKeys.ts"
import { generateKey, hashKey, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { MemoryBuckets } from "../../core/auth/MemoryBuckets.ts"
import { RateLimits } from "../../core/auth/RateLimits.ts"

describe("key check", () => {
  const authenticate = makeAuthenticator([
    ...recordsFromPlainKeys(["alpha-key"]),
    { name: "beta", sha256: hashKey("beta-key"), requestsPerMinute: 5 }
  ])
  const run = (key: string) => Effect.runSync(Effect.result(authenticate(key)))

  it("finds the record of a known key, whichever position it has", () => {
    expect(run("alpha-key")).toMatchObject({ _tag: "Success", success: { keyName: "env-1", requestsPerMinute: 1000 } })
    expect(run("beta-key")).toMatchObject({ _tag: "Success", success: { keyName: "beta", requestsPerMinute: 5 } })
  })
  it("refuses unknown, empty, near-miss and oversized keys", () => {
    for (const key of ["", "alpha-ke", "alpha-keyy", "ALPHA-KEY", "x".repeat(10_000)]) {
      const result = run(key)
      expect(result._tag).toBe("Failure")
      if (result._tag === "Failure") expect(result.failure.reason).toBe(key === "" ? "missing_key" : "invalid_key")
    }
  })
  it("hashes keys as SHA-256 hex", () => {
    expect(hashKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })
  it("generates distinct 256-bit keys", () => {
    const keys = new Set(Array.from({ length: 100 }, generateKey))
    expect(keys.size).toBe(100)
    for (const key of keys) expect(key).toMatch(/^psk_[A-Za-z0-9_-]{43}$/)
  })
})

describe("rate limits (in memory)", () => {
  /** Runs `body` with fresh limits on a TestClock; `take` answers 0 when allowed, else the seconds to wait. */
  const withLimits = (body: (take: (key: string, perMinute: number) => Effect.Effect<number>) => Effect.Effect<void>) =>
    Effect.runPromise(Effect.gen(function*() {
      const limits = yield* RateLimits
      yield* body((key, perMinute) =>
        limits.check({ keyName: key, requestsPerMinute: perMinute }).pipe(
          Effect.as(0),
          Effect.catch((error) => {
            expect(error.reason).toBe("rate_limited")
            expect(error.message).toContain(JSON.stringify(key))
            return Effect.succeed(error.retryAfterSeconds!)
          })
        ))
    }).pipe(Effect.provide(Layer.merge(RateLimits.layerMemory, TestClock.layer()))))

  it("allows a minute's worth at once, then one per refill interval", () =>
    withLimits((take) =>
      Effect.gen(function*() {
        for (let i = 0; i < 60; i++) expect(yield* take("k", 60)).toBe(0)
        expect(yield* take("k", 60)).toBeCloseTo(1, 5)
        yield* TestClock.adjust("500 millis")
        expect(yield* take("k", 60)).toBeCloseTo(0.5, 5)
        yield* TestClock.adjust("500 millis")
        expect(yield* take("k", 60)).toBe(0)
        expect(yield* take("k", 60)).toBeGreaterThan(0)
      })))

  it("keeps keys apart and never refills past capacity", () =>
    withLimits((take) =>
      Effect.gen(function*() {
        expect(yield* take("a", 2)).toBe(0)
        expect(yield* take("a", 2)).toBe(0)
        expect(yield* take("a", 2)).toBeGreaterThan(0)
        expect(yield* take("b", 2)).toBe(0)
        // An hour idle refills to 2, not 120.
        yield* TestClock.adjust("1 hour")
        expect(yield* take("a", 2)).toBe(0)
        expect(yield* take("a", 2)).toBe(0)
        expect(yield* take("a", 2)).toBeGreaterThan(0)
      })))
})

describe("MemoryBuckets", () => {
  // The same arithmetic as Effect's RateLimiter over its memory store: the same answer to every
  // request of a random schedule (limits, keys, clock steps), refusals and retry-after included.
  it("answers as Effect's RateLimiter memory store does, step by step", () =>
    Effect.runPromise(Effect.gen(function*() {
      const limiter = yield* RateLimiter.RateLimiter
      const buckets = new MemoryBuckets()
      let seed = 7
      const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
      let refused = 0
      for (let step = 0; step < 3000; step++) {
        const limit = [1, 3, 7, 60][Math.floor(random() * 4)]!
        const key = `k${limit}-${Math.floor(random() * 2)}`
        const now = yield* Clock.currentTimeMillis
        const ours = buckets.take(key, limit, 60_000, now)
        const theirs = yield* limiter.consume({ algorithm: "token-bucket", onExceeded: "fail", window: "1 minute", limit, key }).pipe(
          Effect.as(-1),
          Effect.catch((error) => Effect.succeed(error.reason._tag === "RateLimitExceeded" ? Duration.toMillis(error.reason.retryAfter) : Number.NaN))
        )
        expect(ours, `step ${step}, ${key}`).toBeCloseTo(theirs, 6)
        if (ours !== -1) refused++
        yield* TestClock.adjust(Duration.millis(Math.floor(random() * 4000)))
      }
      expect(refused).toBeGreaterThan(100)
    }).pipe(Effect.provide(Layer.merge(RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)), TestClock.layer())))))
})
