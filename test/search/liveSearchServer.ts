/**
 * A Periscope Node server in this process whose config file has `search.providers`:
 * the application's own composition (appLayer) over the Node platform (Undici), the
 * local index from the given documents or snapshot, so tests and benches hit the real
 * HTTP path of live web search.
 */
import { Layer } from "effect"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer } from "../../core/app/Application.ts"
import type { SearchChoice } from "../../core/app/SearchBackend.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import type { ConfigFile } from "../../core/config/ConfigFile.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { serveInProcess } from "../support/servers.ts"

export const LIVE_KEY = "live-search-test-key-0123"

export interface LiveServer {
  readonly url: string
  close(): Promise<void>
}

/** Starts the server on 127.0.0.1 (ephemeral port) with `search` as the config file's search section. */
export const startLiveServer = async (search: NonNullable<ConfigFile["search"]>, local: SearchChoice): Promise<LiveServer> => {
  const services = appLayer(settingsOf({ search }), recordsFromPlainKeys([LIVE_KEY], 1_000_000), {
    search: local,
    chatModel: ScriptedChat.layer(unconfiguredChat)
  }).pipe(Layer.provide(nodePlatform), Layer.orDie)
  return serveInProcess(services)
}

/** POSTs a search the way the seed's client does (Authorization, Content-Type and Accept JSON). */
export const postSearch = async (url: string, path: "webSearch" | "imageSearch", body: unknown, signal?: AbortSignal) => {
  const response = await fetch(`${url}/api/search/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${LIVE_KEY}`, "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })
  return { status: response.status, body: await response.json() as any }
}
