/**
 * The store settings turned into Layers: rate limits, the result and page caches and the
 * store's health, in memory (default) or shared through one Redis connection
 * that the runtime's RedisConnector opens (Node: adapters/node/redis.ts).
 */
import { Effect, Layer, Result } from "effect"
import type { Redis } from "effect/persistence"
import { RateLimits } from "../auth/RateLimits.ts"
import type { SearchConfig } from "../config/ConfigFile.ts"
import { SettingsError } from "../config/Settings.ts"
import { checkRedisUrl, describeRedisUrl, type StoreSettings } from "../config/StoreConfig.ts"
import { type FetchSettings, GuardedWebFetch, MAX_CACHED_CHARS } from "../backends/GuardedWebFetch.ts"
import { PageCache } from "../store/PageCache.ts"
import { RedisConnector } from "../store/RedisConnector.ts"
import { ResultCache } from "../store/ResultCache.ts"
import { SharedStore } from "../store/SharedStore.ts"
import { resultCacheLayer } from "./SearchBackend.ts"

export interface SharedState {
  readonly rateLimits: Layer.Layer<RateLimits, SettingsError>
  readonly sharedStore: Layer.Layer<SharedStore, SettingsError>
  readonly resultCache: Layer.Layer<ResultCache, SettingsError>
  /** webFetch's page cache for these fetch settings (none when they turn it off). */
  readonly pageCache: (settings: FetchSettings) => Layer.Layer<PageCache, SettingsError>
  /** The one Redis connection, for other store Layers (e.g. a page cache); undefined in memory. */
  readonly redis: Layer.Layer<Redis.Redis, SettingsError> | undefined
}

/** One Redis connection for the whole application (the same Layer value is built once per build). */
const redisLayer = (store: StoreSettings): Layer.Layer<Redis.Redis, SettingsError> =>
  Layer.unwrap(Effect.gen(function*() {
    const url = store.redisUrl!
    const checked = checkRedisUrl(url)
    if (Result.isFailure(checked)) return yield* new SettingsError({ setting: store.redisUrlSetting, message: checked.failure })
    const connector = yield* RedisConnector
    if (connector.connect === undefined) {
      return yield* new SettingsError({ setting: store.redisUrlSetting, message: "is set, but this runtime cannot connect to Redis; unset it to keep state per instance" })
    }
    yield* Effect.logInfo(`store: limits and caches shared through Redis at ${describeRedisUrl(url)} (prefix ${store.keyPrefix}, onRedisDown ${store.onRedisDown})`)
    return connector.connect({ url, commandTimeoutMs: store.commandTimeoutMs })
  }))

export const sharedStateOf = (store: StoreSettings, search: typeof SearchConfig.Type | undefined): SharedState => {
  const memoryCache = resultCacheLayer(search)
  if (store.redisUrl === undefined) {
    return {
      rateLimits: RateLimits.layerMemory,
      sharedStore: SharedStore.layerMemory,
      resultCache: memoryCache,
      pageCache: GuardedWebFetch.cacheLayer,
      redis: undefined
    }
  }
  const redis = redisLayer(store)
  const cacheOff = search?.cache?.maxEntries === 0
  return {
    rateLimits: RateLimits.layerRedis({ prefix: store.keyPrefix, onRedisDown: store.onRedisDown }).pipe(Layer.provide(redis)),
    sharedStore: SharedStore.layerRedis.pipe(Layer.provide(redis)),
    resultCache: cacheOff ? memoryCache : ResultCache.layerRedis({ prefix: store.keyPrefix }).pipe(Layer.provide(redis)),
    pageCache: (settings) =>
      settings.cacheMaxEntries === 0 || settings.cacheTtlMs === 0
        ? PageCache.layerNone
        : PageCache.layerRedis({ prefix: store.keyPrefix, capacity: settings.cacheMaxEntries, ttlMs: settings.cacheTtlMs, maxEntryChars: MAX_CACHED_CHARS })
          .pipe(Layer.provide(redis)),
    redis
  }
}
