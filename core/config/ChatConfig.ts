/**
 * The `chat` section of the config file: upstream model servers, public model
 * names routed to them, the default model, the validation policy and its bounds.
 * Cross-references (a target naming an unknown upstream, a duplicate name)
 * are refused with the path of the offending field.
 */
import { Schema } from "effect"
import { ruledNumber, ruledString } from "../schema/Rules.ts"
import { presetNames } from "../backends/openai/ParameterPresets.ts"
import { ForwardedParams, RequestDefaultsModes } from "../chat/Upstream.ts"
import { maximumValidationLimits, type ValidationLimits } from "../chat/ValidationLimits.ts"

const optionalKey = Schema.optionalKey
const nonEmpty = (rule: string) => Schema.String.annotate({ message: rule }).check(Schema.isMinLength(1, { message: rule }))

const ParamRuleSchema = Schema.Struct({
  drop: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  rename: optionalKey(nonEmpty("must be a field name")),
  min: optionalKey(ruledNumber("must be a number", {})),
  max: optionalKey(ruledNumber("must be a number", {}))
}).annotate({ message: "must be an object {drop?, rename?, min?, max?}" })

const requestDefaultsRule = "must be spec or upstream"
/** Whose defaults fill the sampling fields a client left out (see RequestDefaultsModes). */
const RequestDefaultsSchema = Schema.Literals(RequestDefaultsModes).annotate({ message: requestDefaultsRule })

const ParamsSchema = Schema.Record(
  Schema.Literals(ForwardedParams).annotate({ message: `must be one of ${ForwardedParams.join(", ")}` }),
  ParamRuleSchema
).annotate({ message: "must be an object of field rules" })

export const UpstreamConfig = Schema.Struct({
  /** Base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: Schema.String.annotate({ message: "must be an http(s) URL" }).check(
    Schema.isPattern(/^https?:\/\/[^\s]+$/, { message: "must be an http(s) URL" })
  ),
  /** The key in plain text (prefer apiKeyEnv: config files get copied around). */
  apiKey: optionalKey(ruledString("must be a string")),
  /** The environment variable that holds the key. */
  apiKeyEnv: optionalKey(nonEmpty("must be an environment variable name")),
  /** openai, vllm, ollama, llamacpp or passthrough (default). */
  preset: optionalKey(Schema.Literals(presetNames).annotate({ message: `must be one of ${presetNames.join(", ")}` })),
  /** Per-field rules laid over the preset's. */
  params: optionalKey(ParamsSchema),
  /** Whether it answers n > 1 itself; default from the preset. */
  supportsN: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  timeouts: optionalKey(Schema.Struct({
    connectMs: optionalKey(ruledNumber("must be an integer >= 1", { integer: true, min: 1 })),
    firstTokenMs: optionalKey(ruledNumber("must be an integer >= 1", { integer: true, min: 1 })),
    totalMs: optionalKey(ruledNumber("must be an integer >= 1", { integer: true, min: 1 }))
  }).annotate({ message: "must be an object {connectMs?, firstTokenMs?, totalMs?}" })),
  retries: optionalKey(Schema.Struct({
    max: optionalKey(ruledNumber("must be an integer from 0 to 10", { integer: true, min: 0, max: 10 })),
    baseDelayMs: optionalKey(ruledNumber("must be an integer >= 1", { integer: true, min: 1 }))
  }).annotate({ message: "must be an object {max?, baseDelayMs?}" })),
  headers: optionalKey(Schema.Record(Schema.String, Schema.String).annotate({ message: "must be an object of header strings" })),
  /** Overrides chat.requestDefaults for this upstream. */
  requestDefaults: optionalKey(RequestDefaultsSchema)
}).annotate({ message: "must be an upstream object with a baseUrl" })
export type UpstreamConfig = typeof UpstreamConfig.Type

const modelNameRule = "must be a model name: letters, digits and . _ : / - (at most 128)"
const ModelName = Schema.String.annotate({ message: modelNameRule }).check(
  Schema.isPattern(/^[A-Za-z0-9._:/-]{1,128}$/, { message: modelNameRule })
)

export const ModelRouteConfig = Schema.Struct({
  name: ModelName,
  aliases: optionalKey(Schema.Array(ModelName).annotate({ message: "must be an array of model names" })),
  targets: Schema.Array(Schema.Struct({
    upstream: nonEmpty("must name an upstream"),
    /** The model name the upstream knows. */
    model: nonEmpty("must be the upstream's model name"),
    weight: optionalKey(ruledNumber("must be a number > 0", { exclusiveMin: 0 }))
  }).annotate({ message: "must be a target {upstream, model, weight?}" })).annotate({ message: "must be a non-empty array of targets" }).check(
    Schema.isMinLength(1, { message: "must be a non-empty array of targets" })
  )
}).annotate({ message: "must be a model {name, aliases?, targets}" })
export type ModelRouteConfig = typeof ModelRouteConfig.Type

const sizeRule = "must be low, medium or high"
const perSize = (rule: string, min: number, max: number) =>
  Schema.Struct({
    low: optionalKey(ruledNumber(rule, { integer: true, min, max })),
    medium: optionalKey(ruledNumber(rule, { integer: true, min, max })),
    high: optionalKey(ruledNumber(rule, { integer: true, min, max }))
  }).annotate({ message: "must be an object {low?, medium?, high?}" })

/** Grounded chat (web_search_options, `:online`, server tools); defaults in core/chat/Grounding.ts. */
export const GroundingConfig = Schema.Struct({
  /** search_context_size of grounded requests that give none (default medium). */
  contextSize: optionalKey(Schema.Literals(["low", "medium", "high"]).annotate({ message: sizeRule })),
  /** Sources given to the model per size (default 3 / 5 / 8). */
  maxResults: optionalKey(perSize("must be an integer from 1 to 20", 1, 20)),
  /** Top pages read whole through webFetch per size (default 0 / 2 / 4; 0: snippets only). */
  fetchTopPages: optionalKey(perSize("must be an integer from 0 to 20", 0, 20)),
  /** Characters of a read page given to the model (default 4000). */
  pageChars: optionalKey(ruledNumber("must be an integer from 200 to 100000", { integer: true, min: 200, max: 100_000 })),
  /** The whole retrieval, search and page reads (default 8000). */
  deadlineMs: optionalKey(ruledNumber("must be an integer from 100 to 120000", { integer: true, min: 100, max: 120_000 })),
  /** Rounds of server tool calls per answer (default 3). */
  maxToolRounds: optionalKey(ruledNumber("must be an integer from 0 to 10", { integer: true, min: 0, max: 10 })),
  /** Offer web_search and web_fetch to the model on every request (default false). */
  serverTools: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  /** Expand the search made from the user's message (query expansion, as webSearch's expand: true; default false). */
  expand: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
}).annotate({ message: "must be an object {contextSize?, maxResults?, fetchTopPages?, pageChars?, deadlineMs?, maxToolRounds?, serverTools?, expand?}" })
export type GroundingConfig = typeof GroundingConfig.Type

const limitRule = (limit: keyof ValidationLimits, min = 1) => {
  const rule = `must be an integer from ${min} to ${maximumValidationLimits[limit]}`
  return optionalKey(ruledNumber(rule, { integer: true, min, max: maximumValidationLimits[limit] }))
}

/**
 * What happens to invalid tool calls and JSON replies, and the bounds on
 * what is validated (defaults and maximums in core/chat/ValidationLimits.ts).
 */
export const ValidationConfig = Schema.Struct({
  /** pass, repair or retry (default retry). */
  policy: optionalKey(Schema.Literals(["pass", "repair", "retry"]).annotate({ message: "must be pass, repair or retry" })),
  retries: optionalKey(ruledNumber("must be an integer from 0 to 10", { integer: true, min: 0, max: 10 })),
  maxArgumentBytes: limitRule("maxArgumentBytes"),
  maxRepairBytes: limitRule("maxRepairBytes"),
  maxSchemaBytes: limitRule("maxSchemaBytes"),
  maxSchemaDepth: limitRule("maxSchemaDepth"),
  maxUniqueItems: limitRule("maxUniqueItems"),
  jobThresholdBytes: limitRule("jobThresholdBytes"),
  jobDeadlineMs: limitRule("jobDeadlineMs", 100)
}).annotate({ message: "must be an object {policy?, retries?, maxArgumentBytes?, maxRepairBytes?, maxSchemaBytes?, maxSchemaDepth?, maxUniqueItems?, jobThresholdBytes?, jobDeadlineMs?}" })
export type ValidationConfig = typeof ValidationConfig.Type

export const ChatConfig = Schema.Struct({
  upstreams: optionalKey(Schema.Record(Schema.String, UpstreamConfig).annotate({ message: "must be an object of named upstreams" })),
  models: optionalKey(Schema.Array(ModelRouteConfig).annotate({ message: "must be an array of models" })),
  /** Default: the first configured model, or periscope-grounded when there is none. */
  defaultModel: optionalKey(ModelName),
  /**
   * Sampling fields the client left out: "spec" (default) sends Periscope's defaults
   * (temperature 0.7, top_p 0.7, top_k 50, frequency_penalty 0.5, max_tokens 512);
   * "upstream" sends only what the client set, so each model server's defaults apply.
   */
  requestDefaults: optionalKey(RequestDefaultsSchema),
  /** Serve the built-in periscope-grounded model (default true). */
  grounded: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  grounding: optionalKey(GroundingConfig),
  validation: optionalKey(ValidationConfig)
}).annotate({ message: "must be an object" }).check(
  Schema.makeFilter((chat) => {
    const upstreams = new Set(Object.keys(chat.upstreams ?? {}))
    const names = new Map<string, string>()
    const models = chat.models ?? []
    for (let m = 0; m < models.length; m++) {
      const model = models[m]!
      for (const [name, path] of [[model.name, ["models", m, "name"]] as const, ...(model.aliases ?? []).map((a, i) => [a, ["models", m, "aliases", i]] as const)]) {
        if (names.has(name)) return { path: [...path], issue: `duplicates the model name ${JSON.stringify(name)} (already at ${names.get(name)})` }
        if (name === "periscope-grounded") return { path: [...path], issue: "is the built-in model's name" }
        names.set(name, path.join("."))
      }
      for (let t = 0; t < model.targets.length; t++) {
        const upstream = model.targets[t]!.upstream
        if (!upstreams.has(upstream)) {
          return { path: ["models", m, "targets", t, "upstream"], issue: `names no upstream in chat.upstreams (${JSON.stringify(upstream)})` }
        }
      }
    }
    for (const [name, upstream] of Object.entries(chat.upstreams ?? {})) {
      if (upstream.apiKey !== undefined && upstream.apiKeyEnv !== undefined) {
        return { path: ["upstreams", name, "apiKey"], issue: "and apiKeyEnv are both set; keep one" }
      }
    }
    if (chat.defaultModel !== undefined && !names.has(chat.defaultModel) && !(chat.defaultModel === "periscope-grounded" && chat.grounded !== false)) {
      return { path: ["defaultModel"], issue: `names no configured model (${JSON.stringify(chat.defaultModel)})` }
    }
    if (models.length === 0 && chat.grounded === false) return { path: ["grounded"], issue: "is false but no models are configured: chat would have no model" }
    return undefined
  })
)
export type ChatConfig = typeof ChatConfig.Type
