/**
 * The chat request (spec 2.5) as one Schema: wire shape, rules and defaults.
 * Decoding it yields the request with every default applied and `stop`
 * normalised to an array; toChatRequest then fills in the messages' roles and
 * makes the domain request every backend receives.
 */
import { Effect, Schema, SchemaGetter } from "effect"
import { documented, ruledNumber, ruledPattern, ruledString } from "../schema/Rules.ts"

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

export const ToolCall = Schema.Struct({
  id: ruledString("must be a string"),
  type: Schema.Literal("function").pipe(Schema.withDecodingDefaultKey(Effect.succeed("function" as const))),
  function: Schema.Struct({
    name: ruledString("must be a string"),
    arguments: ruledString("must be a string of JSON text")
  })
})
export type ToolCall = typeof ToolCall.Type

const roleRule = "must be one of system, user, assistant, tool (developer is read as system)"
const Role = Schema.Literals(["system", "user", "assistant", "tool", "developer"]).annotate({ message: roleRule })

// The role's default (user) and developer-as-system are applied after decoding, by
// normalizeMessages: as Schema defaults and transformations they doubled the decoding time
// of every message, and an agent's request carries dozens.
const MessageFields = Schema.Struct({
  role: optionalKey(Role.annotate({ default: "user" })),
  content: optionalKey(Schema.NullOr(Content)),
  name: optionalKey(ruledString("must be a string")),
  tool_calls: optionalKey(Schema.Array(ToolCall).annotate({ message: "must be an array of tool calls" })),
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

/** A message as every backend reads it: a role always, `developer` read as `system`. */
export type ChatMessage = Omit<WireMessage, "role"> & { readonly role: "system" | "user" | "assistant" | "tool" }

const normalRole = (message: WireMessage): boolean => message.role !== undefined && message.role !== "developer"

/** Messages with their role filled in (user when absent, system for developer); the same array when none needs it. */
export const normalizeMessages = (messages: ReadonlyArray<WireMessage>): ReadonlyArray<ChatMessage> => {
  if (messages.every(normalRole)) return messages as ReadonlyArray<ChatMessage>
  return messages.map((m): ChatMessage => normalRole(m) ? m as ChatMessage : { ...m, role: m.role === "developer" ? "system" : "user" })
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
  type: Schema.Literal("function").annotate({ message: "must be \"function\" (only functions are supported as tools)" }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("function" as const))
  ),
  function: FunctionDefinition
}).annotate({ message: "must be a tool object {type:\"function\", function:{name, ...}}" })
export type ToolDefinition = typeof ToolDefinition.Type

/** Tools the gateway runs itself (grounding): offered to the model as functions, never sent back to the client. */
export const SERVER_TOOLS = ["web_search", "web_fetch"] as const
export type ServerTool = typeof SERVER_TOOLS[number]

const toolTypeRule = "must be \"function\", \"web_search\" or \"web_fetch\""
/** A tool as sent: a client function, or a server tool `{type: "web_search"}` / `{type: "web_fetch"}`. */
const ToolEntry = Schema.Struct({
  type: Schema.Literals(["function", ...SERVER_TOOLS]).annotate({ message: toolTypeRule }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("function" as const))
  ),
  function: optionalKey(FunctionDefinition)
}).annotate({ message: "must be a tool object {type:\"function\", function:{name, ...}} or {type:\"web_search\"} or {type:\"web_fetch\"}" }).check(
  Schema.makeFilter((tool) =>
    tool.type === "function" && tool.function === undefined ? { path: ["function"], issue: "is required for type function" } : undefined
  )
)
type ToolEntry = typeof ToolEntry.Type

const functionName = (tool: ToolEntry): string | undefined => (tool.type === "function" ? tool.function?.name : undefined)

const Tools = Schema.Array(ToolEntry).annotate({ message: `must be an array of at most ${MAX_TOOLS} tools` }).check(
  Schema.isMaxLength(MAX_TOOLS, { message: `must be an array of at most ${MAX_TOOLS} tools` }),
  Schema.makeFilter((tools: ReadonlyArray<ToolEntry>) => {
    const seen = new Set<string>()
    for (let i = 0; i < tools.length; i++) {
      const name = functionName(tools[i]!)
      if (name === undefined) continue
      if (seen.has(name)) return { path: [i, "function", "name"], issue: `duplicates the tool name ${JSON.stringify(name)}` }
      if ((SERVER_TOOLS as ReadonlyArray<string>).includes(name) && tools.some((t) => t.type === name))
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
/** OpenAI's `web_search_options`: how much to retrieve, and where the user is (passed to the model as context). */
export const WebSearchOptions = Schema.Struct({
  search_context_size: optionalKey(Schema.Literals(SEARCH_CONTEXT_SIZES).annotate({ message: "must be low, medium or high" })),
  user_location: optionalKey(Schema.NullOr(Schema.Struct({
    type: Schema.Literal("approximate").annotate({ message: "must be \"approximate\"" }),
    approximate: Schema.Struct({ city: locationText, country: locationText, region: locationText, timezone: locationText })
      .annotate({ message: "must be an object {city?, country?, region?, timezone?}" })
  }).annotate({ message: "must be an object {type:\"approximate\", approximate:{city?, country?, region?, timezone?}}" })))
}).annotate({ message: "must be an object {search_context_size?, user_location?}" })
export type WebSearchOptions = typeof WebSearchOptions.Type

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
/** `stop` as sent (string, array or null), decoded to an array. */
// The count is checked on the decoded array; `documented` shows it on the array as sent.
const Stop = Schema.Union([StopString, Schema.Array(StopString).check(documented({ maxItems: MAX_STOP })), Schema.Null]).annotate({ message: stopRule }).pipe(
  Schema.decodeTo(
    Schema.Array(Schema.String).check(Schema.isMaxLength(MAX_STOP, { message: stopRule })),
    {
      decode: SchemaGetter.transform((s: string | ReadonlyArray<string> | null) =>
        s === null ? [] : typeof s === "string" ? [s] : s
      ),
      encode: SchemaGetter.transform((s: ReadonlyArray<string>) => s)
    }
  )
)

// --- the request ------------------------------------------------------------

/** The value applied when the key is absent, also shown as `default` in the document. */
const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  // annotateEncoded gives back the same schema (its Rebuild); the cast only restores the generic's name for it.
  (Schema.annotateEncoded<S>({ default: value })(schema) as S).pipe(Schema.withDecodingDefaultKey(Effect.succeed(value)))

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
  web_search_options: optionalKey(WebSearchOptions)
}).annotate({ identifier: "ChatCompletionRequest", message: "must be a JSON object with messages and model" }).check(
  Schema.makeFilter((r) => {
    const choice = r.tool_choice
    if (choice !== undefined && typeof choice === "object") {
      const names = r.tools?.map(functionName) ?? []
      if (!names.includes(choice.function.name))
        return { path: ["tool_choice", "function", "name"], issue: `names no tool in tools (${JSON.stringify(choice.function.name)})` }
    }
    if (choice === "required" && (r.tools === undefined || !r.tools.some((t) => t.type === "function")))
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
export interface ChatRequest extends Omit<ChatCompletionRequest, "messages" | "model" | "max_tokens" | "max_completion_tokens" | "tools"> {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly model: string
  readonly max_tokens: number
  readonly tools?: ReadonlyArray<ToolDefinition>
  /** Server tools asked for in `tools` ({type: "web_search"} and {type: "web_fetch"}). */
  readonly serverTools?: ReadonlyArray<ServerTool>
  /** Set by the gateway when the request is grounded: the sources the model was given. */
  readonly grounding?: GroundingInput
  /**
   * The fields holding a spec default because the client left them out (known
   * when the request was decoded from a body); upstreams set to requestDefaults
   * "upstream" are not sent them.
   */
  readonly defaulted?: ReadonlyArray<DefaultedField>
}

/** Fields the decoder fills with a spec default when absent (max_tokens: when max_completion_tokens is absent too). */
export const DefaultedFields = ["frequency_penalty", "max_tokens", "n", "stop", "temperature", "top_k", "top_p"] as const
export type DefaultedField = typeof DefaultedFields[number]

/** Which defaulted fields the body as sent leaves out (absent or null counts as left out). */
export const defaultedFieldsOf = (body: unknown): ReadonlyArray<DefaultedField> => {
  const sent = typeof body === "object" && body !== null ? body as Record<string, unknown> : {}
  const given = (key: string) => sent[key] !== undefined && sent[key] !== null
  return DefaultedFields.filter((field) => field === "max_tokens" ? !given("max_tokens") && !given("max_completion_tokens") : !given(field))
}

/** `sent`: the body as the client sent it (before decoding), to tell the spec's defaults from the client's values. */
export const toChatRequest = (body: ChatCompletionRequest, model: string, sent?: unknown): ChatRequest => {
  const { max_completion_tokens, max_tokens, model: _model, tools, messages, ...rest } = body
  const request: ChatRequest = {
    ...rest,
    messages: normalizeMessages(messages),
    model,
    max_tokens: max_tokens ?? max_completion_tokens ?? chatDefaults.max_tokens,
    ...(sent === undefined ? {} : { defaulted: defaultedFieldsOf(sent) })
  }
  if (tools === undefined) return request
  const functions: Array<ToolDefinition> = []
  const server: Array<ServerTool> = []
  for (const tool of tools) {
    if (tool.type === "function") functions.push({ type: "function", function: tool.function! })
    else if (!server.includes(tool.type)) server.push(tool.type)
  }
  return { ...request, ...(functions.length > 0 || server.length === 0 ? { tools: functions } : {}), ...(server.length > 0 ? { serverTools: server } : {}) }
}

/** The text of a message's content: parts joined, images left out. */
export const contentText = (content: ChatMessage["content"]): string => {
  if (content === undefined || content === null) return ""
  if (typeof content === "string") return content
  let out = ""
  for (const part of content) if (part.type === "text") out += part.text
  return out
}
