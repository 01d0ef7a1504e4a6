/**
 * Fetched pages kept for a while, with single-flight: while a page is being fetched, every
 * caller asking for the same key waits for that one fetch, so 100 agents reading one URL at
 * once make one request to the site. When every waiter has gone away, the fetch is interrupted.
 *
 * Values are plain data (CachedPage, a Schema), so a shared store (Redis) can hold them as
 * JSON: a Layer beside `layer` replaces the in-memory one without touching the callers.
 */
import { Cache, Context, Effect, Equal, Hash, Layer, Schema } from "effect"

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

  /** No caching: every call fetches. */
  static readonly layerNone: Layer.Layer<PageCache> = Layer.succeed(
    PageCache,
    PageCache.of({ get: (_key, fetch) => Effect.map(fetch, (page) => ({ page, fromCache: false })) })
  )
}
