/**
 * Settings in, the application's Layers out: the one function every adapter
 * (Node, Deno, embed) and the test support call. Adapters provide only what
 * is platform-specific: a FileSystem, an HttpClient for upstreams, and the
 * engine hooks (Node's starter index and SIGHUP reloads).
 */
import { Duration, type FileSystem, Layer } from "effect"
import type { HttpClient } from "effect/http"
import { Admission } from "../api/Admission.ts"
import type { AppServices } from "../api/HttpApp.ts"
import { McpEndpoint } from "../api/mcp/McpEndpoint.ts"
import { searxngOptionsLayer } from "../api/searxng/SearxngOptions.ts"
import { ServerOptions } from "../api/ServerOptions.ts"
import { ApiKeys } from "../auth/ApiKeys.ts"
import type { KeyRecord } from "../auth/KeyRecord.ts"
import { AddedPagesLimits } from "../backends/AddedPages.ts"
import { GuardedWebFetch } from "../backends/GuardedWebFetch.ts"
import { OpenAiUpstream } from "../backends/openai/OpenAiUpstream.ts"
import type { ChatModel } from "../chat/ChatModel.ts"
import { addedPagesLimitsOf, fetchSettingsOf } from "../config/FetchConfig.ts"
import { jobLimitsOf } from "../config/JobsConfig.ts"
import type { Settings, SettingsError } from "../config/Settings.ts"
import type { PageFetcher } from "../ingest/crawl/PageFetcher.ts"
import { JobRunner } from "../jobs/JobRunner.ts"
import { chatGatewayLayer, chatModelLayer } from "./ChatStack.ts"
import { modelServersOf, withHybridSearch } from "./EmbeddingStack.ts"
import { IndexStatus } from "./IndexStatus.ts"
import { meteredChatModel, tracedApiKeys, tracedSearch } from "./Instrumented.ts"
import { observabilityLayer } from "./Observability.ts"
import { sharedStateOf } from "./SharedState.ts"
import { type EngineHooks, federationLayer, type SearchChoice, searchLayer } from "./SearchBackend.ts"

export interface AppOptions {
  /** The search backend; by default what the settings choose (see searchChoiceOf). */
  readonly search: SearchChoice
  readonly hooks?: EngineHooks
  /** A chat model in place of the configured router (the scripted backend in tests and demos). */
  readonly chatModel?: Layer.Layer<ChatModel>
}

/** The PageFetcher is the guarded fetcher webFetch reads pages through (Node: pinned to the checked address). */
export type Platform = FileSystem.FileSystem | HttpClient.HttpClient | PageFetcher

export const appLayer = (
  settings: Settings,
  keys: ReadonlyArray<KeyRecord>,
  options: AppOptions
): Layer.Layer<AppServices, SettingsError, Platform> => {
  // Limits and caches in memory, or shared through Redis (store.redisUrl / PERISCOPE_REDIS_URL).
  const state = sharedStateOf(settings.store, settings.file.search)
  const cache = state.resultCache
  const indexStatus = IndexStatus.layer(options.search._tag === "Engine")
  // One cache instance (layers are shared by reference within a build): the engine clears what federation fills.
  // The embedding server and reranker of search.embeddings / search.reranker, when configured: hybrid search and /v1/embeddings, /v1/rerank.
  const modelServers = modelServersOf(settings.file.search)
  const search = withHybridSearch(searchLayer(options.search, options.hooks).pipe(
    Layer.provide([cache, indexStatus, Layer.succeed(AddedPagesLimits, addedPagesLimitsOf(settings.file.fetch))])
  ), settings.file.search, modelServers)
  const chat = settings.file.chat
  const model = meteredChatModel(options.chatModel ?? chatModelLayer(chat).pipe(Layer.provide(OpenAiUpstream.layer)))
  const fetchSettings = fetchSettingsOf(settings.file.fetch)
  // CPU-heavy work (reading pages, large validations) on the adapter's job threads: one runner, one queue.
  const jobs = JobRunner.layer(jobLimitsOf(settings.file.jobs))
  // Given the search layer so that addToIndex reaches the engine (and clears the answers cached from its old index).
  const webFetch = GuardedWebFetch.layer(fetchSettings).pipe(Layer.provide([state.pageCache(fetchSettings), search, cache, jobs]))
  // Spans of their own only where a tracer can record them (an OTLP endpoint is set): without one
  // the wrapper is a step per request that decides, every time, to do nothing.
  const tracing = settings.observability.otlpEndpoint !== undefined
  // Results that carry their page read it from the search backend's stored text or through the same webFetch.
  const federationUntraced = federationLayer(settings.file.search).pipe(Layer.provide([search, cache, webFetch]))
  const federation = tracing ? tracedSearch(federationUntraced) : federationUntraced
  // Grounded chat searches through the same federation, reads the local index's pages from the
  // search backend's stored text and other pages through the same webFetch.
  const gateway = chatGatewayLayer(chat).pipe(Layer.provide([model, federation, webFetch, search, jobs]))
  return Layer.mergeAll(
    search,
    webFetch,
    federation,
    gateway,
    // MCP's tools answer with the same services as the REST routes.
    McpEndpoint.layer({ allowedOrigins: settings.file.mcp?.allowedOrigins ?? [] }).pipe(Layer.provide([federation, webFetch, gateway])),
    // Every keyed route is admitted through Admission, over these keys and limits.
    Admission.layer.pipe(Layer.provideMerge(Layer.merge(tracing ? tracedApiKeys(ApiKeys.layer(keys)) : ApiKeys.layer(keys), state.rateLimits))),
    // /metrics, /readyz, access logs and OTLP traces (docs/operations.md: Metrics, Tracing, Access log, Probes).
    observabilityLayer(settings).pipe(Layer.provide([state.sharedStore, indexStatus])),
    Layer.succeed(ServerOptions, { streamKeepAlive: Duration.seconds(settings.streamKeepAliveSeconds) }),
    // /searxng/search without a key from a private network: off unless the config file opens it (a warning at start).
    searxngOptionsLayer({ openOnPrivateNetwork: settings.file.searxng?.openOnPrivateNetwork ?? false, openRequestsPerMinute: settings.rateLimitPerMinute }),
    modelServers
  )
}
