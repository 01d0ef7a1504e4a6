/**
 * Where shared state lives: in this process (memory, the default) or in Redis,
 * shared by every instance configured with the same URL and key prefix. The
 * limits and caches each have their own memory and Redis Layers; this service
 * answers what they have in common: which kind it is and whether it is reachable
 * now (for /readyz).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { Redis } from "effect/persistence"

/** The shared store cannot be reached (Redis down, refused, or too slow). Never carries the URL. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}

/** A Redis failure as an operator reads it: the error's message, never the connection URL. */
export const describeRedisError = (error: Redis.RedisError): string => {
  const cause = error.cause
  const text = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : "Redis command failed"
  // node-redis messages name host:port at most; a URL with credentials is never part of them, but be sure.
  return text.replace(/rediss?:\/\/\S+/gi, "redis://***")
}

export class SharedStore extends Context.Service<SharedStore, {
  readonly kind: "memory" | "redis"
  /** Succeeds when the store answers now (Redis: a PING within the command timeout). */
  readonly check: Effect.Effect<void, StoreUnavailable>
}>()("periscope/store/SharedStore") {
  /** In this process: always reachable. */
  static readonly layerMemory: Layer.Layer<SharedStore> = Layer.succeed(SharedStore, SharedStore.of({ kind: "memory", check: Effect.void }))

  /** Over the Redis connection in context. */
  static readonly layerRedis: Layer.Layer<SharedStore, never, Redis.Redis> = Layer.effect(
    SharedStore,
    Effect.map(Effect.service(Redis.Redis), (redis) =>
      SharedStore.of({
        kind: "redis",
        check: redis.send<string>("PING").pipe(
          Effect.mapError((error) => new StoreUnavailable({ message: `Redis is unreachable: ${describeRedisError(error)}` })),
          Effect.asVoid
        )
      }))
  )
}
