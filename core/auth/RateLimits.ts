/**
 * Per-key request limits: each key holds up to a minute's worth of requests
 * and refills at its requests-per-minute rate. The buckets live in Effect's
 * persistence RateLimiter store: in memory for one instance (`layerMemory`),
 * or a shared store so that several instances share one budget per key.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"
import { AuthError, type Principal } from "./AuthError.ts"

const window = Duration.minutes(1)

export class RateLimits extends Context.Service<RateLimits, {
  check(principal: Principal): Effect.Effect<void, AuthError>
}>()("periscope/auth/RateLimits") {
  /** Limits over whichever RateLimiter store is provided. */
  static readonly layer = Layer.effect(
    RateLimits,
    Effect.map(Effect.service(RateLimiter.RateLimiter), (limiter) =>
      RateLimits.of({
        check: (principal) =>
          limiter.consume({
            algorithm: "token-bucket",
            onExceeded: "fail",
            window,
            limit: principal.requestsPerMinute,
            key: principal.keyName
          }).pipe(
            Effect.asVoid,
            Effect.mapError(({ reason }) =>
              reason._tag === "RateLimitExceeded"
                ? new AuthError({
                  reason: "rate_limited",
                  message: `rate limit of ${principal.requestsPerMinute} requests per minute exceeded for key ${
                    JSON.stringify(principal.keyName)
                  }; retry after ${Math.max(1, Math.ceil(Duration.toSeconds(reason.retryAfter)))} s`,
                  retryAfterSeconds: Duration.toSeconds(reason.retryAfter)
                })
                : new AuthError({ reason: "limiter_unavailable", message: "rate limits cannot be checked right now; retry shortly" }))
          )
      }))
  ).pipe(Layer.provide(RateLimiter.layer))

  /** One instance's limits, kept in this process. */
  static readonly layerMemory = RateLimits.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory))
}
