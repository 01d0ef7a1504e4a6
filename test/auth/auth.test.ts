import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makeAuthenticator } from "../../core/auth/ApiKeys.ts"
import { generateKey, hashKey, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { TokenBuckets } from "../../core/auth/RateLimiter.ts"

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
      if (result._tag === "Failure") expect(result.failure.kind).toBe("unauthorized")
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

describe("token buckets", () => {
  it("allows a minute's worth at once, then one per refill interval", () => {
    const buckets = new TokenBuckets()
    const t0 = 1_000_000
    for (let i = 0; i < 60; i++) expect(buckets.take("k", 60, t0)).toBe(0)
    const wait = buckets.take("k", 60, t0)
    expect(wait).toBeCloseTo(1, 5)
    expect(buckets.take("k", 60, t0 + 500)).toBeCloseTo(0.5, 5)
    expect(buckets.take("k", 60, t0 + 1000)).toBe(0)
    expect(buckets.take("k", 60, t0 + 1000)).toBeGreaterThan(0)
  })
  it("keeps keys apart and never refills past capacity", () => {
    const buckets = new TokenBuckets()
    expect(buckets.take("a", 2, 0)).toBe(0)
    expect(buckets.take("a", 2, 0)).toBe(0)
    expect(buckets.take("a", 2, 0)).toBeGreaterThan(0)
    expect(buckets.take("b", 2, 0)).toBe(0)
    // An hour idle refills to 2, not 120.
    expect(buckets.take("a", 2, 3_600_000)).toBe(0)
    expect(buckets.take("a", 2, 3_600_000)).toBe(0)
    expect(buckets.take("a", 2, 3_600_000)).toBeGreaterThan(0)
  })
})
