/**
 * From the config file's `search.embeddings` and `search.reranker` to running services: the
 * TextEmbedder and Reranker clients (keys read from the environment variables they name), and
 * the engine's WebSearch made hybrid. The snapshot's vectors are checked when the server
 * starts: vectors of another model or dimension stop the start with a message naming the
 * setting at odds with them; a snapshot without vectors is served by BM25 alone, with a warning.
 */
import { Config, Effect, Layer, Option, type Redacted } from "effect"
import type { HttpClient } from "effect/http"
import { EmbeddingClient, defaultEmbeddingClientSettings } from "../backends/embeddings/EmbeddingClient.ts"
import { RerankClient } from "../backends/embeddings/RerankClient.ts"
import { SearchEngine } from "../backends/EngineSearch.ts"
import { defaultHybridSearchSettings, HybridSearch, type HybridSearchSettings } from "../backends/HybridSearch.ts"
import type { SearchConfig } from "../config/ConfigFile.ts"
import type { EmbeddingsConfig, RerankerConfig } from "../config/EmbeddingsConfig.ts"
import { SettingsError } from "../config/Settings.ts"
import { vectorsMismatch } from "../index/Vectors.ts"
import type { Reranker, TextEmbedder } from "../search/Embeddings.ts"
import { WebSearch } from "../search/WebSearch.ts"
import type { SearchServices } from "./SearchBackend.ts"

type SearchFile = typeof SearchConfig.Type | undefined

const secret = (variable: string | undefined, setting: string): Effect.Effect<Redacted.Redacted<string> | undefined, SettingsError> =>
  variable === undefined ? Effect.succeed(undefined) : Config.Redacted(variable).pipe(
    Effect.mapError(() => new SettingsError({ setting, message: `names ${variable}, which is not set` }))
  )

/** The embedding client's settings from the section, with the defaults. */
export const embeddingClientSettingsOf = (config: EmbeddingsConfig, apiKey: Redacted.Redacted<string> | undefined) => ({
  baseUrl: config.baseUrl,
  model: config.model,
  apiKey,
  dimensions: config.dimensions,
  batchSize: config.batchSize ?? defaultEmbeddingClientSettings.batchSize,
  concurrency: config.concurrency ?? defaultEmbeddingClientSettings.concurrency,
  timeoutMs: config.timeoutMs ?? defaultEmbeddingClientSettings.timeoutMs,
  queryTimeoutMs: config.queryTimeoutMs ?? defaultEmbeddingClientSettings.queryTimeoutMs,
  retries: config.retries ?? defaultEmbeddingClientSettings.retries
})

/** The TextEmbedder of `search.embeddings` (its key from the environment). */
export const textEmbedderLayer = (config: EmbeddingsConfig): Layer.Layer<TextEmbedder, SettingsError, HttpClient.HttpClient> =>
  Layer.unwrap(Effect.map(secret(config.apiKeyEnv, "search.embeddings.apiKeyEnv"), (apiKey) => EmbeddingClient.layer(embeddingClientSettingsOf(config, apiKey))))

/** The Reranker of `search.reranker`. */
export const rerankerLayer = (config: RerankerConfig): Layer.Layer<Reranker, SettingsError, HttpClient.HttpClient> =>
  Layer.unwrap(Effect.map(secret(config.apiKeyEnv, "search.reranker.apiKeyEnv"), (apiKey) =>
    RerankClient.layer({ url: config.url, model: config.model, apiKey, api: config.api ?? "cohere", timeoutMs: config.timeoutMs ?? 3_000, retries: 0 })))

/** The model servers the config file names (none, one or both), built once: for hybrid search and the pass-through routes. */
export const modelServersOf = (search: SearchFile): Layer.Layer<TextEmbedder | Reranker, SettingsError, HttpClient.HttpClient> => {
  const layers = [
    ...(search?.embeddings === undefined ? [] : [textEmbedderLayer(search.embeddings)]),
    ...(search?.reranker === undefined ? [] : [rerankerLayer(search.reranker)])
  ]
  // Nothing configured: no service, and the routes answer 404 naming the setting.
  return layers.length === 0 ? (Layer.empty as Layer.Layer<never, SettingsError, HttpClient.HttpClient> as Layer.Layer<TextEmbedder | Reranker, SettingsError, HttpClient.HttpClient>) : Layer.mergeAll(layers[0]!, ...layers.slice(1))
}

/** The search layer with its WebSearch made hybrid when `search.embeddings` is set (over `servers`, modelServersOf's layer). */
export const withHybridSearch = <E, R>(
  layer: Layer.Layer<SearchServices, E, R>,
  search: SearchFile,
  servers: Layer.Layer<TextEmbedder | Reranker, SettingsError, HttpClient.HttpClient>
): Layer.Layer<SearchServices, E | SettingsError, R | HttpClient.HttpClient> =>
  search?.embeddings === undefined ? layer : hybridWebSearch(search).pipe(Layer.provideMerge(layer), Layer.provide(servers))

/** Hybrid search's settings from the sections. */
export const hybridSettingsOf = (search: SearchFile): HybridSearchSettings => {
  const e = search?.embeddings
  const r = search?.reranker
  const d = defaultHybridSearchSettings
  return {
    fusion: e?.fusion ?? d.fusion,
    vectorWeight: e?.vectorWeight ?? d.vectorWeight,
    candidates: e?.candidates ?? d.candidates,
    queryPrefix: e?.queryPrefix ?? d.queryPrefix,
    rerankTopK: r?.topK ?? d.rerankTopK,
    rerankMaxChars: r?.maxChars ?? d.rerankMaxChars,
    queryCacheEntries: d.queryCacheEntries
  }
}

/**
 * The engine's WebSearch made hybrid, over the search layer's SearchEngine and the model
 * servers' layer; any other backend keeps its WebSearch (a warning says embeddings are unused).
 */
export const hybridWebSearch = (search: SearchFile): Layer.Layer<WebSearch, SettingsError, WebSearch | TextEmbedder> =>
  Layer.effect(
    WebSearch,
    Effect.gen(function*() {
      const engine = Option.getOrUndefined(yield* Effect.serviceOption(SearchEngine))
      const lexical = yield* WebSearch
      if (engine === undefined) {
        yield* Effect.logWarning("search.embeddings: hybrid retrieval needs the engine backend; this backend answers by its own ranking")
        return lexical
      }
      const snapshot = yield* engine.snapshot
      const vectors = snapshot.parts.vectors
      const config = search?.embeddings
      if (config !== undefined && vectors !== undefined) {
        const problem = vectorsMismatch(vectors, { model: config.model, dimensions: config.dimensions })
        if (problem !== undefined) return yield* new SettingsError(problem)
        yield* Effect.logInfo(`search: hybrid retrieval over ${vectors.count} passage vectors of ${vectors.meta.model} (${vectors.dimensions} dimensions)`)
      } else if (config !== undefined) {
        yield* Effect.logWarning("search.embeddings: the snapshot has no vectors, so searches use BM25 alone; run `periscope index` to embed its pages")
      }
      return yield* Effect.provideService(HybridSearch.make(hybridSettingsOf(search)), SearchEngine, engine)
    })
  )
