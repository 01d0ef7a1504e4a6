/**
 * A size-bounded, time-limited cache of computed answers with single-flight: while
 * a value is being computed, every fiber asking for the same key waits for that one
 * computation, so 100 identical queries at once make one upstream call. When every
 * waiter has gone away (clients disconnected), the computation is interrupted.
 *
 * Built on effect's Cache, which already counts waiters and interrupts an abandoned
 * lookup. The service hides it behind `get`, so the Redis Layer (several instances
 * share answers) replaces the in-memory one without touching the callers.
 */
import { Cache, Context, Effect, Equal, Exit, Hash, Layer, Option } from "effect"
import { Redis } from "effect/persistence"
import { countLookup, countStoreError } from "./CacheMetrics.ts"
import { describeRedisError } from "./SharedStore.ts"

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

export interface ResultCacheRedisOptions {
  /** Prefix of every key (the store's keyPrefix); entries live under `<prefix>rc:`. */
  readonly prefix: string
}

/** What a Redis-backed lookup produced: a stored answer, or one computed here. */
interface Looked {
  readonly value: unknown
  readonly stored: boolean
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
              Effect.map((value) => ({ value, outcome: keyed.started ? "miss" as const : "hit" as const })),
              Effect.tap(({ outcome }) => countLookup("result", outcome))
            )
          },
          clear: Cache.invalidateAll(cache)
        })
      })
    )

  /**
   * In Redis, shared by every instance with the same prefix: an answer computed by one is
   * served by the others until its TTL. Values are stored as JSON with the TTL as PX. A
   * Redis failure (down, slow, a value that does not parse) is a miss, never an error: the
   * answer is computed here. Identical lookups in this process still share one computation.
   */
  static readonly layerRedis = (options: ResultCacheRedisOptions): Layer.Layer<ResultCache, never, Redis.Redis> =>
    Layer.effect(
      ResultCache,
      Effect.gen(function*() {
        const redis = yield* Redis.Redis
        const prefix = `${options.prefix}rc:`
        // Counted every time, logged once per outage (the first failure after a success).
        let failing = false
        const storeFailed = (error: Redis.RedisError) =>
          Effect.andThen(
            countStoreError("result"),
            Effect.suspend(() => {
              if (failing) return Effect.void
              failing = true
              return Effect.logWarning(`result cache: Redis failed (${describeRedisError(error)}); answering as misses until it answers`)
            })
          )
        const succeeded = <A>(value: A) => {
          failing = false
          return value
        }
        const read = (key: string): Effect.Effect<Option.Option<unknown>> =>
          redis.send<string | null>("GET", prefix + key).pipe(
            Effect.map(succeeded),
            Effect.map((text) => {
              if (text === null || text === undefined) return Option.none()
              try {
                return Option.some(JSON.parse(text) as unknown)
              } catch {
                return Option.none()
              }
            }),
            Effect.catch((error) => Effect.as(storeFailed(error), Option.none()))
          )
        const write = (key: string, value: unknown, ttlMs: number): Effect.Effect<void> =>
          ttlMs <= 0 ? Effect.void : Effect.suspend(() => {
            const text = JSON.stringify(value)
            return text === undefined ? Effect.void : redis.send("SET", prefix + key, text, "PX", String(Math.ceil(ttlMs))).pipe(
              Effect.asVoid,
              Effect.catch(storeFailed)
            )
          })
        // Only computations in flight are kept here (TTL 0): stored answers live in Redis alone,
        // so a clear by any instance is seen by all.
        const inFlight = yield* Cache.makeWith<Keyed, Looked, unknown>(
          (keyed) =>
            Effect.flatMap(read(keyed.key), (stored) => {
              if (Option.isSome(stored)) return Effect.succeed<Looked>({ value: stored.value, stored: true })
              keyed.started = true
              return keyed.compute.pipe(
                Effect.onExit((exit) => Exit.isSuccess(exit) ? write(keyed.key, exit.value, keyed.ttlMs(exit)) : Effect.void),
                Effect.map((value): Looked => ({ value, stored: false }))
              )
            }),
          { capacity: 10_000, timeToLive: () => 0 }
        )
        const clear = Effect.gen(function*() {
          let cursor = "0"
          do {
            const [next, keys] = yield* redis.send<[string, Array<string>]>("SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", "1000")
            if (keys.length > 0) yield* redis.send("UNLINK", ...keys)
            cursor = next
          } while (cursor !== "0")
        }).pipe(Effect.catch(storeFailed))
        return ResultCache.of({
          get: <A, E>(key: string, compute: Effect.Effect<A, E>, ttlMs: (exit: Exit.Exit<A, E>) => number) => {
            const keyed = new Keyed(key, compute, ttlMs as (exit: Exit.Exit<unknown, unknown>) => number)
            return (Cache.get(inFlight, keyed) as Effect.Effect<Looked, E>).pipe(
              Effect.map((looked) => ({ value: looked.value as A, outcome: looked.stored || !keyed.started ? "hit" as const : "miss" as const })),
              Effect.tap(({ outcome }) => countLookup("result", outcome))
            )
          },
          clear
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
