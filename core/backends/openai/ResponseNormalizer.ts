/**
 * An upstream's whole completion (chat.completion JSON) as our ChatResult
 * pieces: choices with content, reasoning (from `reasoning_content` or
 * `reasoning`, as servers name it) and tool calls, finish reasons in the
 * API's set (FinishReason.ts), and usage when the upstream reports it. Lenient about what
 * servers omit, strict about what would be a wrong answer.
 */
import { Predicate, Result } from "effect"
import type { ChatChoice, Usage } from "../../chat/ChatCompletion.ts"
import type { ToolCall } from "../../chat/ChatRequest.ts"
import { finishReasonOf, fromUpstream } from "../../chat/FinishReason.ts"
import { errorValueText } from "./ErrorText.ts"

/** Why an answer cannot be used; OpenAiUpstream turns it into an UpstreamError. */
export interface AnswerIssue {
  readonly kind: "protocol" | "status" | "stream"
  readonly message: string
  readonly status?: number | undefined
}

export interface NormalizedCompletion {
  readonly choices: ReadonlyArray<ChatChoice>
  /** Undefined when the upstream reported none (the caller counts). */
  readonly usage: Usage | undefined
}

type Json = Record<string, unknown>
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0

/** Usage when it has both counts; total recomputed when absent. */
export const parseUsage = (value: unknown): Usage | undefined => {
  if (!Predicate.isObject(value) || !isCount(value.prompt_tokens) || !isCount(value.completion_tokens)) return undefined
  const total = isCount(value.total_tokens) ? value.total_tokens : value.prompt_tokens + value.completion_tokens
  return { prompt_tokens: value.prompt_tokens, completion_tokens: value.completion_tokens, total_tokens: total }
}

/** Reasoning text under either name servers use (vLLM and DeepSeek reasoning_content, Ollama and OpenRouter reasoning). */
export const reasoningOf = (value: Json): string | undefined =>
  typeof value.reasoning_content === "string" ? value.reasoning_content
  : typeof value.reasoning === "string" ? value.reasoning
  : undefined

/** Content as a string: some servers (Mistral) answer with an array of text parts. */
export const contentTextOf = (content: unknown): string | null | undefined => {
  if (content === null || content === undefined || typeof content === "string") return content
  if (!Array.isArray(content)) return undefined
  let text = ""
  for (const part of content) if (Predicate.isObject(part) && typeof part.text === "string") text += part.text
  return text
}

/** An error object sent where an answer was expected (some servers answer 200 with one). */
export const issueOfError = (error: unknown, what: string): AnswerIssue => {
  const message = errorValueText(error) ?? "no message"
  const code = Predicate.isObject(error) ? (error.code ?? error.status) : undefined
  const status = typeof code === "number" ? code : typeof code === "string" && /^[45]\d\d$/.test(code) ? Number(code) : undefined
  return status !== undefined && status >= 400 && status <= 599
    ? { kind: "status", status, message: `${what} (${status}): ${message}` }
    : { kind: "stream", message: `${what}: ${message}` }
}

const protocol = (message: string): Result.Result<never, AnswerIssue> => Result.fail({ kind: "protocol", message })

const toolCallsOf = (value: unknown, choice: number): Result.Result<Array<ToolCall> | undefined, AnswerIssue> => {
  if (value === undefined || value === null) return Result.succeed(undefined)
  if (!Array.isArray(value)) return protocol(`choices[${choice}].message.tool_calls is not an array`)
  const calls: Array<ToolCall> = []
  for (let i = 0; i < value.length; i++) {
    const call = value[i]
    const fn = Predicate.isObject(call) ? call.function : undefined
    if (!Predicate.isObject(call) || !Predicate.isObject(fn) || typeof fn.name !== "string")
      return protocol(`choices[${choice}].message.tool_calls[${i}] has no function name`)
    // Arguments are JSON text on the wire; a server that sends an object gets it serialised.
    const args = typeof fn.arguments === "string" ? fn.arguments : fn.arguments === undefined ? "" : JSON.stringify(fn.arguments)
    const id = typeof call.id === "string" && call.id !== "" ? call.id : `call_${choice}_${i}`
    calls.push({ id, type: "function", function: { name: fn.name, arguments: args } })
  }
  return Result.succeed(calls.length > 0 ? calls : undefined)
}

const choiceOf = (value: unknown, position: number): Result.Result<ChatChoice, AnswerIssue> => {
  if (!Predicate.isObject(value)) return protocol(`choices[${position}] is not an object`)
  const index = isCount(value.index) ? value.index : position
  const message = value.message
  if (!Predicate.isObject(message)) return protocol(`choices[${position}].message is missing`)
  const content = contentTextOf(message.content)
  if (content === undefined && message.content !== undefined) return protocol(`choices[${position}].message.content is not text`)
  const calls = toolCallsOf(message.tool_calls, position)
  if (Result.isFailure(calls)) return Result.fail(calls.failure)
  const toolCalls = calls.success
  const reported = fromUpstream(value.finish_reason)
  if (reported === "error") return Result.fail({ kind: "stream", message: `the upstream ended choice ${index} with finish_reason ${JSON.stringify(value.finish_reason)}` })
  return Result.succeed({
    index,
    message: {
      role: "assistant",
      content: content ?? (toolCalls !== undefined ? null : ""),
      reasoning_content: reasoningOf(message) ?? "",
      ...(toolCalls !== undefined ? { tool_calls: toolCalls } : {})
    },
    finish_reason: finishReasonOf({ reported, toolCalls: toolCalls?.length ?? 0 }),
    logprobs: null
  })
}

/** A chat.completion body, parsed JSON. */
export const normalizeCompletion = (body: unknown): Result.Result<NormalizedCompletion, AnswerIssue> => {
  if (!Predicate.isObject(body)) return protocol("the upstream answer is not a JSON object")
  if (body.error !== undefined && body.error !== null) return Result.fail(issueOfError(body.error, "the upstream answered with an error"))
  if (!Array.isArray(body.choices)) return protocol("the upstream answer has no choices array")
  const choices: Array<ChatChoice> = []
  for (let i = 0; i < body.choices.length; i++) {
    const choice = choiceOf(body.choices[i], i)
    if (Result.isFailure(choice)) return Result.fail(choice.failure)
    choices.push(choice.success)
  }
  if (choices.length === 0) return protocol("the upstream answer has no choices")
  choices.sort((a, b) => a.index - b.index)
  return Result.succeed({ choices, usage: parseUsage(body.usage) })
}
