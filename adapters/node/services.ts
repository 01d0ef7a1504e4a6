/** Builds the services Layer of the Node server from its settings. */
import { Duration, Effect, Layer } from "effect"
import type { AppServices } from "../../core/api/HttpApp.ts"
import { ServerOptions } from "../../core/api/ServerOptions.ts"
import { ApiKeys } from "../../core/auth/ApiKeys.ts"
import type { KeyRecord } from "../../core/auth/KeyRecord.ts"
import { RateLimiter } from "../../core/auth/RateLimiter.ts"
import { FixtureSearchLayer } from "../../core/backends/FixtureSearch.ts"
import { ScriptedChatLayer, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import { ChatGateway } from "../../core/chat/ChatGateway.ts"
import type { ImageSearch } from "../../core/search/ImageSearch.ts"
import type { WebSearch } from "../../core/search/WebSearch.ts"
import { readJsonlDocuments } from "./jsonlDocuments.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import type { Settings, SettingsError } from "./settings.ts"

const searchLayer = (settings: Settings): Effect.Effect<Layer.Layer<WebSearch | ImageSearch>, SettingsError> =>
  settings.search.documents === undefined
    ? Effect.succeed(FixtureSearchLayer(sampleDocuments))
    : Effect.map(readJsonlDocuments(settings.search.documents, "search.documents"), FixtureSearchLayer)

/** Until a model upstream is configured, chat answers from a script that says so. */
const defaultChat = ScriptedChatLayer(unconfiguredChat)

export const makeServices = (settings: Settings, keys: ReadonlyArray<KeyRecord>): Effect.Effect<Layer.Layer<AppServices>, SettingsError> =>
  Effect.map(searchLayer(settings), (search) =>
    Layer.mergeAll(search, ChatGateway.layer().pipe(Layer.provide(defaultChat)), ApiKeys.layer(keys), RateLimiter.layer))

/** The HTTP tunables from settings, as a Layer over the ServerOptions reference. */
export const serverOptionsLayer = (settings: Settings) =>
  Layer.succeed(ServerOptions, { streamKeepAlive: Duration.seconds(settings.streamKeepAliveSeconds) })
