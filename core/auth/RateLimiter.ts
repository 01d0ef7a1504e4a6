/**
 * Per-key token buckets: each key holds up to a minute's worth of requests
 * and refills continuously at its requests-per-minute rate.
 */
import { Context, Effect, Layer } from "effect"
import { ApiError } from "../api/ApiError.ts"
import type { Principal } from "../api/Authorization.ts"

interface Bucket {
  tokens: number
  updatedMs: number
}

/** Plain token-bucket arithmetic, no Effect: one call per request on the hot path. */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>()

  /** Takes one token; returns 0 when allowed, else the seconds until one is available. */
  take(key: string, perMinute: number, nowMs: number): number {
    const ratePerMs = perMinute / 60_000
    let bucket = this.buckets.get(key)
    if (bucket === undefined) {
      bucket = { tokens: perMinute, updatedMs: nowMs }
      this.buckets.set(key, bucket)
    } else {
      const elapsed = Math.max(0, nowMs - bucket.updatedMs)
      bucket.tokens = Math.min(perMinute, bucket.tokens + elapsed * ratePerMs)
      bucket.updatedMs = nowMs
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return (1 - bucket.tokens) / ratePerMs / 1000
  }
}

export class RateLimiter extends Context.Service<RateLimiter, {
  check(principal: Principal): Effect.Effect<void, ApiError>
}>()("periscope/auth/RateLimiter") {
  static readonly layer = Layer.sync(RateLimiter, () => {
    const buckets = new TokenBuckets()
    return RateLimiter.of({
      // Wall-clock time read directly: this runs on every request, and TokenBuckets is what the tests drive.
      check: (principal) =>
        Effect.suspend(() => {
          const wait = buckets.take(principal.keyName, principal.requestsPerMinute, Date.now())
          return wait === 0
            ? Effect.void
            : Effect.fail(new ApiError({
              kind: "rate_limited",
              message: `rate limit of ${principal.requestsPerMinute} requests per minute exceeded for key ${JSON.stringify(principal.keyName)}; retry after ${Math.ceil(wait)} s`,
              param: null,
              retryAfterSeconds: wait
            }))
        })
    })
  })
}
