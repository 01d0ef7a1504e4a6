/**
 * The chat request as one Schema: wire shape, rules and the defaults the document shows.
 * Decoding only checks it: Effect's schema JIT compiles it to plain code (a Schema decoding
 * default or transformation would keep the whole request interpreted, and slower: see
 * Decode.ts), so toChatRequest applies Periscope's defaults, makes `stop` an array,
 * fills in the messages' roles and the tools' types, and makes the domain request every
 * backend receives.
 */
import { Schema } from "effect"
import { ruledNumber, ruledPattern, ruledString } from "../schema/Rules.ts"
import { DomainName, FRESHNESS_WINDOWS } from "../search/SearchQuery.ts"

export const MAX_TOOLS = 128
export const MAX_STOP = 16
export const MAX_N = 16
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

/** Spec defaults, applied when a field is absent. */
export const chatDefaults = {
  frequency_penalty: 0.5,
  max_tokens: 512,
  n: 1,
  temperature: 0.7,
  top_k: 50,
  top_p: 0.7,
  stream: false
} as const

const optionalKey = Schema.optionalKey

// --- messages ---------------------------------------------------------------

const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const ImagePart = Schema.Struct({
  type: Schema.Literal("image_url"),
  image_url: Schema.Struct({ url: Schema.String, detail: optionalKey(Schema.String) })
})
/** Content parts as OpenAI clients send them; text parts are what models read. */
export const ContentPart = Schema.Union([TextPart, ImagePart]).annotate({
  message: "must be a content part {type:\"text\", text} or {type:\"image_url\", image_url:{url}}"
})
export type ContentPart = typeof ContentPart.Type

const Content = Schema.Union([Schema.String, Schema.Array(ContentPart)]).annotate({
  message: "must be a string or an array of content parts"
})

const toolCallFields = {
  id: ruledString("must be a string"),
  function: Schema.Struct({
    name: ruledString("must be a string"),
    arguments: ruledString("must be a string of JSON text")
  })
}
/** A tool call as answers carry it: `type` always there. */
export const ToolCall = Schema.Struct({ ...toolCallFields, type: Schema.Literal("function") })
export type ToolCall = typeof ToolCall.Type
/** A tool call in a request's message: `type` may be left out (filled in after decoding). */
const WireToolCall = Schema.Struct({ ...toolCallFields, type: optionalKey(Schema.Literal("function")) })

const roleRule = "must be one of system, user, assistant, tool (developer is read as system)"
const Role = Schema.Literals(["system", "user", "assistant", "tool", "developer"]).annotate({ message: roleRule })

// The role's default (user) and developer-as-system are applied after decoding, by
// normalizeMessages: as Schema defaults and transformations they doubled the decoding time
// of every message, and an agent's request carries dozens.
const MessageFields = Schema.Struct({
  role: optionalKey(Role.annotate({ default: "user" })),
  content: optionalKey(Schema.NullOr(Content)),
  name: optionalKey(ruledString("must be a string")),
  tool_calls: optionalKey(Schema.Array(WireToolCall).annotate({ message: "must be an array of tool calls" })),
  tool_call_id: optionalKey(ruledString("must be a string")),
  reasoning_content: optionalKey(Schema.NullOr(Schema.String))
}).annotate({ message: "must be a message object with role and content" })

/** Role-specific rules: what each role must and must not carry. */
const roleRules = Schema.makeFilter<typeof MessageFields.Type>((m) => {
  const hasContent = m.content !== undefined && m.content !== null
  const role = m.role ?? "user"
  switch (role) {
    case "tool":
      if (m.tool_call_id === undefined || m.tool_call_id === "")
        return { path: ["tool_call_id"], issue: "is required for role tool" }
      if (!hasContent) return { path: ["content"], issue: "is required for role tool" }
      return undefined
    case "assistant":
      if (!hasContent && (m.tool_calls === undefined || m.tool_calls.length === 0))
        return { path: ["content"], issue: "is required for role assistant unless tool_calls is given" }
      return undefined
    default:
      if (!hasContent) return { path: ["content"], issue: `is required for role ${role}` }
      if (m.tool_calls !== undefined) return { path: ["tool_calls"], issue: "is only allowed for role assistant" }
      return undefined
  }
})

/** A message as sent: role optional, `developer` allowed. */
export const WireMessage = MessageFields.check(roleRules)
export type WireMessage = typeof WireMessage.Type

/** A message as every backend reads it: a role always, `developer` read as `system`, every tool call typed. */
export type ChatMessage = Omit<WireMessage, "role" | "tool_calls"> & {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly tool_calls?: ReadonlyArray<ToolCall>
}

const typedCalls = (message: WireMessage): boolean => message.tool_calls === undefined || message.tool_calls.every((c) => c.type !== undefined)
const normalMessage = (message: WireMessage): boolean =>
  message.role !== undefined && message.role !== "developer" && typedCalls(message)

/**
 * Messages with their role filled in (user when absent, system for developer) and their tool
 * calls' `type` (function when absent); the same array when none needs it.
 */
export const normalizeMessages = (messages: ReadonlyArray<WireMessage>): ReadonlyArray<ChatMessage> => {
  if (messages.every(normalMessage)) return messages as ReadonlyArray<ChatMessage>
  return messages.map((m): ChatMessage => {
    if (normalMessage(m)) return m as ChatMessage
    const role = m.role === undefined ? "user" : m.role === "developer" ? "system" : m.role
    const { tool_calls, ...rest } = m
    return tool_calls === undefined ? { ...rest, role } : { ...rest, role, tool_calls: tool_calls.map((c) => ({ ...c, type: "function" as const })) }
  })
}

// --- tools ------------------------------------------------------------------

const toolNameRule = "must match ^[A-Za-z0-9_-]{1,64}$ (letters, digits, underscore, hyphen; at most 64)"

export const FunctionDefinition = Schema.Struct({
  name: Schema.String.annotate({ message: toolNameRule }).check(ruledPattern(TOOL_NAME_PATTERN, toolNameRule)),
  description: optionalKey(ruledString("must be a string")),
  parameters: optionalKey(
    Schema.Record(Schema.String, Schema.Unknown).annotate({ message: "must be a JSON Schema object" })
  ),
  strict: optionalKey(Schema.NullOr(Schema.Boolean).annotate({ message: "must be a boolean or null" }))
}).annotate({ message: "must be an object with a name" })

export const ToolDefinition = Schema.Struct({
  type: Schema.Literal("function").annotate({ message: "must be \"function\" (only functions are supported as tools)" }),
  function: FunctionDefinition
}).annotate({ message: "must be a tool object {type:\"function\", function:{name, ...}}" })
export type ToolDefinition = typeof ToolDefinition.Type

/** Tools the gateway runs itself (grounding): offered to the model as functions, never sent back to the client. */
export const SERVER_TOOLS = ["web_search", "web_fetch"] as const
export type ServerTool = typeof SERVER_TOOLS[number]

const toolTypeRule = "must be \"function\", \"web_search\" or \"web_fetch\""
/** A tool as sent: a client function, or a server tool `{type: "web_search"}` / `{type: "web_fetch"}`. */
// `type` left out means "function" (read through toolType), not a Schema default: see the top of this file.
const ToolEntry = Schema.Struct({
  type: optionalKey(Schema.Literals(["function", ...SERVER_TOOLS]).annotate({ message: toolTypeRule, default: "function" })),
  function: optionalKey(FunctionDefinition)
}).annotate({ message: "must be a tool object {type:\"function\", function:{name, ...}} or {type:\"web_search\"} or {type:\"web_fetch\"}" }).check(
  Schema.makeFilter((tool) =>
    toolType(tool) === "function" && tool.function === undefined ? { path: ["function"], issue: "is required for type function" } : undefined
  )
)
type ToolEntry = typeof ToolEntry.Type

const toolType = (tool: { readonly type?: ToolEntry["type"] }): "function" | ServerTool => tool.type ?? "function"
const functionName = (tool: ToolEntry): string | undefined => (toolType(tool) === "function" ? tool.function?.name : undefined)

const Tools = Schema.Array(ToolEntry).annotate({ message: `must be an array of at most ${MAX_TOOLS} tools` }).check(
  Schema.isMaxLength(MAX_TOOLS, { message: `must be an array of at most ${MAX_TOOLS} tools` }),
  Schema.makeFilter((tools: ReadonlyArray<ToolEntry>) => {
    const seen = new Set<string>()
    for (let i = 0; i < tools.length; i++) {
      const name = functionName(tools[i]!)
      if (name === undefined) continue
      if (seen.has(name)) return { path: [i, "function", "name"], issue: `duplicates the tool name ${JSON.stringify(name)}` }
      if ((SERVER_TOOLS as ReadonlyArray<string>).includes(name) && tools.some((t) => toolType(t) === name))
        return { path: [i, "function", "name"], issue: `is the name of the server tool ${name} also requested` }
      seen.add(name)
    }
    return undefined
  })
)

// --- web search options (grounding) -------------------------------------------

export const SEARCH_CONTEXT_SIZES = ["low", "medium", "high"] as const
export type SearchContextSize = typeof SEARCH_CONTEXT_SIZES[number]

const locationText = optionalKey(ruledString("must be a string"))

/** Sources a grounded request may ask for (web_search_options.max_results, the web plugin's max_results). */
export const MAX_GROUNDING_RESULTS = 20
/** Domains a grounded request may keep its search to (OpenAI's bound). */
export const MAX_ALLOWED_DOMAINS = 20

const maxResultsRule = `must be an integer from 1 to ${MAX_GROUNDING_RESULTS}`
const MaxResults = ruledNumber(maxResultsRule, { integer: true, min: 1, max: MAX_GROUNDING_RESULTS })
const allowedRule = `must be an array of at most ${MAX_ALLOWED_DOMAINS} domain names, or null`
const recencyRule = "must be day, week, month or year"

/**
 * OpenAI's `web_search_options`: how much to retrieve and where the user is (passed to the model
 * as context); `filters.allowed_domains` (OpenAI's shape) keeps the search to those sites and
 * their subdomains; `search_recency_filter` (Perplexity's name) to pages of the last day, week,
 * month or year; `max_results`, how many sources the model is given.
 */
export const WebSearchOptions = Schema.Struct({
  search_context_size: optionalKey(Schema.Literals(SEARCH_CONTEXT_SIZES).annotate({ message: "must be low, medium or high" })),
  user_location: optionalKey(Schema.NullOr(Schema.Struct({
    type: Schema.Literal("approximate").annotate({ message: "must be \"approximate\"" }),
    approximate: Schema.Struct({ city: locationText, country: locationText, region: locationText, timezone: locationText })
      .annotate({ message: "must be an object {city?, country?, region?, timezone?}" })
  }).annotate({ message: "must be an object {type:\"approximate\", approximate:{city?, country?, region?, timezone?}}" }))),
  filters: optionalKey(Schema.NullOr(Schema.Struct({
    allowed_domains: optionalKey(Schema.NullOr(
      Schema.Array(DomainName).annotate({ message: allowedRule }).check(Schema.isMaxLength(MAX_ALLOWED_DOMAINS, { message: allowedRule }))
    ))
  }).annotate({ message: "must be an object {allowed_domains} or null" }))),
  search_recency_filter: optionalKey(Schema.Literals(FRESHNESS_WINDOWS).annotate({ message: recencyRule })),
  max_results: optionalKey(MaxResults)
}).annotate({ message: "must be an object {search_context_size?, user_location?, filters?, search_recency_filter?, max_results?}" })
export type WebSearchOptions = typeof WebSearchOptions.Type

const engineRule = "must be native or the name of a search source of this server (letters, digits, _ or -, at most 32)"
const promptRule = "must be a string of at most 4000 characters"
/** OpenRouter's web plugin: grounds the request like web_search_options. */
const WebPlugin = Schema.Struct({
  id: Schema.Literal("web").annotate({ message: "must be \"web\" (the one plugin this server runs)" }),
  max_results: optionalKey(MaxResults),
  search_prompt: optionalKey(ruledString(promptRule).check(Schema.isMaxLength(4000, { message: promptRule }))),
  engine: optionalKey(ruledString(engineRule).check(ruledPattern(/^[A-Za-z0-9_-]{1,32}$/, engineRule)))
}).annotate({ message: "must be a plugin object {id:\"web\", max_results?, search_prompt?, engine?}" })
const pluginsRule = "must be an array of at most 8 plugins"
const Plugins = Schema.Array(WebPlugin).annotate({ message: pluginsRule }).check(Schema.isMaxLength(8, { message: pluginsRule }))

/**
 * What grounding is asked for: the wire's web_search_options (OpenRouter's web plugin folded in),
 * and the domains its search is kept to, which a wire with such a filter sets (the Responses
 * API's filters.allowed_domains, Tavily's include_domains).
 */
export interface GroundingOptions extends WebSearchOptions {
  /** Host names; a source must be on one of them or a subdomain (with filters.allowed_domains: on either list). Absent or empty: any. */
  readonly allowed_domains?: ReadonlyArray<string>
  /** The text that introduces the sources to the model in place of ours (the web plugin's search_prompt). */
  readonly search_prompt?: string
  /** The source to search (the web plugin's engine): a configured source's name; native or absent: every source. */
  readonly engine?: string
}

const ToolChoice = Schema.Union([
  Schema.Literals(["none", "auto", "required"]),
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) })
]).annotate({ message: "must be \"none\", \"auto\", \"required\" or {type:\"function\", function:{name}}" })
export type ToolChoice = typeof ToolChoice.Type

// --- response format --------------------------------------------------------

export const ResponseFormat = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    json_schema: Schema.Struct({
      name: ruledString("must be a string"),
      description: optionalKey(Schema.String),
      schema: optionalKey(Schema.Record(Schema.String, Schema.Unknown).annotate({ message: "must be a JSON Schema object" })),
      strict: optionalKey(Schema.NullOr(Schema.Boolean))
    }).annotate({ message: "must be an object {name, schema, strict?}" })
  })
]).annotate({ message: "must be {type:\"text\"}, {type:\"json_object\"} or {type:\"json_schema\", json_schema:{name, schema}}" })
export type ResponseFormat = typeof ResponseFormat.Type

// --- stop -------------------------------------------------------------------

const stopRule = `must be a non-empty string or an array of at most ${MAX_STOP} non-empty strings`
const StopString = Schema.String.annotate({ message: stopRule }).check(Schema.isMinLength(1, { message: stopRule }))
/** `stop` as sent: a string, an array or null (stopSequences makes it an array). */
const Stop = Schema.Union([StopString, Schema.Array(StopString).check(Schema.isMaxLength(MAX_STOP, { message: stopRule })), Schema.Null])
  .annotate({ message: stopRule })

/** The stop sequences of a request's `stop`: none for null or absent, one for a string. */
export const stopSequences = (stop: typeof Stop.Type | undefined): ReadonlyArray<string> =>
  stop === undefined || stop === null ? [] : typeof stop === "string" ? [stop] : stop

// --- the request ------------------------------------------------------------

/** An optional key whose default, shown as `default` in the document, toChatRequest applies when it is absent. */
const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) => optionalKey(schema.annotate({ default: value }))

export const ChatCompletionRequest = Schema.Struct({
  messages: Schema.Array(WireMessage).annotate({ message: "must be a non-empty array of messages" }).check(
    Schema.isMinLength(1, { message: "must be a non-empty array of messages" })
  ),
  /** Absent means the configured default model. */
  model: optionalKey(Schema.String.annotate({ message: "must be a model name (string)" }).check(
    Schema.isMinLength(1, { message: "must be a model name (string)" })
  )),
  frequency_penalty: withDefault(ruledNumber("must be a number from -2 to 2", { min: -2, max: 2 }), chatDefaults.frequency_penalty),
  presence_penalty: optionalKey(ruledNumber("must be a number from -2 to 2", { min: -2, max: 2 })),
  /** Absent (and max_completion_tokens absent too) means chatDefaults.max_tokens. */
  max_tokens: optionalKey(ruledNumber("must be an integer with 1 < x < 8192", { integer: true, exclusiveMin: 1, exclusiveMax: 8192 }).annotate({ default: chatDefaults.max_tokens })),
  /** Newer OpenAI clients send this name; it obeys the same rule as max_tokens. */
  max_completion_tokens: optionalKey(ruledNumber("must be an integer with 1 < x < 8192", { integer: true, exclusiveMin: 1, exclusiveMax: 8192 })),
  n: withDefault(ruledNumber(`must be an integer from 1 to ${MAX_N}`, { integer: true, min: 1, max: MAX_N }), chatDefaults.n),
  response_format: optionalKey(ResponseFormat),
  stop: withDefault(Stop, null),
  stream: withDefault(Schema.Boolean.annotate({ message: "must be a boolean" }), chatDefaults.stream),
  stream_options: optionalKey(Schema.NullOr(Schema.Struct({
    include_usage: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
  }).annotate({ message: "must be an object {include_usage?: boolean}" }))),
  temperature: withDefault(ruledNumber("must be a number from 0 to 2", { min: 0, max: 2 }), chatDefaults.temperature),
  top_p: withDefault(ruledNumber("must be a number with 0 < x <= 1", { exclusiveMin: 0, max: 1 }), chatDefaults.top_p),
  top_k: withDefault(ruledNumber("must be an integer >= 1", { integer: true, min: 1 }), chatDefaults.top_k),
  tools: optionalKey(Tools),
  tool_choice: optionalKey(ToolChoice),
  parallel_tool_calls: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  seed: optionalKey(ruledNumber("must be an integer", { integer: true })),
  user: optionalKey(ruledString("must be a string")),
  web_search_options: optionalKey(WebSearchOptions),
  /** OpenRouter's plugins: `{id: "web"}` grounds the request as web_search_options does. */
  plugins: optionalKey(Plugins)
}).annotate({ identifier: "ChatCompletionRequest", message: "must be a JSON object with messages and model" }).check(
  Schema.makeFilter((r) => {
    const choice = r.tool_choice
    if (choice !== undefined && typeof choice === "object") {
      const names = r.tools?.map(functionName) ?? []
      if (!names.includes(choice.function.name))
        return { path: ["tool_choice", "function", "name"], issue: `names no tool in tools (${JSON.stringify(choice.function.name)})` }
    }
    if (choice === "required" && (r.tools === undefined || !r.tools.some((t) => toolType(t) === "function")))
      return { path: ["tool_choice"], issue: "is \"required\" but no tools are given" }
    return undefined
  }, { identifier: "ChatCompletionRequest" }) // the name of the checked schema: a component of /openapi.json
)
export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

/** A numbered source given to the model; its number is what the answer cites as `[k]`. */
export interface GroundingSource {
  readonly number: number
  readonly title: string
  readonly url: string
  readonly snippet: string
  readonly date: string | null
  /** What the model reads: the fetched page's text when it was fetched, else the snippet. */
  readonly text: string
}

/** What grounding hands a model beside the messages (the built-in grounded model reads it). */
export interface GroundingInput {
  readonly query: string
  readonly sources: ReadonlyArray<GroundingSource>
}

/**
 * The request every backend receives: the decoded body with the model
 * resolved, one `max_tokens` (max_completion_tokens folded in), and only the
 * client's function tools in `tools` (server tools are in `serverTools`).
 */
export interface ChatRequest
  extends Omit<ChatCompletionRequest, "messages" | "model" | "max_tokens" | "max_completion_tokens" | "tools" | DefaultedField | "stream" | "web_search_options" | "plugins">
{
  readonly messages: ReadonlyArray<ChatMessage>
  readonly model: string
  readonly max_tokens: number
  readonly frequency_penalty: number
  readonly n: number
  readonly stop: ReadonlyArray<string>
  readonly stream: boolean
  readonly temperature: number
  readonly top_k: number
  readonly top_p: number
  readonly tools?: ReadonlyArray<ToolDefinition>
  readonly web_search_options?: GroundingOptions
  /** Server tools asked for in `tools` ({type: "web_search"} and {type: "web_fetch"}). */
  readonly serverTools?: ReadonlyArray<ServerTool>
  /** Set by the gateway when the request is grounded: the sources the model was given. */
  readonly grounding?: GroundingInput
  /**
   * The fields holding Periscope's default because the client left them out (known
   * when the request was decoded from a body); upstreams set to requestDefaults
   * "upstream" are not sent them.
   */
  readonly defaulted?: ReadonlyArray<DefaultedField>
}

/** Fields the decoder fills with Periscope's default when absent (max_tokens: when max_completion_tokens is absent too). */
export const DefaultedFields = ["frequency_penalty", "max_tokens", "n", "stop", "temperature", "top_k", "top_p"] as const
export type DefaultedField = typeof DefaultedFields[number]

/** Which defaulted fields the body as sent leaves out (absent or null counts as left out). */
export const defaultedFieldsOf = (body: unknown): ReadonlyArray<DefaultedField> => {
  const sent = typeof body === "object" && body !== null ? body as Record<string, unknown> : {}
  const given = (key: string) => sent[key] !== undefined && sent[key] !== null
  return DefaultedFields.filter((field) => field === "max_tokens" ? !given("max_tokens") && !given("max_completion_tokens") : !given(field))
}

/** `sent`: the body as the client sent it (before decoding), to tell Periscope's defaults from the client's values. */
export const toChatRequest = (body: ChatCompletionRequest, model: string, sent?: unknown): ChatRequest => {
  const { max_completion_tokens, max_tokens, model: _model, tools, messages, stop, plugins, web_search_options, ...rest } = body
  const grounding = groundingOptionsOf(web_search_options, plugins)
  const request: ChatRequest = {
    ...rest,
    ...(grounding === undefined ? {} : { web_search_options: grounding }),
    messages: normalizeMessages(messages),
    model,
    // Periscope's defaults for what the client left out (defaultedFieldsOf says which those were).
    frequency_penalty: rest.frequency_penalty ?? chatDefaults.frequency_penalty,
    max_tokens: max_tokens ?? max_completion_tokens ?? chatDefaults.max_tokens,
    n: rest.n ?? chatDefaults.n,
    stop: stopSequences(stop),
    stream: rest.stream ?? chatDefaults.stream,
    temperature: rest.temperature ?? chatDefaults.temperature,
    top_k: rest.top_k ?? chatDefaults.top_k,
    top_p: rest.top_p ?? chatDefaults.top_p,
    ...(sent === undefined ? {} : { defaulted: defaultedFieldsOf(sent) })
  }
  if (tools === undefined) return request
  const functions: Array<ToolDefinition> = []
  const server: Array<ServerTool> = []
  for (const tool of tools) {
    const type = toolType(tool)
    if (type === "function") functions.push({ type: "function", function: tool.function! })
    else if (!server.includes(type)) server.push(type)
  }
  return { ...request, ...(functions.length > 0 || server.length === 0 ? { tools: functions } : {}), ...(server.length > 0 ? { serverTools: server } : {}) }
}

/** web_search_options with OpenRouter's web plugin folded in (its max_results where the options give none); undefined when neither asks to ground. */
const groundingOptionsOf = (
  options: WebSearchOptions | undefined,
  plugins: ReadonlyArray<typeof WebPlugin.Type> | undefined
): GroundingOptions | undefined => {
  const web = plugins?.find((p) => p.id === "web")
  if (web === undefined) return options
  return {
    ...options,
    ...(options?.max_results === undefined && web.max_results !== undefined ? { max_results: web.max_results } : {}),
    ...(web.search_prompt === undefined ? {} : { search_prompt: web.search_prompt }),
    ...(web.engine === undefined ? {} : { engine: web.engine })
  }
}

/** The text of a message's content: parts joined, images left out. */
export const contentText = (content: ChatMessage["content"]): string => {
  if (content === undefined || content === null) return ""
  if (typeof content === "string") return content
  let out = ""
  for (const part of content) if (part.type === "text") out += part.text
  return out
}
