/**
 * Configured providers to SearchProvider values, one line per kind, and the Layer of the
 * federated search over them, the local engine and a ResultCache.
 */
import { Effect, Layer, type Redacted } from "effect"
import type { HttpClient } from "effect/http"
import { type ConfiguredProvider, FederatedSearch, type FederationSettings } from "../../search/FederatedSearch.ts"
import type { ImageSearch } from "../../search/ImageSearch.ts"
import type { ProviderKind, SearchProvider } from "../../search/SearchProvider.ts"
import type { WebSearch } from "../../search/WebSearch.ts"
import type { ResultCache } from "../../store/ResultCache.ts"
import { BraveProvider } from "./BraveProvider.ts"
import { ExaProvider } from "./ExaProvider.ts"
import { IflowProvider } from "./IflowProvider.ts"
import { SearxngProvider } from "./SearxngProvider.ts"
import { SerperProvider } from "./SerperProvider.ts"
import { TavilyProvider } from "./TavilyProvider.ts"

/** One configured provider, its key already read from the environment variable the config names. */
export interface ProviderSettings {
  readonly name: string
  readonly kind: ProviderKind
  readonly baseUrl: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly weight: number
  readonly timeoutMs: number
  /** iflow only: forward our options (a Periscope peer) or not (the seed's provider). */
  readonly forwardOptions?: boolean | undefined
}

/** The documented base URL of each hosted provider (SearXNG and iflow have none: self-hosted). */
export const DEFAULT_BASE_URLS: Partial<Record<ProviderKind, string>> = {
  brave: "https://api.search.brave.com",
  serper: "https://google.serper.dev",
  tavily: "https://api.tavily.com",
  exa: "https://api.exa.ai"
}

export const makeProvider = (s: ProviderSettings): Effect.Effect<SearchProvider, never, HttpClient.HttpClient> => {
  const config = { name: s.name, baseUrl: s.baseUrl, apiKey: s.apiKey }
  switch (s.kind) {
    case "searxng": return SearxngProvider.make(config)
    case "brave": return BraveProvider.make(config)
    case "serper": return SerperProvider.make(config)
    case "tavily": return TavilyProvider.make(config)
    case "exa": return ExaProvider.make(config)
    case "iflow": return IflowProvider.make({ ...config, forwardOptions: s.forwardOptions })
  }
}

/** FederatedSearch over the local engine (WebSearch, ImageSearch in context) and `providers`. */
export const federatedLayer = (
  providers: ReadonlyArray<ProviderSettings>,
  settings?: FederationSettings
): Layer.Layer<FederatedSearch, never, WebSearch | ImageSearch | ResultCache | HttpClient.HttpClient> =>
  Layer.unwrap(
    Effect.map(
      Effect.forEach(providers, (s) =>
        Effect.map(makeProvider(s), (provider): ConfiguredProvider => ({ provider, weight: s.weight, timeoutMs: s.timeoutMs }))),
      (configured) => FederatedSearch.layer(configured, settings)
    )
  )
