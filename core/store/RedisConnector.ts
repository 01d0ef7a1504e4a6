/**
 * How this runtime connects to Redis. The connection is platform code (Node's
 * `redis` client lives in adapters/node/redis.ts); core only asks for a
 * `Redis` service (effect/persistence) for a URL. A runtime without a connector
 * refuses a configured Redis URL at start instead of silently keeping state per
 * instance.
 */
import { Context, type Layer, type Redacted } from "effect"
import type { Redis } from "effect/persistence"

export interface RedisConnection {
  readonly url: Redacted.Redacted<string>
  /** How long one command may take before it fails (so a hung Redis degrades, never stalls a request). */
  readonly commandTimeoutMs: number
}

export interface RedisConnectorShape {
  /** Undefined: this runtime cannot connect to Redis. */
  readonly connect: ((connection: RedisConnection) => Layer.Layer<Redis.Redis>) | undefined
}

export const RedisConnector = Context.Reference<RedisConnectorShape>("periscope/store/RedisConnector", {
  defaultValue: () => ({ connect: undefined })
})
