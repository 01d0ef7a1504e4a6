/**
 * The request of POST /v1/responses as this server reads it: the fields of OpenAI's
 * `responses.create` (node_modules/openai/resources/responses/responses.d.ts), each with its
 * rule. As OpenAI's API does, a name it does not know is refused (`unknown_parameter`), and so
 * is a field this server cannot honour (`unsupported_parameter`: stored responses, background
 * runs, prompt templates); fields that change nothing here (metadata, prompt caching, service
 * tier) are accepted. Objects told apart by `type` (input items, tools, text formats, a tool
 * choice) are decoded by their own member (TypedDecoder), so an error names the broken field.
 */
import { Result, Schema } from "effect"
import { MAX_TOOLS, SEARCH_CONTEXT_SIZES, TOOL_NAME_PATTERN } from "../../chat/ChatRequest.ts"
import { invalid, type InvalidInput, nearestKey } from "../../schema/InvalidInput.ts"
import { ruledNumber, ruledPattern, ruledString } from "../../schema/Rules.ts"
import { ApiError } from "../ApiError.ts"
import { fromInvalidInput } from "../DomainErrors.ts"
import { parseBody } from "../JsonBody.ts"
import { type InputItem, inputItem, InputItemDoc } from "./InputItems.ts"
import { decodeEach, type PathDecoder, pathDecoder, typedDecoder } from "./TypedDecoder.ts"

const { optionalKey } = Schema

/** An optional field that may be null, as OpenAI's clients send a field they leave unset. */
const nullable = <S extends Schema.Top>(schema: S, rule: string) => optionalKey(Schema.NullOr(schema).annotate({ message: rule }))

const aString = ruledString("must be a string")

// --- tools --------------------------------------------------------------------

export const MAX_ALLOWED_DOMAINS = 20
const NAME_RULE = "must match ^[A-Za-z0-9_-]{1,64}$ (letters, digits, underscore, hyphen; at most 64)"
const ToolName = Schema.String.annotate({ message: NAME_RULE }).check(ruledPattern(TOOL_NAME_PATTERN, NAME_RULE))
const JsonSchemaObject = Schema.Record(Schema.String, Schema.Unknown).annotate({ message: "must be a JSON Schema object" })

export const FunctionTool = Schema.Struct({
  type: Schema.Literal("function"),
  name: ToolName,
  description: nullable(aString, "must be a string or null"),
  parameters: nullable(JsonSchemaObject, "must be a JSON Schema object or null"),
  strict: nullable(Schema.Boolean, "must be a boolean or null"),
  // Declared by OpenAI's SDK for its own tool search and programmatic calls: accepted, not used.
  allowed_callers: optionalKey(Schema.Unknown),
  defer_loading: optionalKey(Schema.Unknown),
  output_schema: optionalKey(Schema.Unknown)
})
export type FunctionTool = typeof FunctionTool.Type

const DOMAIN_RULE = "must be a domain name such as example.com"
const Domain = Schema.String.annotate({ message: DOMAIN_RULE }).check(
  ruledPattern(/^(?:https?:\/\/)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+\/?$/, DOMAIN_RULE)
)
const DOMAINS_RULE = `must be an array of at most ${MAX_ALLOWED_DOMAINS} domain names, or null`
const locationText = nullable(aString, "must be a string or null")

export const WEB_SEARCH_TYPES = ["web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"] as const
export const WebSearchTool = Schema.Struct({
  type: Schema.Literals(WEB_SEARCH_TYPES),
  search_context_size: optionalKey(Schema.Literals(SEARCH_CONTEXT_SIZES).annotate({ message: "must be low, medium or high" })),
  user_location: nullable(
    Schema.Struct({ type: optionalKey(Schema.Literal("approximate")), city: locationText, country: locationText, region: locationText, timezone: locationText }),
    "must be an object {type: \"approximate\", city?, country?, region?, timezone?} or null"
  ),
  filters: nullable(
    Schema.Struct({
      allowed_domains: nullable(Schema.Array(Domain).check(Schema.isMaxLength(MAX_ALLOWED_DOMAINS, { message: DOMAINS_RULE })), DOMAINS_RULE)
    }),
    "must be an object {allowed_domains} or null"
  ),
  /** false (cached pages only) is refused: see ResponsesToChat. */
  external_web_access: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  search_content_types: optionalKey(Schema.Array(Schema.Literals(["text", "image"])).annotate({ message: "must be an array of text, image" }))
})
export type WebSearchTool = typeof WebSearchTool.Type

export type Tool = FunctionTool | WebSearchTool

const NOT_A_TOOL_HERE = (type: string) => `${type} tools are not supported here (function and web_search are)`
const webSearchTool = pathDecoder(WebSearchTool, { closed: true })

const tool: PathDecoder<Tool> = typedDecoder<Tool>({
  members: {
    function: pathDecoder(FunctionTool, { closed: true }),
    ...Object.fromEntries(WEB_SEARCH_TYPES.map((type) => [type, webSearchTool]))
  },
  refused: Object.fromEntries(
    ["file_search", "computer", "computer_use", "computer_use_preview", "mcp", "code_interpreter", "image_generation", "local_shell", "shell", "custom",
      "namespace", "tool_search", "apply_patch", "programmatic_tool_calling"].map((type) => [type, NOT_A_TOOL_HERE(type)])
  ),
  rule: "must be a tool object {type: \"function\", name, parameters} or {type: \"web_search\"}"
})

// --- tool choice ----------------------------------------------------------------

const ToolChoiceMode = Schema.Literals(["none", "auto", "required"])
export const FunctionChoice = Schema.Struct({ type: Schema.Literal("function"), name: aString })
export const AllowedToolsChoice = Schema.Struct({
  type: Schema.Literal("allowed_tools"),
  mode: Schema.Literals(["auto", "required"]).annotate({ message: "must be auto or required" }),
  tools: Schema.Array(Schema.Record(Schema.String, Schema.Unknown)).annotate({ message: "must be an array of tool objects {type, name?}" })
})
/** `{type: "web_search_preview"}`: a built-in tool the answer must use; here, the search is made before the answer. */
export const WebSearchChoice = Schema.Struct({ type: Schema.Literals(["web_search_preview", "web_search_preview_2025_03_11", "web_search"]) })

export type ToolChoice = typeof ToolChoiceMode.Type | typeof FunctionChoice.Type | typeof AllowedToolsChoice.Type | typeof WebSearchChoice.Type

const TOOL_CHOICE_RULE = "must be \"none\", \"auto\", \"required\", {type: \"function\", name}, {type: \"allowed_tools\", mode, tools} or {type: \"web_search_preview\"}"
const webSearchChoice = pathDecoder(WebSearchChoice, { closed: true })
const toolChoiceObject = typedDecoder<ToolChoice>({
  members: {
    function: pathDecoder(FunctionChoice, { closed: true }),
    allowed_tools: pathDecoder(AllowedToolsChoice, { closed: true }),
    web_search_preview: webSearchChoice,
    web_search_preview_2025_03_11: webSearchChoice,
    web_search: webSearchChoice
  },
  refused: Object.fromEntries(
    ["file_search", "computer", "computer_use", "computer_use_preview", "mcp", "code_interpreter", "image_generation", "custom", "shell", "apply_patch",
      "programmatic_tool_calling"].map((type) => [type, NOT_A_TOOL_HERE(type)])
  ),
  rule: TOOL_CHOICE_RULE
})
const toolChoice: PathDecoder<ToolChoice> = (input, path) =>
  typeof input === "string"
    ? (ToolChoiceMode.literals as ReadonlyArray<string>).includes(input)
      ? Result.succeed(input as ToolChoice)
      : Result.fail(invalid("request body", path, `${TOOL_CHOICE_RULE}, got ${JSON.stringify(input.slice(0, 40))} (a string)`))
    : toolChoiceObject(input, path)

// --- text format ------------------------------------------------------------------

export const TextFormat = Schema.Struct({ type: Schema.Literal("text") })
export const JsonObjectFormat = Schema.Struct({ type: Schema.Literal("json_object") })
export const JsonSchemaFormat = Schema.Struct({
  type: Schema.Literal("json_schema"),
  name: ToolName,
  schema: JsonSchemaObject,
  description: optionalKey(aString),
  strict: nullable(Schema.Boolean, "must be a boolean or null")
})
export type Format = typeof TextFormat.Type | typeof JsonObjectFormat.Type | typeof JsonSchemaFormat.Type

const format = typedDecoder<Format>({
  members: {
    text: pathDecoder(TextFormat, { closed: true }),
    json_object: pathDecoder(JsonObjectFormat, { closed: true }),
    json_schema: pathDecoder(JsonSchemaFormat, { closed: true })
  },
  rule: "must be {type: \"text\"}, {type: \"json_object\"} or {type: \"json_schema\", name, schema}"
})

const verbosity = nullable(Schema.Literals(["low", "medium", "high"]), "must be low, medium, high or null")
const TextConfigShape = Schema.Struct({ format: optionalKey(Schema.Unknown), verbosity }).annotate({ message: "must be an object {format?, verbosity?} or null" })
export interface TextConfig {
  readonly format?: Format
  readonly verbosity?: "low" | "medium" | "high" | null
}
const textConfigShape = pathDecoder(TextConfigShape, { closed: true })
const textConfig: PathDecoder<TextConfig> = (input, path) => {
  const shape = textConfigShape(input, path)
  if (Result.isFailure(shape) || shape.success.format === undefined) return shape as Result.Result<TextConfig, InvalidInput>
  return Result.map(format(shape.success.format, `${path}.format`), (decoded) => ({ ...shape.success, format: decoded }))
}

// --- the request ------------------------------------------------------------------

/** OpenAI's documented `include` values. */
const INCLUDABLE = [
  "file_search_call.results", "web_search_call.results", "web_search_call.action.sources", "message.input_image.image_url",
  "computer_call_output.output.image_url", "code_interpreter_call.outputs", "reasoning.encrypted_content", "message.output_text.logprobs"
] as const

const METADATA_RULE = "must be an object of at most 16 string values (keys of at most 64 characters, values of at most 512)"
const Metadata = Schema.Record(
  Schema.String.check(Schema.isMaxLength(64, { message: METADATA_RULE })),
  Schema.String.annotate({ message: METADATA_RULE }).check(Schema.isMaxLength(512, { message: METADATA_RULE }))
).annotate({ message: METADATA_RULE }).check(Schema.makeFilter((m) => Object.keys(m).length <= 16 ? undefined : METADATA_RULE))

const INPUT_RULE = "must be a string or a non-empty array of input items"
const MAX_OUTPUT_RULE = "must be an integer from 16 to 8191, or null"

/** The fields whose rules the decoder and the document share (input, tools, tool_choice and text are apart: see below). */
const commonFields = {
  /** Absent means the configured default model (GET /v1/models lists them). */
  model: optionalKey(Schema.String.annotate({ message: "must be a model name (string)" }).check(Schema.isMinLength(1, { message: "must be a model name (string)" }))),
  instructions: nullable(aString, "must be a string or null"),
  parallel_tool_calls: nullable(Schema.Boolean, "must be a boolean or null"),
  max_output_tokens: nullable(ruledNumber(MAX_OUTPUT_RULE, { integer: true, min: 16, max: 8191 }), MAX_OUTPUT_RULE),
  /** Built-in tool calls (the web search): 0 makes none. */
  max_tool_calls: nullable(ruledNumber("must be an integer >= 0, or null", { integer: true, min: 0 }), "must be an integer >= 0, or null"),
  temperature: nullable(ruledNumber("must be a number from 0 to 2, or null", { min: 0, max: 2 }), "must be a number from 0 to 2, or null"),
  top_p: nullable(ruledNumber("must be a number with 0 < x <= 1, or null", { exclusiveMin: 0, max: 1 }), "must be a number with 0 < x <= 1, or null"),
  stream: nullable(Schema.Boolean, "must be a boolean or null"),
  stream_options: nullable(Schema.Struct({ include_obfuscation: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })) }), "must be an object {include_obfuscation?} or null"),
  /** Nothing is stored here, whatever is asked: the response says store false, and a later previous_response_id is refused. */
  store: nullable(Schema.Boolean, "must be a boolean or null"),
  previous_response_id: nullable(aString, "must be a string or null"),
  background: nullable(Schema.Boolean, "must be a boolean or null"),
  conversation: optionalKey(Schema.Unknown),
  prompt: optionalKey(Schema.Unknown),
  context_management: optionalKey(Schema.Unknown),
  moderation: optionalKey(Schema.Unknown),
  include: nullable(Schema.Array(Schema.Literals(INCLUDABLE).annotate({ message: `must be one of ${INCLUDABLE.join(", ")}` })), "must be an array of includable names, or null"),
  metadata: nullable(Metadata, `${METADATA_RULE.replace(/^must be/, "must be null or")}`),
  top_logprobs: nullable(ruledNumber("must be an integer from 0 to 20, or null", { integer: true, min: 0, max: 20 }), "must be an integer from 0 to 20, or null"),
  reasoning: nullable(Schema.Record(Schema.String, Schema.Unknown), "must be an object or null"),
  truncation: nullable(Schema.Literals(["auto", "disabled"]), "must be auto, disabled or null"),
  service_tier: nullable(aString, "must be a string or null"),
  user: optionalKey(aString),
  safety_identifier: nullable(aString, "must be a string or null"),
  prompt_cache_key: nullable(aString, "must be a string or null"),
  prompt_cache_retention: nullable(Schema.Literals(["in_memory", "24h"]), "must be in_memory, 24h or null"),
  prompt_cache_options: optionalKey(Schema.Unknown),
  access_programs: optionalKey(Schema.Unknown),
  image: optionalKey(Schema.Unknown)
}

const TOOLS_RULE = `must be an array of at most ${MAX_TOOLS} tools`

/** The body as first decoded: the typed objects are read afterwards, one by one. */
const RequestShape = Schema.Struct({
  ...commonFields,
  input: optionalKey(Schema.Union([aString, Schema.Array(Schema.Unknown).check(Schema.isMinLength(1, { message: INPUT_RULE }))]).annotate({ message: INPUT_RULE })),
  tools: nullable(Schema.Array(Schema.Unknown).check(Schema.isMaxLength(MAX_TOOLS, { message: TOOLS_RULE })), TOOLS_RULE),
  tool_choice: nullable(Schema.Unknown, TOOL_CHOICE_RULE),
  text: nullable(Schema.Unknown, "must be an object {format?, verbosity?} or null")
}).annotate({ message: "must be a JSON object with input and model" })
type RequestShape = typeof RequestShape.Type

/** The request as /openapi.json shows it (the decoder reads the same rules: RequestShape and the typed decoders). */
export const ResponseCreateRequest = Schema.Struct({
  ...commonFields,
  input: optionalKey(Schema.Union([Schema.String, Schema.Array(InputItemDoc).check(Schema.isMinLength(1))])),
  tools: optionalKey(Schema.NullOr(Schema.Array(Schema.Union([FunctionTool, WebSearchTool])).check(Schema.isMaxLength(MAX_TOOLS)))),
  tool_choice: optionalKey(Schema.NullOr(Schema.Union([ToolChoiceMode, FunctionChoice, AllowedToolsChoice, WebSearchChoice]))),
  text: optionalKey(Schema.NullOr(Schema.Struct({ format: optionalKey(Schema.Union([TextFormat, JsonObjectFormat, JsonSchemaFormat])), verbosity })))
}).annotate({ identifier: "ResponseCreateRequest" })

const KNOWN_FIELDS: ReadonlyArray<string> = Object.keys(ResponseCreateRequest.fields)
const KNOWN = new Set(KNOWN_FIELDS)

/** A decoded request: the plain fields, and the typed objects each decoded by its member. */
export interface ResponsesRequest extends Omit<RequestShape, "input" | "tools" | "tool_choice" | "text"> {
  readonly input: string | ReadonlyArray<InputItem>
  readonly tools: ReadonlyArray<Tool>
  readonly tool_choice?: ToolChoice
  readonly text?: TextConfig
}

const refusal = (param: string, message: string, code: string): ApiError =>
  new ApiError({ kind: "invalid_request", message: `${param}: ${message}`, param, code })

const UNKNOWN_KEY = "is not a known key"
/** How the schema names a key no member of a union declares. */
const EXCESS_KEY = "must be no excess property"

/** A 400 for a body that broke a rule; an unknown key is `unknown_parameter`, as OpenAI's API says. */
const invalidBody = (error: InvalidInput): ApiError => {
  if (!error.rule.startsWith(UNKNOWN_KEY) && error.rule !== EXCESS_KEY) return fromInvalidInput(error)
  const suggestion = error.rule.startsWith(UNKNOWN_KEY) ? error.rule.slice(UNKNOWN_KEY.length) : ""
  return refusal(error.path, `is not a known parameter${suggestion}`, "unknown_parameter")
}

/** The first top-level name the API does not have. */
const unknownField = (body: Record<string, unknown>): ApiError | undefined => {
  for (const key in body) {
    if (KNOWN.has(key)) continue
    const near = nearestKey(key, KNOWN_FIELDS)
    return refusal(key, `is not a known parameter${near === undefined ? "" : ` (did you mean "${near}"?)`}`, "unknown_parameter")
  }
  return undefined
}

const UNSUPPORTED = "unsupported_parameter"

/** What this server cannot honour, refused by name (the module comment). */
const unsupported = (body: RequestShape): ApiError | undefined => {
  if (body.input === undefined) return new ApiError({ kind: "invalid_request", message: `input: is required (${INPUT_RULE.replace(/^must be /, "")})`, param: "input" })
  if (typeof body.previous_response_id === "string") {
    return refusal("previous_response_id", "is not supported: this server stores no responses; send the earlier turns (the output items too) in input", UNSUPPORTED)
  }
  if (body.background === true) return refusal("background", "must be false or absent: this server answers in the request (stream: true streams it)", UNSUPPORTED)
  if (body.conversation !== undefined && body.conversation !== null) return refusal("conversation", "is not supported: this server keeps no conversations; send the turns in input", UNSUPPORTED)
  if (body.prompt !== undefined && body.prompt !== null) return refusal("prompt", "is not supported: this server keeps no prompt templates; send instructions and input", UNSUPPORTED)
  if (body.context_management !== undefined && body.context_management !== null) return refusal("context_management", "is not supported here", UNSUPPORTED)
  if (body.moderation !== undefined && body.moderation !== null) return refusal("moderation", "is not supported: this server runs no moderation", UNSUPPORTED)
  if ((body.top_logprobs ?? 0) > 0) return refusal("top_logprobs", "must be 0 or absent: this server returns no log probabilities", UNSUPPORTED)
  if (body.include?.includes("message.output_text.logprobs") === true) {
    return refusal("include", "message.output_text.logprobs is not supported: this server returns no log probabilities", UNSUPPORTED)
  }
  return undefined
}

const decodeShape = pathDecoder(RequestShape)

/** A body's JSON value as a request, or the 400 that names the field and the rule. */
export const decodeResponsesRequest = (json: unknown): Result.Result<ResponsesRequest, ApiError> => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return Result.fail(invalidBody(invalid("request body", "", "must be a JSON object with input and model")))
  const unknown = unknownField(json as Record<string, unknown>)
  if (unknown !== undefined) return Result.fail(unknown)
  const shape = decodeShape(json, "")
  if (Result.isFailure(shape)) return Result.fail(invalidBody(shape.failure))
  const body = shape.success
  const refused = unsupported(body)
  if (refused !== undefined) return Result.fail(refused)
  const input: Result.Result<string | ReadonlyArray<InputItem>, InvalidInput> = typeof body.input === "string"
    ? Result.succeed(body.input)
    : decodeEach(body.input!, "input", inputItem)
  if (Result.isFailure(input)) return Result.fail(invalidBody(input.failure))
  const tools = body.tools === undefined || body.tools === null ? Result.succeed([]) : decodeEach(body.tools, "tools", tool)
  if (Result.isFailure(tools)) return Result.fail(invalidBody(tools.failure))
  const choice = body.tool_choice === undefined || body.tool_choice === null ? Result.succeed(undefined) : toolChoice(body.tool_choice, "tool_choice")
  if (Result.isFailure(choice)) return Result.fail(invalidBody(choice.failure))
  const text = body.text === undefined || body.text === null ? Result.succeed(undefined) : textConfig(body.text, "text")
  if (Result.isFailure(text)) return Result.fail(invalidBody(text.failure))
  const { input: _input, tools: _tools, tool_choice: _choice, text: _text, ...rest } = body
  return Result.succeed({
    ...rest,
    input: input.success,
    tools: tools.success,
    ...(choice.success === undefined ? {} : { tool_choice: choice.success }),
    ...(text.success === undefined ? {} : { text: text.success })
  })
}

/** Parses and decodes a body's text. */
export const parseResponsesRequest = (text: string): Result.Result<ResponsesRequest, ApiError> => parseBody(text, decodeResponsesRequest)
