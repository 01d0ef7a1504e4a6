/**
 * A Responses API request as the chat gateway's ChatRequest: instructions and input items become
 * messages (a function_call joins the assistant message before it, a function_call_output is a
 * tool message), function tools become chat tools, text.format becomes response_format, and the
 * web_search tool becomes grounding: one search before the model answers (web_search_options,
 * its context size and the user's location), kept to filters.allowed_domains when given (the
 * search asks for those sites and hits elsewhere are left out: core/chat/Grounding.ts). The
 * model is offered no server tools, so every search an answer rests on is the one its
 * web_search_call shows.
 */
import { Result } from "effect"
import type { ChatCompletionRequest, ChatRequest, ContentPart as ChatPart, GroundingOptions, ToolDefinition, WireMessage } from "../../chat/ChatRequest.ts"
import { toChatRequest } from "../../chat/ChatRequest.ts"
import { requestSchemaProblem } from "../../chat/ToolValidation.ts"
import { ApiError } from "../ApiError.ts"
import type { ContentPart, InputItem } from "./InputItems.ts"
import { type FunctionTool, type ResponsesRequest, type ToolChoice, WEB_SEARCH_TYPES, type WebSearchTool } from "./ResponsesRequest.ts"

/** What the gateway is asked, and what the answer's mapping needs to know of the request. */
export interface GatewayCall {
  readonly chat: ChatRequest
  /** The web_search tool the search was made for (the answer echoes it), undefined when none is made. */
  readonly webSearch: WebSearchTool | undefined
}

const invalidAt = (param: string, rule: string, code?: string): ApiError =>
  new ApiError({ kind: "invalid_request", message: `${param}: ${rule}`, param, ...(code === undefined ? {} : { code }) })

const isWebSearchType = (type: string): boolean => (WEB_SEARCH_TYPES as ReadonlyArray<string>).includes(type)

// --- messages -------------------------------------------------------------------

type Message = { -readonly [K in keyof WireMessage]: WireMessage[K] }

const textOf = (part: ContentPart): string | undefined =>
  part.type === "input_text" || part.type === "output_text" ? part.text : part.type === "refusal" ? part.refusal : undefined

/** Parts as chat content: one string when all are text (what every upstream reads), else chat's parts. */
const chatContent = (parts: string | ReadonlyArray<ContentPart>, path: string, textOnly: boolean): Result.Result<WireMessage["content"], ApiError> => {
  if (typeof parts === "string") return Result.succeed(parts)
  if (textOnly || parts.every((p) => p.type !== "input_image")) return Result.succeed(parts.map((p) => textOf(p) ?? "").join(""))
  const out: Array<ChatPart> = []
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.type !== "input_image") {
      out.push({ type: "text", text: textOf(part)! })
      continue
    }
    if (typeof part.image_url !== "string" || part.image_url === "") {
      return Result.fail(invalidAt(`${path}[${i}].image_url`, "is required: images by file_id are not supported here (no files are stored)"))
    }
    out.push({ type: "image_url", image_url: { url: part.image_url, ...(part.detail === undefined ? {} : { detail: part.detail }) } })
  }
  return Result.succeed(out)
}

const messagesOf = (instructions: string | null | undefined, input: string | ReadonlyArray<InputItem>): Result.Result<Array<WireMessage>, ApiError> => {
  const messages: Array<Message> = []
  if (typeof instructions === "string" && instructions !== "") messages.push({ role: "system", content: instructions })
  if (typeof input === "string") {
    messages.push({ role: "user", content: input })
    return Result.succeed(messages)
  }
  // The assistant message a function_call joins: the one just before it, if the previous item made it.
  let assistant: Message | undefined
  for (let i = 0; i < input.length; i++) {
    const item = input[i]!
    const path = `input[${i}]`
    if (item.type === "function_call") {
      const call = { id: item.call_id, type: "function" as const, function: { name: item.name, arguments: item.arguments } }
      if (assistant === undefined) messages.push(assistant = { role: "assistant", content: null, tool_calls: [call] })
      else assistant.tool_calls = [...(assistant.tool_calls ?? []), call]
      continue
    }
    if (item.type === "web_search_call" || item.type === "reasoning") continue
    assistant = undefined
    if (item.type === "function_call_output") {
      const content = chatContent(item.output, `${path}.output`, false)
      if (Result.isFailure(content)) return Result.fail(content.failure)
      messages.push({ role: "tool", tool_call_id: item.call_id, content: content.success })
      continue
    }
    const content = chatContent(item.content, `${path}.content`, item.role !== "user")
    if (Result.isFailure(content)) return Result.fail(content.failure)
    const message: Message = { role: item.role, content: content.success }
    messages.push(message)
    if (item.role === "assistant") assistant = message
  }
  return Result.succeed(messages)
}

// --- tools --------------------------------------------------------------------

const chatTool = (tool: FunctionTool): ToolDefinition => ({
  type: "function",
  function: {
    name: tool.name,
    ...(typeof tool.description === "string" ? { description: tool.description } : {}),
    ...(tool.parameters === undefined || tool.parameters === null ? {} : { parameters: tool.parameters }),
    ...(tool.strict === undefined || tool.strict === null ? {} : { strict: tool.strict })
  }
})

interface ToolPlan {
  /** The function tools offered, with their place in the request's `tools`. */
  readonly functions: ReadonlyArray<{ readonly tool: FunctionTool; readonly index: number }>
  readonly webSearch: WebSearchTool | undefined
  readonly choice: ChatCompletionRequest["tool_choice"]
}

/** The tools the model is offered and how it must use them, from `tools` and `tool_choice` (OpenAI's rules). */
const toolPlan = (request: ResponsesRequest): Result.Result<ToolPlan, ApiError> => {
  let functions: Array<{ tool: FunctionTool; index: number }> = []
  let webSearch: WebSearchTool | undefined
  const names = new Set<string>()
  for (let i = 0; i < request.tools.length; i++) {
    const tool = request.tools[i]!
    if (tool.type === "function") {
      if (names.has(tool.name)) return Result.fail(invalidAt(`tools[${i}].name`, `duplicates the tool name ${JSON.stringify(tool.name)}`))
      names.add(tool.name)
      functions.push({ tool, index: i })
      continue
    }
    if (webSearch !== undefined) return Result.fail(invalidAt(`tools[${i}].type`, "gives web search a second time (one web_search tool at most)"))
    if (tool.external_web_access === false) {
      return Result.fail(invalidAt(`tools[${i}].external_web_access`, "false (cached pages only) is not supported here", "unsupported_parameter"))
    }
    webSearch = tool
  }
  let choice: ToolChoice = request.tool_choice ?? "auto"
  if (typeof choice === "object" && choice.type === "allowed_tools") {
    const allowed = choice
    const kept = new Set<string>()
    let searchAllowed = false
    for (let k = 0; k < allowed.tools.length; k++) {
      const entry = allowed.tools[k]!
      const type = String(entry.type)
      if (isWebSearchType(type) && webSearch !== undefined) searchAllowed = true
      else if (type === "function" && typeof entry.name === "string" && names.has(entry.name)) kept.add(entry.name)
      else return Result.fail(invalidAt(`tool_choice.tools[${k}]`, "names no tool in tools"))
    }
    functions = functions.filter((f) => kept.has(f.tool.name))
    if (!searchAllowed) webSearch = undefined
    choice = allowed.mode
  }
  if (typeof choice === "string") {
    if (choice === "none") return Result.succeed({ functions, webSearch: undefined, choice: functions.length > 0 ? "none" : undefined })
    if (choice === "required" && functions.length === 0 && webSearch === undefined) {
      return Result.fail(invalidAt("tool_choice", "is \"required\" but no tools are given"))
    }
    // The search is made before the answer: with it, "required" is met, and the functions stay optional.
    const chatChoice = functions.length === 0 ? undefined : choice === "required" && webSearch === undefined ? "required" : "auto"
    return Result.succeed({ functions, webSearch, choice: chatChoice })
  }
  if (choice.type === "function") {
    const name = choice.name
    if (!names.has(name)) return Result.fail(invalidAt("tool_choice.name", `names no function in tools (${JSON.stringify(name)})`))
    // A function the model must call first: no search before it.
    return Result.succeed({ functions, webSearch: undefined, choice: { type: "function", function: { name } } })
  }
  if (webSearch === undefined) return Result.fail(invalidAt("tool_choice.type", "asks for web search, which tools does not give"))
  return Result.succeed({ functions, webSearch, choice: functions.length === 0 ? undefined : "auto" })
}

/** A domain as the search and the filter read it: lower case, no scheme, no trailing slash. */
const bareDomain = (domain: string): string => domain.replace(/^https?:\/\//i, "").replace(/\/$/, "").toLowerCase()

const groundingOptions = (tool: WebSearchTool): GroundingOptions => {
  const at = tool.user_location
  const location = at === undefined || at === null ? undefined : {
    ...(typeof at.city === "string" ? { city: at.city } : {}),
    ...(typeof at.country === "string" ? { country: at.country } : {}),
    ...(typeof at.region === "string" ? { region: at.region } : {}),
    ...(typeof at.timezone === "string" ? { timezone: at.timezone } : {})
  }
  const domains = tool.filters?.allowed_domains ?? []
  return {
    ...(tool.search_context_size === undefined ? {} : { search_context_size: tool.search_context_size }),
    ...(location === undefined ? {} : { user_location: { type: "approximate" as const, approximate: location } }),
    ...(domains.length === 0 ? {} : { allowed_domains: [...new Set(domains.map(bareDomain))] })
  }
}

// --- the request --------------------------------------------------------------

/** Where a chat-side parameter lives in a Responses request, for the errors the gateway reports. */
export const responsesParam = (param: string | null | undefined, toolIndex: ReadonlyArray<number> = []): string | null => {
  if (param === undefined || param === null) return null
  if (param === "max_tokens" || param === "max_completion_tokens") return "max_output_tokens"
  if (param === "web_search_options") return "tools"
  if (param.startsWith("response_format")) return param.replace(/^response_format(\.json_schema)?/, "text.format")
  const tool = /^tools\[(\d+)\]\.function(.*)$/.exec(param)
  if (tool !== null) return `tools[${toolIndex[Number(tool[1])] ?? tool[1]}]${tool[2]}`
  return param
}

/** The gateway's request for a decoded Responses request, or the 400 that names what is wrong. */
export const responsesToChat = (request: ResponsesRequest, defaultModel: string): Result.Result<GatewayCall, ApiError> => {
  const messages = messagesOf(request.instructions, request.input)
  if (Result.isFailure(messages)) return Result.fail(messages.failure)
  const plan = toolPlan(request)
  if (Result.isFailure(plan)) return Result.fail(plan.failure)
  const { functions, choice } = plan.success
  const webSearch = request.max_tool_calls === 0 ? undefined : plan.success.webSearch
  const format = request.text?.format
  const body: ChatCompletionRequest = {
    messages: messages.success,
    ...(request.model === undefined ? {} : { model: request.model }),
    ...(typeof request.max_output_tokens === "number" ? { max_tokens: request.max_output_tokens } : {}),
    ...(typeof request.temperature === "number" ? { temperature: request.temperature } : {}),
    ...(typeof request.top_p === "number" ? { top_p: request.top_p } : {}),
    ...(functions.length === 0 ? {} : { tools: functions.map((f) => chatTool(f.tool)) }),
    ...(choice === undefined ? {} : { tool_choice: choice }),
    ...(typeof request.parallel_tool_calls === "boolean" ? { parallel_tool_calls: request.parallel_tool_calls } : {}),
    ...(format === undefined || format.type === "text"
      ? {}
      : format.type === "json_object"
      ? { response_format: { type: "json_object" as const } }
      : {
        response_format: {
          type: "json_schema" as const,
          json_schema: {
            name: format.name,
            schema: format.schema,
            ...(format.description === undefined ? {} : { description: format.description }),
            ...(format.strict === undefined ? {} : { strict: format.strict })
          }
        }
      }),
    ...(typeof (request.safety_identifier ?? request.user) === "string" ? { user: (request.safety_identifier ?? request.user)! } : {}),
    stream: request.stream === true
  }
  // Tool and format schemas are compiled on arrival (as chat's are): a bad one is a 400 at its place.
  const problem = requestSchemaProblem(body)
  if (problem !== undefined) {
    return Result.fail(new ApiError({ kind: "invalid_request", message: problem.message.replace(problem.param, responsesParam(problem.param, functions.map((f) => f.index))!), param: responsesParam(problem.param, functions.map((f) => f.index)) }))
  }
  const chat = toChatRequest(body, request.model ?? defaultModel, body)
  return Result.succeed({
    // No server tools: the one search is made before the answer (see the module comment).
    chat: { ...chat, serverTools: [], ...(webSearch === undefined ? {} : { web_search_options: groundingOptions(webSearch) }) },
    webSearch
  })
}
