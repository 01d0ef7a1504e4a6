/**
 * Redis for the Node runtime: node-redis behind effect/persistence's `Redis`
 * service, which the store Layers (RateLimits.layerRedis, ResultCache.layerRedis)
 * use. Unlike @effect/platform-node's NodeRedis, the server starts while Redis is
 * down and keeps reconnecting: commands fail at once while it is unreachable
 * (no offline queue) and every command is bounded by the store's command
 * timeout, so an outage degrades as configured instead of stalling requests.
 * Errors are logged once per outage, never with the URL (it may hold a password).
 */
import { Effect, Layer, Redacted } from "effect"
import { Redis } from "effect/persistence"
import { createClient } from "redis"
import type { RedisConnection, RedisConnectorShape } from "../../core/store/RedisConnector.ts"

// Only sendCommand is used: the plainest type every client variant (main, duplicate) satisfies.
interface Client {
  sendCommand(args: Array<string>): Promise<unknown>
}

const sendWith = (client: Client, timeoutMs: number) => <A = unknown>(command: string, ...args: ReadonlyArray<string>) =>
  Effect.tryPromise({
    try: () => client.sendCommand([command, ...args]) as Promise<A>,
    catch: (cause) => new Redis.RedisError({ cause })
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () => Effect.fail(new Redis.RedisError({ cause: new Error(`Redis did not answer ${command} within ${timeoutMs} ms`) }))
    })
  )

const backoff = (retries: number) => Math.min(50 * 2 ** retries, 2_000) + Math.floor(Math.random() * 100)

const messageOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause)).replace(/rediss?:\/\/\S+/gi, "redis://***")

/** A `Redis` service for the URL, open for the Layer's lifetime. */
export const connectRedis = (connection: RedisConnection): Layer.Layer<Redis.Redis> =>
  Layer.effect(
    Redis.Redis,
    Effect.gen(function*() {
      const timeoutMs = connection.commandTimeoutMs
      const options = {
        url: Redacted.value(connection.url),
        disableOfflineQueue: true,
        socket: { connectTimeout: Math.max(1_000, timeoutMs * 4), reconnectStrategy: backoff }
      }
      const runSync = Effect.runSyncWith(yield* Effect.context<never>())
      let outage = false
      const client = yield* Effect.acquireRelease(
        Effect.sync(() => createClient(options)),
        (client) => Effect.sync(() => {
          try {
            client.destroy()
          } catch {
            // already closed
          }
        })
      )
      // node-redis rethrows unhandled `error` events, which would end the process.
      client.on("error", (cause: unknown) => {
        if (outage) return
        outage = true
        runSync(Effect.logWarning(`Redis: ${messageOf(cause)}; reconnecting`))
      })
      client.on("ready", () => {
        if (!outage) return
        outage = false
        runSync(Effect.logInfo("Redis: connected again"))
      })
      // Not awaited: the server starts while Redis is down and connects when it comes up.
      client.connect().catch(() => undefined)
      const send = sendWith(client, timeoutMs)
      return yield* Redis.make({
        send,
        connect: Effect.tryPromise({
          try: async () => {
            const dedicated = client.duplicate({ ...options, socket: { ...options.socket, reconnectStrategy: false } })
            dedicated.on("error", () => undefined)
            await dedicated.connect()
            return dedicated
          },
          catch: (cause) => new Redis.RedisError({ cause })
        }).pipe(Effect.map((dedicated) => ({
          send: sendWith(dedicated, timeoutMs),
          close: Effect.sync(() => {
            if (dedicated.isOpen) dedicated.destroy()
          })
        }))),
        subscribe: (channel, onMessage) =>
          Effect.acquireRelease(
            Effect.tryPromise({
              try: async () => {
                const subscriber = client.duplicate(options)
                subscriber.on("error", () => undefined)
                await subscriber.connect()
                await subscriber.subscribe(channel, (message, from) => onMessage({ channel: from, message }))
                return subscriber
              },
              catch: (cause) => new Redis.RedisError({ cause })
            }),
            (subscriber) => Effect.sync(() => {
              if (subscriber.isOpen) subscriber.destroy()
            })
          ).pipe(Effect.as(Effect.never))
      })
    })
  )

/** What adapters/node/platform.ts gives core/app. */
export const nodeRedisConnector: RedisConnectorShape = { connect: connectRedis }
