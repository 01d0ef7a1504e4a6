/**
 * The registry of upstream search provider kinds: each kind's default base URL and
 * constructor. The config file's `kind` rule and its "baseUrl is required" rule derive from
 * it (core/config/ConfigFile.ts), so adding a provider is one line here. Also the Layer of
 * the federated search over the configured providers, the local engine and a ResultCache.
 */
import { Effect, Layer } from "effect"
import type { HttpClient } from "effect/http"
import { type ConfiguredProvider, FederatedSearch, type FederationSettings } from "../../search/FederatedSearch.ts"
import type { ImageSearch } from "../../search/ImageSearch.ts"
import type { SearchProvider } from "../../search/SearchProvider.ts"
import type { WebSearch } from "../../search/WebSearch.ts"
import type { ResultCache } from "../../store/ResultCache.ts"
import { BraveProvider } from "./BraveProvider.ts"
import { ExaProvider } from "./ExaProvider.ts"
import { IflowProvider } from "./IflowProvider.ts"
import type { ProviderConfig } from "./ProviderHttp.ts"
import { SearxngProvider } from "./SearxngProvider.ts"
import { SerperProvider } from "./SerperProvider.ts"
import { TavilyProvider } from "./TavilyProvider.ts"

/** What a provider's constructor reads: where it is, its key, and iflow's `forwardOptions`. */
export interface ProviderSetup extends ProviderConfig {
  /** iflow only: forward our options (a Periscope peer) or not (a provider that knows none). */
  readonly forwardOptions?: boolean | undefined
}

/** One kind of provider. */
export interface ProviderKindEntry {
  /** The provider's documented public API; undefined for a self-hosted kind, whose baseUrl the config must give. */
  readonly defaultBaseUrl: string | undefined
  readonly make: (options: ProviderSetup) => Effect.Effect<SearchProvider, never, HttpClient.HttpClient>
}

/** Every provider kind, in the order the config file's error message lists them. */
export const SearchProviders = {
  searxng: { defaultBaseUrl: undefined, make: SearxngProvider.make },
  brave: { defaultBaseUrl: "https://api.search.brave.com", make: BraveProvider.make },
  serper: { defaultBaseUrl: "https://google.serper.dev", make: SerperProvider.make },
  tavily: { defaultBaseUrl: "https://api.tavily.com", make: TavilyProvider.make },
  exa: { defaultBaseUrl: "https://api.exa.ai", make: ExaProvider.make },
  iflow: { defaultBaseUrl: undefined, make: IflowProvider.make }
} as const satisfies Record<string, ProviderKindEntry>

export type ProviderKind = keyof typeof SearchProviders
export const PROVIDER_KINDS = Object.keys(SearchProviders) as ReadonlyArray<ProviderKind>

/** One configured provider, its key already read from the environment variable the config names. */
export interface ProviderSettings extends ProviderSetup {
  readonly kind: ProviderKind
  readonly weight: number
  readonly timeoutMs: number
}

export const makeProvider = (s: ProviderSettings): Effect.Effect<SearchProvider, never, HttpClient.HttpClient> => {
  const { make } = SearchProviders[s.kind]
  return make({ name: s.name, baseUrl: s.baseUrl, apiKey: s.apiKey, forwardOptions: s.forwardOptions })
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
