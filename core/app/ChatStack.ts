/**
 * From the config file's `chat` section to the running chat stack:
 * targets resolved (preset, overrides, key from its environment variable,
 * timeouts, retries), the model router with the grounded model beside the
 * routes, (core/app/Application.ts puts the gateway pipeline on top).
 */
import { Config, Effect, Layer, Redacted } from "effect"
import { parameterPresets, presetSupportsN, withOverrides } from "../backends/openai/ParameterPresets.ts"
import type { ChatConfig, UpstreamConfig } from "../config/ChatConfig.ts"
import { SettingsError } from "../config/Settings.ts"
import { ChatGateway, type ValidationPolicy } from "../chat/ChatGateway.ts"
import { validationPolicyFrom } from "../chat/OutputValidation.ts"
import { defaultGroundingSettings, Grounding, type GroundingSettings } from "../chat/Grounding.ts"
import type { FederatedSearch } from "../search/FederatedSearch.ts"
import { ChatModel } from "../chat/ChatModel.ts"
import { makeGroundedModel } from "../chat/GroundedModel.ts"
import { makeModelRouter, type Route } from "../chat/ModelRouter.ts"
import { TokenCount } from "../chat/TokenCount.ts"
import { UpstreamClient, type UpstreamTarget } from "../chat/Upstream.ts"

export const defaultTimeouts = { connectMs: 10_000, firstTokenMs: 120_000, totalMs: 600_000 }
export const defaultRetries = { max: 2, baseDelayMs: 250 }

const resolveKey = (name: string, upstream: UpstreamConfig): Effect.Effect<Redacted.Redacted<string> | undefined, SettingsError> => {
  if (upstream.apiKey !== undefined) return Effect.succeed(Redacted.make(upstream.apiKey))
  if (upstream.apiKeyEnv === undefined) return Effect.succeed(undefined)
  const variable = upstream.apiKeyEnv
  return Config.Redacted(variable).pipe(
    Effect.mapError(() => new SettingsError({ setting: `chat.upstreams.${name}.apiKeyEnv`, message: `names ${variable}, which is not set` }))
  )
}

/** Every configured upstream and model as a target, keys read from the environment. */
const resolveRoutes = (chat: ChatConfig | undefined): Effect.Effect<ReadonlyArray<Route>, SettingsError> =>
  Effect.gen(function*() {
    const upstreams = new Map<string, Omit<UpstreamTarget, "model">>()
    for (const [name, upstream] of Object.entries(chat?.upstreams ?? {})) {
      const preset = upstream.preset ?? "passthrough"
      upstreams.set(name, {
        name,
        baseUrl: upstream.baseUrl,
        apiKey: yield* resolveKey(name, upstream),
        params: upstream.params === undefined ? parameterPresets[preset] : withOverrides(preset, upstream.params),
        supportsN: upstream.supportsN ?? presetSupportsN[preset],
        timeouts: { ...defaultTimeouts, ...upstream.timeouts },
        retries: { ...defaultRetries, ...upstream.retries },
        headers: upstream.headers ?? {},
        requestDefaults: upstream.requestDefaults ?? chat?.requestDefaults ?? "spec"
      })
    }
    return (chat?.models ?? []).map((model): Route => ({
      name: model.name,
      aliases: model.aliases ?? [],
      targets: model.targets.map((t) => ({ target: { ...upstreams.get(t.upstream)!, model: t.model }, weight: t.weight ?? 1 }))
    }))
  })

export const validationPolicyOf = (chat: ChatConfig | undefined): ValidationPolicy => validationPolicyFrom(chat?.validation)

/** `chat.grounding` over the defaults. */
export const groundingSettingsOf = (chat: ChatConfig | undefined): GroundingSettings => {
  const g = chat?.grounding
  const d = defaultGroundingSettings
  return {
    contextSize: g?.contextSize ?? d.contextSize,
    maxResults: { ...d.maxResults, ...g?.maxResults },
    fetchTopPages: { ...d.fetchTopPages, ...g?.fetchTopPages },
    pageChars: g?.pageChars ?? d.pageChars,
    deadlineMs: g?.deadlineMs ?? d.deadlineMs,
    maxToolRounds: g?.maxToolRounds ?? d.maxToolRounds,
    serverTools: g?.serverTools ?? d.serverTools,
    expand: g?.expand ?? d.expand
  }
}

/**
 * The gateway pipeline with grounding: web search through FederatedSearch, pages read
 * through WebFetch when one is provided beside it (else sources are snippets).
 */
export const chatGatewayLayer = (chat: ChatConfig | undefined): Layer.Layer<ChatGateway, never, ChatModel | FederatedSearch> =>
  ChatGateway.layer(validationPolicyOf(chat)).pipe(Layer.provide(Grounding.layer(groundingSettingsOf(chat))))

/** The router over upstreams, with periscope-grounded beside the routes unless turned off. */
export const chatModelLayer = (chat: ChatConfig | undefined): Layer.Layer<ChatModel, SettingsError, UpstreamClient> =>
  Layer.effect(
    ChatModel,
    Effect.gen(function*() {
      const routes = yield* resolveRoutes(chat)
      const builtins = chat?.grounded === false ? [] : [makeGroundedModel(yield* Effect.service(TokenCount))]
      return makeModelRouter(yield* Effect.service(UpstreamClient), {
        routes,
        builtins,
        // The router decides the default when none is configured (its first route, else the grounded model).
        defaultModel: chat?.defaultModel
      })
    })
  ).pipe(Layer.provide(TokenCount.layer))
