/**
 * Per-key request limits: each key holds up to a minute's worth of requests
 * and refills at its requests-per-minute rate. The buckets live in Effect's
 * persistence RateLimiter store: in memory for one instance (`layerMemory`),
 * or in Redis (`layerRedis`) so that several instances share one budget per
 * key (LiteLLM's lesson: "100 rpm across 4 workers lets 400 through").
 *
 * Redis down: "open" (the default, as LiteLLM does) counts in this instance's
 * memory until Redis answers again, so a key gets at most its limit per
 * instance meanwhile; "closed" refuses with 503 limiter_unavailable. Both log
 * the outage once and the recovery once, and every request tries Redis first,
 * so recovery needs nothing but Redis coming back.
 */
import { Clock, Context, Duration, Effect, type Fiber, Layer, Metric } from "effect"
import { type Redis, RateLimiter } from "effect/persistence"
import { spanned, spannedIn } from "../store/Spans.ts"
import { AuthError, type Principal } from "./AuthError.ts"
import { MemoryBuckets } from "./MemoryBuckets.ts"
import { RequestPrincipal } from "./RequestPrincipal.ts"

const window = Duration.minutes(1)
const windowMs = Duration.toMillis(window)

/** The span of every check (when tracing is on; no captured stack trace, which would be an Error per request). */
const CHECK_SPAN = "RateLimits.check"
const inCheckSpan = <A, E, R>(effect: Effect.Effect<A, E, R>) => spanned(effect, CHECK_SPAN)

// Labels baked in (not Metric.withAttributes, which rebuilds the series key on every update: core/store/MetricSeries.ts).
const rejections = (reason: string) =>
  Metric.counter("periscope_rate_limit_rejections_total", {
    description: "Requests refused by a rate limit (reason: rate_limited, or limiter_unavailable when Redis is down and limits fail closed)",
    incremental: true,
    attributes: { reason }
  })
const rejected = { rate_limited: rejections("rate_limited"), limiter_unavailable: rejections("limiter_unavailable") }
const fallbacks = Metric.counter("periscope_rate_limit_fallbacks_total", {
  description: "Requests counted in this instance's memory because the shared store (Redis) was unreachable",
  incremental: true
})

export interface RateLimitsRedisOptions {
  /** Prefix of every key (the store's keyPrefix); buckets live under `<prefix>rl:`. */
  readonly prefix: string
  readonly onRedisDown: "open" | "closed"
}

const exceeded = (principal: Principal, retryAfter: Duration.Duration) =>
  new AuthError({
    reason: "rate_limited",
    message: `rate limit of ${principal.requestsPerMinute} requests per minute exceeded for key ${
      JSON.stringify(principal.keyName)
    }; retry after ${Math.max(1, Math.ceil(Duration.toSeconds(retryAfter)))} s`,
    retryAfterSeconds: Duration.toSeconds(retryAfter)
  })

const unavailable = new AuthError({ reason: "limiter_unavailable", message: "rate limits cannot be checked right now; retry shortly" })

const consume = (limiter: RateLimiter.RateLimiter, principal: Principal) =>
  limiter.consume({
    algorithm: "token-bucket",
    onExceeded: "fail",
    window,
    limit: principal.requestsPerMinute,
    key: principal.keyName
  })

/** Names the principal for the access log (every authenticated request passes here). */
const notePrincipal = (fiber: Fiber.Fiber<unknown, unknown>, principal: Principal) => {
  fiber.getRef(RequestPrincipal).keyName = principal.keyName
}

/** Counts a refusal by its reason. */
const countRefusal = (error: AuthError): Effect.Effect<void> =>
  error.reason === "rate_limited" || error.reason === "limiter_unavailable" ? Metric.update(rejected[error.reason], 1) : Effect.void

/** Counts refusals and names the principal. */
const counted = (principal: Principal, effect: Effect.Effect<void, AuthError>): Effect.Effect<void, AuthError> =>
  Effect.withFiber((fiber) => {
    notePrincipal(fiber, principal)
    return Effect.tapError(effect, countRefusal)
  })

export class RateLimits extends Context.Service<RateLimits, {
  check(principal: Principal): Effect.Effect<void, AuthError>
}>()("periscope/auth/RateLimits") {
  /** Limits over whichever RateLimiter store is provided; a store failure refuses (503). */
  static readonly layer = Layer.effect(
    RateLimits,
    Effect.map(Effect.service(RateLimiter.RateLimiter), (limiter) =>
      RateLimits.of({
        check: (principal) =>
          consume(limiter, principal).pipe(
            Effect.asVoid,
            Effect.mapError(({ reason }) => reason._tag === "RateLimitExceeded" ? exceeded(principal, reason.retryAfter) : unavailable),
            (effect) => counted(principal, effect),
            inCheckSpan
          )
      }))
  ).pipe(Layer.provide(RateLimiter.layer))

  /** One instance's limits, kept in this process (plain buckets: the same arithmetic as `layer` over the memory store). */
  static readonly layerMemory = Layer.sync(RateLimits, () => {
    const buckets = new MemoryBuckets()
    // One step for an allowed request: the clock, the principal cell and the span read from its fiber.
    return RateLimits.of({
      check: (principal) =>
        Effect.withFiber((fiber) => {
          notePrincipal(fiber, principal)
          const waitMs = buckets.take(principal.keyName, principal.requestsPerMinute, windowMs, fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
          if (waitMs === -1) return spannedIn(fiber, Effect.void, CHECK_SPAN)
          const error = exceeded(principal, Duration.millis(waitMs))
          return spannedIn(fiber, Effect.andThen(countRefusal(error), Effect.fail(error)), CHECK_SPAN)
        })
    })
  })

  /** Limits shared through Redis by every instance with the same prefix; `onRedisDown` decides what an outage does. */
  static readonly layerRedis = (options: RateLimitsRedisOptions): Layer.Layer<RateLimits, never, Redis.Redis> =>
    Layer.effect(
      RateLimits,
      Effect.gen(function*() {
        const shared = yield* RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreRedis({ prefix: `${options.prefix}rl:` })))
        const local = yield* RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreMemory))
        // One line when the outage starts and one when it ends, not one per request.
        let down = false
        const outage = (message: string) =>
          Effect.suspend(() => {
            if (down) return Effect.void
            down = true
            return Effect.logWarning(
              options.onRedisDown === "open"
                ? `rate limits: Redis unreachable (${message}); counting per instance in memory until it answers`
                : `rate limits: Redis unreachable (${message}); refusing requests with 503 until it answers`
            )
          })
        const recovered = Effect.suspend(() => {
          if (!down) return Effect.void
          down = false
          return Effect.logInfo("rate limits: Redis answers again; limits are shared again")
        })
        const fromLocal = (principal: Principal) =>
          Effect.andThen(
            Metric.update(fallbacks, 1),
            consume(local, principal).pipe(
              Effect.asVoid,
              Effect.mapError(({ reason }) => reason._tag === "RateLimitExceeded" ? exceeded(principal, reason.retryAfter) : unavailable)
            )
          )
        return RateLimits.of({
          check: (principal) =>
            consume(shared, principal).pipe(
              Effect.matchEffect({
                onSuccess: () => recovered,
                onFailure: ({ reason }) => {
                  if (reason._tag === "RateLimitExceeded") return Effect.andThen(recovered, Effect.fail(exceeded(principal, reason.retryAfter)))
                  return Effect.andThen(
                    outage(reason.message),
                    options.onRedisDown === "open" ? fromLocal(principal) : Effect.fail(unavailable)
                  )
                }
              }),
              (effect) => counted(principal, effect),
              inCheckSpan
            )
        })
      })
    )
}
