/** Builds the services Layer of the Node server from its settings. */
import { Duration, Effect, Layer } from "effect"
import type { AppServices } from "../../core/api/HttpApp.ts"
import { ServerOptions } from "../../core/api/ServerOptions.ts"
import { ApiKeys } from "../../core/auth/ApiKeys.ts"
import type { KeyRecord } from "../../core/auth/KeyRecord.ts"
import { RateLimiter } from "../../core/auth/RateLimiter.ts"
import { chatGatewayLayer } from "../../core/chat/ChatSetup.ts"
import { searchLayer } from "./searchBackend.ts"
import { NodeUpstreamClient } from "./upstreamClient.ts"
import type { Settings, SettingsError } from "./settings.ts"

/**
 * The services of the server. Chat: the gateway over the configured upstreams
 * and the built-in periscope-grounded model, which answers from the search
 * backend (the default model when no upstream is configured).
 */
export const makeServices = (settings: Settings, keys: ReadonlyArray<KeyRecord>): Layer.Layer<AppServices, SettingsError> => {
  const search = searchLayer(settings)
  return Layer.mergeAll(
    search,
    chatGatewayLayer(settings.file.chat).pipe(Layer.provide([search, NodeUpstreamClient])),
    ApiKeys.layer(keys),
    RateLimiter.layer
  )
}

/** The HTTP tunables from settings, as a Layer over the ServerOptions reference. */
export const serverOptionsLayer = (settings: Settings) =>
  Layer.succeed(ServerOptions, { streamKeepAlive: Duration.seconds(settings.streamKeepAliveSeconds) })
