/**
 * The configuration file (PERISCOPE_CONFIG, JSON): what does not fit in
 * environment variables. Environment variables win over the file.
 * Every setting is listed in docs/configuration.md (Every setting).
 */
import { Schema } from "effect"
import { PROVIDER_KINDS, SearchProviders } from "../backends/search/SearchProviders.ts"
import { ruledNumber, ruledString } from "../schema/Rules.ts"
import { ChatConfig } from "./ChatConfig.ts"
import { EmbeddingsConfig, RerankerConfig } from "./EmbeddingsConfig.ts"
import { ExpansionConfig } from "./ExpansionConfig.ts"
import { FetchConfig } from "./FetchConfig.ts"
import { JobsConfig } from "./JobsConfig.ts"
import { McpConfig } from "./McpConfig.ts"
import { ObservabilityConfig } from "./ObservabilityConfig.ts"
import { OpenSearchConfig } from "./OpenSearchConfig.ts"
import { SearxngConfig } from "./SearxngConfig.ts"
import { StoreConfig } from "./StoreConfig.ts"

const optionalKey = Schema.optionalKey

const ttlSeconds = ruledNumber("must be an integer from 0 to 604800 (seconds)", { integer: true, min: 0, max: 604_800 })
const providerNameRule = "must be a name of letters, digits, _ or -, at most 32 characters"
const envNameRule = "must be an environment variable name"

/** One upstream search provider; its key is read from the environment variable `apiKeyEnv` names, never written here. */
export const SearchProviderConfig = Schema.Struct({
  name: ruledString(providerNameRule).check(Schema.isPattern(/^[A-Za-z0-9_-]{1,32}$/, { message: providerNameRule })),
  kind: Schema.Literals(PROVIDER_KINDS).annotate({ message: `must be one of ${PROVIDER_KINDS.join(", ")}` }),
  /** Required for searxng and iflow; the provider's public API for the others. */
  baseUrl: optionalKey(ruledString("must be an http(s) URL").check(Schema.isPattern(/^https?:\/\/[^\s/]+/i, { message: "must be an http(s) URL" }))),
  apiKeyEnv: optionalKey(ruledString(envNameRule).check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: envNameRule }))),
  /** RRF weight. Default 1. */
  weight: optionalKey(ruledNumber("must be a number from 0 to 100", { min: 0, max: 100 })),
  /** Per-request timeout. Default 3000. */
  timeoutMs: optionalKey(ruledNumber("must be an integer from 1 to 120000", { integer: true, min: 1, max: 120_000 })),
  /** iflow only: send our options on (true for a Periscope peer, false for a service that takes only keywords and num). Default true. */
  forwardOptions: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
}).annotate({ message: "must be an object {name, kind, baseUrl?, apiKeyEnv?, weight?, timeoutMs?, forwardOptions?}" })
export type SearchProviderConfig = typeof SearchProviderConfig.Type

/** `search.warmUpMs`: the config file's setting and the embed library's option of the same name. */
export const warmUpMsRule = "must be an integer from 0 to 60000"
export const WarmUpMs = ruledNumber(warmUpMsRule, { integer: true, min: 0, max: 60_000 })

export const SearchConfig = Schema.Struct({
  /** "engine": the embedded engine over a snapshot (default); "fixture": documents from a JSONL file, term overlap; "opensearch": an OpenSearch/Elasticsearch index (search.opensearch). */
  backend: optionalKey(Schema.Literals(["engine", "fixture", "opensearch"]).annotate({ message: "must be \"engine\", \"fixture\" or \"opensearch\"" })),
  /** The cluster and index of the opensearch backend (docs/operations.md, OpenSearch). */
  opensearch: optionalKey(OpenSearchConfig),
  /** Snapshot file of the engine; default <dataDir>/index.snapshot. */
  snapshot: optionalKey(ruledString("must be a file path")),
  /** JSONL documents {url, title, text, date?, images?} for the fixture backend. */
  documents: optionalKey(ruledString("must be a file path")),
  /** How long the engine answers warm-up queries made from its own page titles after its snapshot is opened, before the port opens (core/index/WarmUp.ts); 0 turns it off. Default: 1500 on the Node server, 0 on Deno and in the library. */
  warmUpMs: optionalKey(WarmUpMs),
  /** Live web search providers fused with the local index (docs/providers.md). */
  providers: optionalKey(Schema.Array(SearchProviderConfig).annotate({ message: "must be an array of providers" }).check(
    Schema.makeFilter((providers) => {
      const seen = new Set<string>(["local"])
      for (let i = 0; i < providers.length; i++) {
        const p = providers[i]!
        if (seen.has(p.name)) return { path: [i, "name"], issue: p.name === "local" ? "is the local index's name" : `duplicates the provider name ${JSON.stringify(p.name)}` }
        seen.add(p.name)
        if (p.baseUrl === undefined && SearchProviders[p.kind].defaultBaseUrl === undefined) return { path: [i, "baseUrl"], issue: `is required for kind ${p.kind}` }
      }
      return undefined
    })
  )),
  /** Hybrid retrieval: the embedding server `periscope index` and every search use (docs/hybrid.md). */
  embeddings: optionalKey(EmbeddingsConfig),
  /** A /rerank endpoint that reorders the best results (docs/hybrid.md). */
  reranker: optionalKey(RerankerConfig),
  /** Query expansion's depths and weights, for searches that ask for `expand` (docs/indexing.md). */
  expansion: optionalKey(ExpansionConfig),
  /** The whole search request waits no longer than this for any source. Default 5000. */
  deadlineMs: optionalKey(ruledNumber("must be an integer from 1 to 120000", { integer: true, min: 1, max: 120_000 })),
  /** RRF weight of the local index. Default 1. */
  localWeight: optionalKey(ruledNumber("must be a number from 0 to 100", { min: 0, max: 100 })),
  cache: optionalKey(Schema.Struct({
    /** Answers kept at most (least recently used dropped first); 0 turns the cache off. Default 10000. */
    maxEntries: optionalKey(ruledNumber("must be an integer from 0 to 1000000", { integer: true, min: 0, max: 1_000_000 })),
    /** Seconds an answer is kept, by the request's freshness. */
    ttlSeconds: optionalKey(Schema.Struct({
      default: optionalKey(ttlSeconds),
      day: optionalKey(ttlSeconds),
      week: optionalKey(ttlSeconds),
      month: optionalKey(ttlSeconds),
      year: optionalKey(ttlSeconds),
      range: optionalKey(ttlSeconds)
    }).annotate({ message: "must be an object {default?, day?, week?, month?, year?, range?} of seconds" }))
  }).annotate({ message: "must be an object {maxEntries?, ttlSeconds?}" }))
}).annotate({ message: "must be an object" }).check(
  Schema.makeFilter((search) =>
    search.backend === "opensearch" && search.opensearch === undefined ? { path: ["opensearch"], issue: "is required when backend is \"opensearch\"" } : undefined)
)

export const ConfigFile = Schema.Struct({
  port: optionalKey(ruledNumber("must be an integer from 1 to 65535", { integer: true, min: 1, max: 65535 })),
  host: optionalKey(ruledString("must be a host name or address")),
  dataDir: optionalKey(ruledString("must be a directory path")),
  keysFile: optionalKey(ruledString("must be a file path")),
  /** Requests per minute for keys without their own limit (env keys, the generated key). */
  rateLimitPerMinute: optionalKey(ruledNumber("must be an integer >= 1", { integer: true, min: 1 })),
  /** Seconds of silence before a keep-alive comment on a chat stream. */
  streamKeepAliveSeconds: optionalKey(ruledNumber("must be a number > 0", { exclusiveMin: 0 })),
  /** On SIGTERM, seconds requests in flight may still take; open streams end with an error event just before. Default 10. */
  shutdownGraceSeconds: optionalKey(ruledNumber("must be a number from 0.1 to 3600", { min: 0.1, max: 3600 })),
  /** Log one line per request (method, path, status, time). Default false. */
  logRequests: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  search: optionalKey(SearchConfig),
  chat: optionalKey(ChatConfig),
  /** Shared state (docs/operations.md, Several instances). */
  store: optionalKey(StoreConfig),
  /** /metrics and OTLP traces (docs/operations.md, Metrics and Tracing). */
  observability: optionalKey(ObservabilityConfig),
  /** webFetch: address policy, limits, page cache (docs/fetch-and-grounding.md, Fetch a page). */
  fetch: optionalKey(FetchConfig),
  /** Threads for CPU-heavy work (reading pages, large validations) and their bounds (docs/configuration.md). */
  jobs: optionalKey(JobsConfig),
  /** MCP at /mcp: browser origins allowed besides the server's own address (docs/mcp.md). */
  mcp: optionalKey(McpConfig),
  /** The SearXNG-compatible /searxng/search: whether a private network may call it without a key (docs/searxng.md). */
  searxng: optionalKey(SearxngConfig)
}).annotate({ message: "must be a JSON object" })
export type ConfigFile = typeof ConfigFile.Type
