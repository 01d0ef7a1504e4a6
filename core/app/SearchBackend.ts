/**
 * The one place a search backend is chosen: from settings for the servers,
 * from options for the embed library. Adding a backend is a case here.
 * The engine reads its snapshot from a file (the platform's FileSystem) or an
 * http(s) URL (the platform's HttpClient), and reloads it when the platform
 * asks (SIGHUP on Node): a bad snapshot is refused and the current index stays.
 * Pages added to it (webFetch's addToIndex) are kept beside a snapshot file in
 * its journal (`<snapshot>.added.jsonl`), which the next `periscope index` run
 * reads; beside a snapshot from a URL or from bytes they live in memory.
 */
import { Config, Effect, FileSystem, Layer, Result, Stream } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"
import { addedPagesPath, fileJournal } from "../backends/AddedPagesJournal.ts"
import { EngineSearch, SearchEngine } from "../backends/EngineSearch.ts"
import { FixtureSearch } from "../backends/FixtureSearch.ts"
import { OpenSearchSearch } from "../backends/search/OpenSearchSearch.ts"
import { sampleDocuments } from "../backends/SampleDocuments.ts"
import { federatedLayer, type ProviderSettings, SearchProviders } from "../backends/search/SearchProviders.ts"
import type { SearchConfig } from "../config/ConfigFile.ts"
import type { ExpansionConfig } from "../config/ExpansionConfig.ts"
import type { OpenSearchConfig } from "../config/OpenSearchConfig.ts"
import { describeReadError, readSettingFile, SettingsError } from "../config/Settings.ts"
import type { IndexDocument } from "../index/Document.ts"
import { defaultExpansionSettings, type ExpansionSettings } from "../index/Expansion.ts"
import type { SearchIndex } from "../index/SearchIndex.ts"
import { SnapshotError } from "../index/Snapshot.ts"
import { decodeSnapshotFast } from "../index/SnapshotLoad.ts"
import { defaultWarmUp, warmUp } from "../index/WarmUp.ts"
import { parseJsonlLine } from "../ingest/JsonlDocument.ts"
import { defaultFederationSettings, type FederatedSearch, type FederationSettings } from "../search/FederatedSearch.ts"
import type { ImageSearch } from "../search/ImageSearch.ts"
import { ResultCache } from "../store/ResultCache.ts"
import type { WebSearch } from "../search/WebSearch.ts"
import { IndexStatus } from "./IndexStatus.ts"

export type SearchServices = WebSearch | ImageSearch

export type SearchChoice =
  /**
   * The engine over a snapshot file path or http(s) URL; `warmUpMs`: warm-up queries once it is
   * opened (default 0, none); `expansion`: how `expand` expands a query (default RM3's).
   */
  | { readonly _tag: "Engine"; readonly snapshot: string; readonly warmUpMs?: number; readonly expansion?: ExpansionSettings }
  /** The engine over snapshot bytes the caller holds. */
  | { readonly _tag: "EngineBytes"; readonly bytes: Uint8Array; readonly warmUpMs?: number; readonly expansion?: ExpansionSettings }
  /** Term overlap over documents; Periscope's own sample pages when none are given. */
  | { readonly _tag: "Fixture"; readonly documents: ReadonlyArray<IndexDocument> }
  /** Term overlap over the documents of a JSONL file. */
  | { readonly _tag: "FixtureFile"; readonly path: string }
  /** Any Layer providing the search services (tests, embedders with their own backend). */
  | { readonly _tag: "Layer"; readonly layer: Layer.Layer<SearchServices> }
  /** An OpenSearch/Elasticsearch index; credentials read from the environment variables the config names. */
  | { readonly _tag: "OpenSearch"; readonly config: OpenSearchConfig }

/** What the platform adds around the engine: Node builds a starter index and reloads on SIGHUP. */
export interface EngineHooks {
  /** Runs before the snapshot is first read (e.g. builds one when there is none). */
  readonly prepare?: (snapshot: string) => Effect.Effect<void, SettingsError>
  /** Each element asks for the snapshot to be read again and swapped in; `name` says who asks, in logs. */
  readonly reloads?: { readonly name: string; readonly requests: Stream.Stream<void> }
  /**
   * Opens a snapshot file so that it answers before its page text is read (the Node adapter):
   * `textInMemory` ends when the text is in memory ("held"), or says why it stays in the file.
   * Without it, and for URLs, the whole snapshot is read into memory and decoded.
   */
  readonly openFile?: (path: string) => Effect.Effect<OpenedIndex, SnapshotError | { readonly message: string }>
}

export interface OpenedIndex {
  readonly index: SearchIndex
  readonly textInMemory: Effect.Effect<"held" | "changed" | "failed">
}

const isUrl = (location: string) => /^https?:\/\//i.test(location)

/** The setting a snapshot's errors name. */
const snapshotSetting = (location: string) => `search.snapshot (${location})`

/** Snapshot bytes from a file or a URL; errors name the setting and the cause. */
export const readSnapshotBytes = (location: string): Effect.Effect<Uint8Array, SettingsError, FileSystem.FileSystem | HttpClient.HttpClient> => {
  const setting = snapshotSetting(location)
  if (isUrl(location)) {
    return HttpClient.get(location).pipe(
      Effect.flatMap(HttpClientResponse.filterStatusOk),
      Effect.flatMap((response) => response.arrayBuffer),
      Effect.map((buffer) => new Uint8Array(buffer)),
      Effect.mapError((error) => new SettingsError({ setting, message: `cannot be fetched: ${error.message}` }))
    )
  }
  return Effect.flatMap(Effect.service(FileSystem.FileSystem), (fs) =>
    Effect.mapError(fs.readFile(location), (error) => new SettingsError({ setting, message: describeReadError(error) })))
}

/** The documents of a JSONL file, each line decoded as `periscope index` decodes it; a bad line stops the start with its number. */
export const readJsonlDocuments = Effect.fnUntraced(function*(path: string, setting: string) {
  const text = yield* readSettingFile(path, setting)
  const documents: Array<IndexDocument> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() === "") continue
    const parsed = parseJsonlLine(lines[i]!)
    if (Result.isFailure(parsed)) return yield* new SettingsError({ setting: `${setting} (${path})`, message: `line ${i + 1}: ${parsed.failure}` })
    documents.push(parsed.success)
  }
  return documents
})

const decodeOrFail = (location: string, bytes: Uint8Array) =>
  decodeSnapshotFast(bytes, (e) => unusableSnapshot(location, e))

const unusableSnapshot = (location: string, e: unknown) =>
  new SettingsError({
    setting: snapshotSetting(location),
    message: `${e instanceof Error ? e.message : String(e)}; rebuild it with \`periscope index <sources>\``
  })

const textStaysInFile = (location: string, end: "changed" | "failed") =>
  end === "changed"
    ? `${location} changed while its page text was read (rewritten in place?); replace snapshots by a rename, as \`periscope index\` does`
    : `${location}: its page text could not be read into memory`

/**
 * The index at `location`: opened in place when the platform can (a local file), else read and
 * decoded. `whole`: wait until everything is in memory (a reload, while the current index
 * serves); else answer at once (the first load) and read the page text in the background.
 */
const loadIndex = (location: string, hooks: EngineHooks, whole: boolean) => {
  if (hooks.openFile === undefined || isUrl(location)) return Effect.flatMap(readSnapshotBytes(location), (bytes) => decodeOrFail(location, bytes))
  const setting = snapshotSetting(location)
  return hooks.openFile(location).pipe(
    Effect.mapError((error) => error instanceof SnapshotError ? unusableSnapshot(location, error) : new SettingsError({ setting, message: error.message })),
    Effect.flatMap(({ index, textInMemory }) => {
      if (whole) {
        return Effect.flatMap(textInMemory, (end) => end === "held" ? Effect.succeed(index) : Effect.fail(new SettingsError({ setting, message: textStaysInFile(location, end) })))
      }
      const report = Effect.flatMap(textInMemory, (end) =>
        end === "held" ? Effect.void : Effect.logError(`${textStaysInFile(location, end)}: its hits are read from the file as it is now; reload to serve the new file`))
      return Effect.as(Effect.forkDetach(report), index)
    })
  )
}

/** Reads the snapshot again on every reload request; logs what was loaded or why it was refused. */
const reloadOn = (location: string, reloads: NonNullable<EngineHooks["reloads"]>, hooks: EngineHooks) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const engine = yield* SearchEngine
    // Answers cached from the previous index would outlive it by their TTL: a reload drops them.
    const cache = yield* Effect.serviceOption(ResultCache)
    const status = yield* Effect.serviceOption(IndexStatus)
    const reloadOnce = loadIndex(location, hooks, true).pipe(
      Effect.flatMap((index) => engine.replace(index)),
      Effect.tap(() => (cache._tag === "Some" ? cache.value.clear : Effect.void)),
      Effect.tap((summary) => (status._tag === "Some" ? status.value.reloaded(summary) : Effect.void)),
      Effect.flatMap((summary) => Effect.logInfo(`${reloads.name}: reloaded ${location}: ${summary.documents} documents, ${summary.images} images`)),
      Effect.catch((error) =>
        Effect.andThen(
          status._tag === "Some" ? status.value.reloadRefused : Effect.void,
          Effect.logError(`${reloads.name}: kept the current index; ${location} was refused: ${error.message}`)
        ))
    )
    yield* Effect.forkScoped(Stream.runForEach(reloads.requests, () => reloadOnce))
  }))

/**
 * Answers warm-up queries made from the index's page titles for about `ms` (none for 0), so
 * the first users do not wait while the JIT compiles the query path (core/index/WarmUp.ts).
 * Only the first index: a reload's runs the same code, compiled by then.
 */
const warmedUp = (index: SearchIndex, ms: number | undefined) =>
  ms === undefined || ms <= 0 ? Effect.void : Effect.flatMap(
    Effect.sync(() => warmUp(index, { maxQueries: defaultWarmUp.maxQueries, maxMs: ms })),
    (report) => Effect.logInfo(`search: warmed up with ${report.queries} queries in ${Math.round(report.ms)} ms`)
  )

const engineFromLocation = (location: string, warmUpMs: number | undefined, hooks: EngineHooks, expansion: ExpansionSettings | undefined) => {
  const load = Effect.gen(function*() {
    if (hooks.prepare !== undefined) yield* hooks.prepare(location)
    const index = yield* loadIndex(location, hooks, false)
    yield* Effect.logInfo(`search: ${index.documentCount} documents and ${index.imageCount} images from ${location}`)
    yield* warmedUp(index, warmUpMs)
    const status = yield* Effect.serviceOption(IndexStatus)
    if (status._tag === "Some") yield* status.value.loaded({ documents: index.documentCount, images: index.imageCount })
    const journal = isUrl(location) ? undefined : yield* fileJournal(addedPagesPath(location))
    return EngineSearch.layer(index, { journal, expansion })
  })
  const engine = Layer.unwrap(load)
  return hooks.reloads === undefined ? engine : Layer.merge(engine, reloadOn(location, hooks.reloads, hooks).pipe(Layer.provide(engine)))
}

/** The search services for a choice. */
export const searchLayer = (
  choice: SearchChoice,
  hooks: EngineHooks = {}
): Layer.Layer<SearchServices, SettingsError, FileSystem.FileSystem | HttpClient.HttpClient> => {
  switch (choice._tag) {
    case "Engine":
      return engineFromLocation(choice.snapshot, choice.warmUpMs, hooks, choice.expansion)
    case "EngineBytes":
      return Layer.unwrap(Effect.map(
        Effect.tap(decodeOrFail("bytes", choice.bytes), (index) => warmedUp(index, choice.warmUpMs)),
        (index) => EngineSearch.layer(index, { expansion: choice.expansion })
      ))
    case "Fixture":
      return FixtureSearch.layer(choice.documents)
    case "FixtureFile":
      return Layer.unwrap(Effect.map(readJsonlDocuments(choice.path, "search.documents"), FixtureSearch.layer))
    case "Layer":
      return choice.layer
    case "OpenSearch":
      return openSearchLayer(choice.config)
  }
}

/** The opensearch backend: credentials from the environment variables the config names, never from the file. */
const openSearchLayer = (config: OpenSearchConfig): Layer.Layer<SearchServices, SettingsError, HttpClient.HttpClient> =>
  Layer.unwrap(Effect.gen(function*() {
    const secret = (variable: string | undefined, key: string) =>
      variable === undefined ? Effect.succeed(undefined) : Config.Redacted(variable).pipe(
        Effect.mapError(() => new SettingsError({ setting: `search.opensearch.${key}`, message: `names ${variable}, which is not set` }))
      )
    const username = yield* secret(config.usernameEnv, "usernameEnv")
    const password = yield* secret(config.passwordEnv, "passwordEnv")
    yield* Effect.logInfo(`search: OpenSearch index ${config.index} at ${config.url}`)
    return OpenSearchSearch.layer({ url: config.url, index: config.index, username, password, timeoutMs: config.timeoutMs ?? 5_000 })
  }))

/** The choice the settings make: the engine over the snapshot (default), the fixture backend, or OpenSearch. */
export const searchChoiceOf = (search: {
  readonly backend: "engine" | "fixture" | "opensearch"
  readonly snapshot: string | undefined
  readonly documents: string | undefined
  readonly opensearch?: OpenSearchConfig | undefined
  readonly warmUpMs?: number | undefined
  readonly expansion?: ExpansionConfig | undefined
}, defaultSnapshot: string | undefined, defaultWarmUpMs = 0): SearchChoice => {
  if (search.backend === "opensearch" && search.opensearch !== undefined) return { _tag: "OpenSearch", config: search.opensearch }
  if (search.backend === "engine") {
    const snapshot = search.snapshot ?? defaultSnapshot
    if (snapshot !== undefined) {
      const expansion = search.expansion === undefined ? {} : { expansion: { ...defaultExpansionSettings, ...search.expansion } }
      return { _tag: "Engine", snapshot, warmUpMs: search.warmUpMs ?? defaultWarmUpMs, ...expansion }
    }
  }
  if (search.backend === "fixture" && search.documents !== undefined) return { _tag: "FixtureFile", path: search.documents }
  return { _tag: "Fixture", documents: sampleDocuments }
}

/** Default per-provider timeout and cache size when the config file does not say. */
const PROVIDER_TIMEOUT_MS = 3_000
const CACHE_ENTRIES = 10_000

/**
 * Live web search over the search services: the providers of `search.providers` (keys read
 * from the environment variables they name), fused with the local index. With no provider
 * configured it answers from the local index alone, as before.
 */
export const federationLayer = (
  search: typeof SearchConfig.Type | undefined
): Layer.Layer<FederatedSearch, SettingsError, SearchServices | ResultCache | HttpClient.HttpClient> =>
  Layer.unwrap(Effect.gen(function*() {
    const providers: Array<ProviderSettings> = []
    const configured = search?.providers ?? []
    for (let i = 0; i < configured.length; i++) {
      const p = configured[i]!
      const variable = p.apiKeyEnv
      const apiKey = variable === undefined ? undefined : yield* Config.Redacted(variable).pipe(
        Effect.mapError(() => new SettingsError({ setting: `search.providers[${i}].apiKeyEnv`, message: `names ${variable}, which is not set` }))
      )
      // The config refuses a kind without a default base URL when it gives none.
      const baseUrl = p.baseUrl ?? SearchProviders[p.kind].defaultBaseUrl ?? ""
      providers.push({ name: p.name, kind: p.kind, baseUrl, apiKey, weight: p.weight ?? 1, timeoutMs: p.timeoutMs ?? PROVIDER_TIMEOUT_MS, forwardOptions: p.forwardOptions })
    }
    const ttl = search?.cache?.ttlSeconds
    const defaults = defaultFederationSettings
    const seconds = (value: number | undefined, fallbackMs: number) => (value === undefined ? fallbackMs : value * 1000)
    const settings: FederationSettings = {
      ...defaults,
      deadlineMs: search?.deadlineMs ?? defaults.deadlineMs,
      local: { weight: search?.localWeight ?? defaults.local.weight, timeoutMs: search?.deadlineMs ?? defaults.local.timeoutMs },
      cacheTtlMs: {
        none: seconds(ttl?.default, defaults.cacheTtlMs.none),
        day: seconds(ttl?.day, defaults.cacheTtlMs.day),
        week: seconds(ttl?.week, defaults.cacheTtlMs.week),
        month: seconds(ttl?.month, defaults.cacheTtlMs.month),
        year: seconds(ttl?.year, defaults.cacheTtlMs.year),
        range: seconds(ttl?.range, defaults.cacheTtlMs.range)
      }
    }
    if (providers.length > 0) yield* Effect.logInfo(`search: live providers ${providers.map((p) => `${p.name} (${p.kind})`).join(", ")} fused with the local index`)
    return federatedLayer(providers, settings)
  }))

/** The fused answers' cache of `search.cache` (0 entries: none). The engine clears it when it reloads its index. */
export const resultCacheLayer = (search: typeof SearchConfig.Type | undefined): Layer.Layer<ResultCache> => {
  const entries = search?.cache?.maxEntries ?? CACHE_ENTRIES
  return entries === 0 ? ResultCache.layerNone : ResultCache.layer({ capacity: entries })
}
