/**
 * What the Node adapter gives the application: the Node file system, an HTTP
 * client for upstreams over Undici's dispatch (undiciHttpClient.ts: cheaper
 * than @effect/platform-node's, test/bench/gateway.ts), and the engine hooks:
 * the starter index built on the first start, and a reload on every SIGHUP.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Queue, Stream } from "effect"
import type { EngineHooks } from "../../core/app/SearchBackend.ts"
import { SettingsError } from "../../core/config/Settings.ts"
import type { Settings } from "./settings.ts"
import { NodePageFetcher } from "./sources/crawl/NodePageFetcher.ts"
import { nodeJobWorkersLayer } from "./jobThreads.ts"
import { npmParentExits } from "./npmParent.ts"
import { openInPlace } from "./snapshotFile.ts"
import { ensureStarterIndex, ownNodeModules } from "./starterIndex.ts"
import * as UndiciHttpClient from "./undiciHttpClient.ts"
import { BuildInfo } from "../../core/api/Readiness.ts"
import { RedisConnector } from "../../core/store/RedisConnector.ts"
import { nodeRedisConnector } from "./redis.ts"

/** The PageFetcher (webFetch) checks the resolved address and connects to that one; what it may reach comes from the fetch config per request. */
export const nodePlatform = Layer.mergeAll(NodeFileSystem.layer, UndiciHttpClient.layer, NodePageFetcher.layer())
  // Redis through node-redis (store.redisUrl), and the commit /version shows (PERISCOPE_COMMIT).
  .pipe(Layer.merge(Layer.succeed(RedisConnector, nodeRedisConnector)), Layer.merge(Layer.succeed(BuildInfo, { commit: process.env.PERISCOPE_COMMIT?.trim() || undefined })))
  // CPU-heavy jobs (reading pages, large validations) on worker threads under the config file's `jobs` limits.
  .pipe(Layer.merge(nodeJobWorkersLayer))

/** One element per SIGHUP while the stream is consumed. */
export const sighups: Stream.Stream<void> = Stream.callback<void>((queue) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const onHup = () => void Queue.offerUnsafe(queue, undefined)
      process.on("SIGHUP", onHup)
      return onHup
    }),
    (onHup) => Effect.sync(() => process.off("SIGHUP", onHup))
  ))

export const nodeEngineHooks = (settings: Settings): EngineHooks => ({
  prepare: (snapshot) =>
    ensureStarterIndex({ dataDir: settings.dataDir, out: snapshot, nodeModules: ownNodeModules() }).pipe(
      Effect.flatMap((built) => (built === undefined ? Effect.void : Effect.logInfo(built.message))),
      Effect.mapError((error) =>
        new SettingsError({ setting: `search.snapshot (${snapshot})`, message: `no snapshot, and the starter index could not be built: ${error.message}` }))
    ),
  // Under `npm start` a SIGHUP sent to npm ends npm instead (see npmParent.ts): read as a reload too.
  reloads: { name: "SIGHUP", requests: Stream.merge(sighups, npmParentExits) },
  openFile: (path) =>
    Effect.map(
      openInPlace(path),
      ({ index, settled }) => ({ index, textInMemory: Effect.promise(() => settled) })
    )
})
