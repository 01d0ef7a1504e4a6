/**
 * Fetched pages kept for a while, with single-flight: while a page is being fetched, every
 * caller asking for the same key waits for that one fetch, so 100 agents reading one URL at
 * once make one request to the site. When every waiter has gone away, the fetch is interrupted.
 *
 * Values are plain data (CachedPage, a Schema), so a shared store (Redis) can hold them as
 * JSON: a Layer beside `layer` replaces the in-memory one without touching the callers.
 */
import { Cache, Context, Effect, Equal, Exit, Hash, Layer, Option, Schema } from "effect"
import { Redis } from "effect/persistence"
import { countLookup, countStoreError } from "./CacheMetrics.ts"
import { describeRedisError } from "./SharedStore.ts"

/** A page as webFetch answers it, before `maxChars` is applied. */
export const CachedPage = Schema.Struct({
  url: Schema.String,
  title: Schema.String,
  content: Schema.String,
  /** The plain main text (what the local index stores when the page is added to it). */
  text: Schema.String,
  date: Schema.NullOr(Schema.String),
  contentType: Schema.String
})
export type CachedPage = typeof CachedPage.Type

/** A key that carries its fetch; equal by the string alone. */
class Keyed {
  started = false
  readonly key: string
  readonly fetch: Effect.Effect<CachedPage, unknown>
  constructor(key: string, fetch: Effect.Effect<CachedPage, unknown>) {
    this.key = key
    this.fetch = fetch
  }
  [Equal.symbol](that: unknown): boolean {
    return that instanceof Keyed && that.key === this.key
  }
  [Hash.symbol](): number {
    return Hash.string(this.key)
  }
}

export interface PageCacheOptions {
  /** Pages kept at most; the least recently used go first. */
  readonly capacity: number
  /** How long a fetched page is served from the cache. Failures are never kept. */
  readonly ttlMs: number
  /**
   * Pages whose content and text together are longer are not kept (they are still fetched once
   * for every caller waiting at the time): the entry count alone would not bound the memory.
   */
  readonly maxEntryChars: number
}

export interface PageCacheRedisOptions extends PageCacheOptions {
  /** Prefix of every key (the store's keyPrefix); pages live under `<prefix>page:`. */
  readonly prefix: string
}

const decodeStoredPage = Schema.decodeUnknownOption(Schema.fromJsonString(CachedPage))

/** Characters a page holds in the cache (text is often the same string as content). */
const charsOf = (page: CachedPage) => page.content.length + (page.text === page.content ? 0 : page.text.length)

export class PageCache extends Context.Service<PageCache, {
  /**
   * The page under `key`: from the cache, from a fetch already running for it, or fetched now.
   * `fresh` fetches now whatever the cache holds, and stores the answer for later callers.
   */
  get<E>(
    key: string,
    fetch: Effect.Effect<CachedPage, E>,
    options: { readonly fresh: boolean }
  ): Effect.Effect<{ readonly page: CachedPage; readonly fromCache: boolean }, E>
}>()("periscope/store/PageCache") {
  /** In memory, in this process. */
  static readonly layer = (options: PageCacheOptions): Layer.Layer<PageCache> =>
    Layer.effect(
      PageCache,
      Effect.gen(function*() {
        const cache = yield* Cache.makeWith<Keyed, CachedPage, unknown>(
          (keyed) => Effect.suspend(() => {
            keyed.started = true
            return keyed.fetch
          }),
          {
            capacity: options.capacity,
            timeToLive: (exit) => (exit._tag === "Success" && charsOf(exit.value) <= options.maxEntryChars ? options.ttlMs : 0)
          }
        )
        return PageCache.of({
          get: <E>(key: string, fetch: Effect.Effect<CachedPage, E>, { fresh }: { readonly fresh: boolean }) => {
            const keyed = new Keyed(key, fetch)
            if (fresh) {
              return fetch.pipe(
                Effect.tap((page) => Cache.set(cache, keyed, page)),
                Effect.map((page) => ({ page, fromCache: false }))
              )
            }
            return (Cache.get(cache, keyed) as Effect.Effect<CachedPage, E>).pipe(
              Effect.map((page) => ({ page, fromCache: !keyed.started }))
            )
          }
        })
      })
    )

  /**
   * Shared through Redis: a page one instance fetched is served by every instance. Fetches in
   * flight are still joined per process (single-flight); a Redis failure is a miss, never an error.
   */
  static readonly layerRedis = (options: PageCacheRedisOptions): Layer.Layer<PageCache, never, Redis.Redis> =>
    Layer.effect(
      PageCache,
      Effect.gen(function*() {
        const redis = yield* Redis.Redis
        const prefix = `${options.prefix}page:`
        // Counted every time, logged once per outage (the first failure after a success).
        let failing = false
        const storeFailed = (error: Redis.RedisError) =>
          Effect.andThen(countStoreError("page"), Effect.suspend(() => {
            if (failing) return Effect.void
            failing = true
            return Effect.logWarning(`page cache: Redis failed (${describeRedisError(error)}); fetching as misses until it answers`)
          }))
        const read = (key: string): Effect.Effect<Option.Option<CachedPage>> =>
          redis.send<string | null>("GET", prefix + key).pipe(
            Effect.map((text) => {
              failing = false
              // An entry that is not a page (another version wrote it, or it was damaged) is a miss.
              return typeof text === "string" ? decodeStoredPage(text) : Option.none()
            }),
            Effect.catch((error) => Effect.as(storeFailed(error), Option.none()))
          )
        const write = (key: string, page: CachedPage): Effect.Effect<void> =>
          charsOf(page) > options.maxEntryChars
            ? Effect.void
            : redis.send("SET", prefix + key, JSON.stringify(page), "PX", String(Math.ceil(options.ttlMs))).pipe(
              Effect.asVoid,
              Effect.catch(storeFailed)
            )
        // Only fetches in flight are kept here (TTL 0): stored pages live in Redis alone.
        const inFlight = yield* Cache.makeWith<Keyed, CachedPage, unknown>(
          (keyed) =>
            Effect.flatMap(read(keyed.key), (stored) => {
              if (Option.isSome(stored)) return Effect.succeed(stored.value)
              keyed.started = true
              return keyed.fetch.pipe(Effect.onExit((exit) => Exit.isSuccess(exit) ? write(keyed.key, exit.value) : Effect.void))
            }),
          { capacity: 10_000, timeToLive: () => 0 }
        )
        return PageCache.of({
          get: <E>(key: string, fetch: Effect.Effect<CachedPage, E>, { fresh }: { readonly fresh: boolean }) => {
            if (fresh) {
              return fetch.pipe(
                Effect.tap((page) => write(key, page)),
                Effect.map((page) => ({ page, fromCache: false })),
                Effect.tap(() => countLookup("page", "miss"))
              )
            }
            const keyed = new Keyed(key, fetch)
            return (Cache.get(inFlight, keyed) as Effect.Effect<CachedPage, E>).pipe(
              Effect.map((page) => ({ page, fromCache: !keyed.started })),
              Effect.tap(({ fromCache }) => countLookup("page", fromCache ? "hit" : "miss"))
            )
          }
        })
      })
    )

  /** No caching: every call fetches. */
  static readonly layerNone: Layer.Layer<PageCache> = Layer.succeed(
    PageCache,
    PageCache.of({ get: (_key, fetch) => Effect.map(fetch, (page) => ({ page, fromCache: false })) })
  )
}
