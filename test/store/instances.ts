/**
 * Periscope instances in this process, each built by the application's own
 * composition (appLayer over the Node platform) from a config file's content,
 * so two of them on loopback behave as two servers behind a load balancer.
 */
import { Layer } from "effect"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer, type AppOptions } from "../../core/app/Application.ts"
import type { KeyRecord } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import type { ConfigFile } from "../../core/config/ConfigFile.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { serveInProcess } from "../support/servers.ts"

export interface Instance {
  readonly url: string
  close(): Promise<void>
}

export const startInstance = async (
  file: ConfigFile,
  keys: ReadonlyArray<KeyRecord>,
  options: Partial<AppOptions> & { readonly env?: Parameters<typeof settingsOf>[1] } = {}
): Promise<Instance> => {
  const services = appLayer(settingsOf(file, options.env ?? {}), keys, {
    search: options.search ?? { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) },
    chatModel: options.chatModel ?? ScriptedChat.layer(unconfiguredChat),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks })
  }).pipe(Layer.provide(nodePlatform), Layer.orDie)
  return serveInProcess(services)
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
