/**
 * A size-bounded, time-limited cache of computed answers with single-flight: while
 * a value is being computed, every fiber asking for the same key waits for that one
 * computation, so 100 identical queries at once make one upstream call. When every
 * waiter has gone away (clients disconnected), the computation is interrupted.
 *
 * Built on effect's Cache, which already counts waiters and interrupts an abandoned
 * lookup. The service hides it behind `get`, so a shared store (effect/persistence,
 * Redis) can replace the in-memory Layer without touching the callers.
 */
import { Cache, Context, Effect, Equal, type Exit, Hash, Layer } from "effect"

/** Whether the answer came from the cache (stored or in flight) or was computed for this call. */
export type CacheOutcome = "hit" | "miss"

/** A key that carries its computation and time-to-live; equal by the string alone. */
class Keyed {
  started = false
  readonly key: string
  readonly compute: Effect.Effect<unknown, unknown>
  readonly ttlMs: (exit: Exit.Exit<unknown, unknown>) => number
  constructor(key: string, compute: Effect.Effect<unknown, unknown>, ttlMs: (exit: Exit.Exit<unknown, unknown>) => number) {
    this.key = key
    this.compute = compute
    this.ttlMs = ttlMs
  }
  [Equal.symbol](that: unknown): boolean {
    return that instanceof Keyed && that.key === this.key
  }
  [Hash.symbol](): number {
    return Hash.string(this.key)
  }
}

export interface ResultCacheOptions {
  /** Entries kept at most; the least recently used go first. */
  readonly capacity: number
}

export class ResultCache extends Context.Service<ResultCache, {
  /**
   * The value under `key`: from the cache, from a computation already running, or computed
   * now. `ttlMs` decides from the outcome how long it is kept (0: not kept, e.g. failures).
   */
  get<A, E>(
    key: string,
    compute: Effect.Effect<A, E>,
    ttlMs: (exit: Exit.Exit<A, E>) => number
  ): Effect.Effect<{ readonly value: A; readonly outcome: CacheOutcome }, E>
  /** Drops every entry (a reload of the local index makes cached answers stale). */
  readonly clear: Effect.Effect<void>
}>()("periscope/store/ResultCache") {
  /** In memory, in this process. */
  static readonly layer = (options: ResultCacheOptions): Layer.Layer<ResultCache> =>
    Layer.effect(
      ResultCache,
      Effect.gen(function*() {
        const cache = yield* Cache.makeWith<Keyed, unknown, unknown>(
          (keyed) => Effect.suspend(() => {
            keyed.started = true
            return keyed.compute
          }),
          { capacity: options.capacity, timeToLive: (exit, keyed) => Math.max(0, keyed.ttlMs(exit)) }
        )
        return ResultCache.of({
          get: <A, E>(key: string, compute: Effect.Effect<A, E>, ttlMs: (exit: Exit.Exit<A, E>) => number) => {
            const keyed = new Keyed(key, compute, ttlMs as (exit: Exit.Exit<unknown, unknown>) => number)
            return (Cache.get(cache, keyed) as Effect.Effect<A, E>).pipe(
              Effect.map((value) => ({ value, outcome: keyed.started ? "miss" as const : "hit" as const }))
            )
          },
          clear: Cache.invalidateAll(cache)
        })
      })
    )

  /** No caching: every call computes (for tests and for a deployment that wants none). */
  static readonly layerNone: Layer.Layer<ResultCache> = Layer.succeed(
    ResultCache,
    ResultCache.of({
      get: (_key, compute) => Effect.map(compute, (value) => ({ value, outcome: "miss" as const })),
      clear: Effect.void
    })
  )
}
