/**
 * Periscope instances in this process, each built by the application's own
 * composition (appLayer over the Node platform) from a config file's content,
 * so two of them on loopback behave as two servers behind a load balancer.
 */
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { PeriscopeRoutes } from "../../core/api/HttpApp.ts"
import { appLayer, type AppOptions } from "../../core/app/Application.ts"
import type { KeyRecord } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import type { ConfigFile } from "../../core/config/ConfigFile.ts"
import { settingsOf } from "../../core/config/Settings.ts"

export interface Instance {
  readonly url: string
  close(): Promise<void>
}

export const startInstance = async (
  file: ConfigFile,
  keys: ReadonlyArray<KeyRecord>,
  options: Partial<AppOptions> & { readonly env?: Parameters<typeof settingsOf>[1] } = {}
): Promise<Instance> => {
  const scope = Scope.makeUnsafe()
  const services = appLayer(settingsOf(file, options.env ?? {}), keys, {
    search: options.search ?? { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) },
    chatModel: options.chatModel ?? ScriptedChat.layer(unconfiguredChat),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks })
  }).pipe(Layer.provide(nodePlatform), Layer.orDie)
  const app = HttpRouter.serve(PeriscopeRoutes, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provide(services),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  try {
    const context = await Effect.runPromise(Layer.buildWithScope(app, scope))
    const server = await Effect.runPromise(Effect.provideContext(Effect.service(HttpServer.HttpServer), context))
    const address = server.address
    if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
    return { url: `http://127.0.0.1:${address.port}`, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}

/** Polls until `predicate` holds or `ms` pass; returns whether it held. */
export const eventually = async (predicate: () => Promise<boolean>, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await predicate()) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return false
}
