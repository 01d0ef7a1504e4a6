/**
 * Judging one finished choice: its tool calls against the request's tools
 * and its content against the response format, the error a caller sees when
 * it stays invalid, and the messages that tell the model what to fix.
 */
import type { AnswerToolCall } from "./ChatCompletion.ts"
import { ChatModelError } from "./ChatError.ts"
import type { ChatMessage, ChatRequest, ToolCall } from "./ChatRequest.ts"
import type { FinishReason } from "./FinishReason.ts"
import { makeContentCheck, repairJson, ToolCatalog, type Verdict } from "./ToolValidation.ts"
import { defaultValidationLimits, type ValidationLimits } from "./ValidationLimits.ts"

/**
 * What happens to a tool call or JSON reply that fails validation:
 * pass: it goes out, marked with `periscope_validation`; repair: broken JSON
 * is fixed with jsonrepair, then validated; retry: the model is asked again
 * with the validation error, up to `retries` times. Still invalid after
 * repair or retries: the request fails with a clear error. `limits` bound
 * what is validated and repaired (defaultValidationLimits when absent); an
 * output over a bound is invalid like any other, under the same policy.
 */
export interface ValidationPolicy {
  readonly mode: "pass" | "repair" | "retry"
  readonly retries: number
  readonly limits?: ValidationLimits
}

export const defaultValidationPolicy: ValidationPolicy = { mode: "retry", retries: 2 }

/** A policy from the config file's `chat.validation`: what it leaves out takes the default. */
export const validationPolicyFrom = (settings: Partial<Omit<ValidationPolicy, "mode" | "limits"> & ValidationLimits & { readonly policy: ValidationPolicy["mode"] }> | undefined): ValidationPolicy => {
  if (settings === undefined) return defaultValidationPolicy
  const limits = { ...defaultValidationLimits }
  for (const key of Object.keys(defaultValidationLimits) as Array<keyof ValidationLimits>) if (settings[key] !== undefined) limits[key] = settings[key]
  return { mode: settings.policy ?? defaultValidationPolicy.mode, retries: settings.retries ?? defaultValidationPolicy.retries, limits }
}

/** The limits a policy holds to. */
export const limitsOf = (policy: ValidationPolicy): ValidationLimits => policy.limits ?? defaultValidationLimits

export type Problem = { readonly kind: "tool"; readonly index: number; readonly error: string } | { readonly kind: "content"; readonly error: string }

export interface Checks {
  readonly catalog: ToolCatalog
  readonly content: ((content: string) => Verdict) | undefined
  readonly limits: ValidationLimits
}

export const problemsOf = (checks: Checks, content: string | null, toolCalls: ReadonlyArray<ToolCall>): Array<Problem> => {
  const problems: Array<Problem> = []
  toolCalls.forEach((call, index) => {
    const verdict = checks.catalog.check(call)
    if (!verdict.ok) problems.push({ kind: "tool", index, error: `tool call ${call.function.name} ${verdict.error}` })
  })
  // A reply that only calls tools has no content to hold to the response format.
  if (checks.content !== undefined && !(toolCalls.length > 0 && (content === null || content === ""))) {
    const verdict = checks.content(content ?? "")
    if (!verdict.ok) problems.push({ kind: "content", error: verdict.error })
  }
  return problems
}

const describeProblems = (problems: ReadonlyArray<Problem>) => problems.map((p) => p.error).join("; ")

export const invalidOutput = (problems: ReadonlyArray<Problem>, after: string) =>
  new ChatModelError({
    reason: "upstream",
    code: problems.some((p) => p.kind === "tool") ? "tool_call_invalid" : "response_format_invalid",
    message: `the model's reply failed validation ${after}: ${describeProblems(problems)}`
  })

/** The messages that tell the model what was wrong, for a retry. */
export const feedbackMessages = (content: string | null, toolCalls: ReadonlyArray<ToolCall>, problems: ReadonlyArray<Problem>): Array<ChatMessage> => {
  const messages: Array<ChatMessage> = [{
    role: "assistant",
    content: content === "" ? null : content,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {})
  }]
  toolCalls.forEach((call, index) => {
    const problem = problems.find((p) => p.kind === "tool" && p.index === index)
    messages.push({
      role: "tool",
      tool_call_id: call.id,
      content: problem === undefined
        ? "Not run: another call in this turn was invalid. Repeat every call with valid arguments."
        : `Error: ${problem.error}. Call the tool again with arguments that match its JSON Schema.`
    })
  })
  const contentProblem = problems.find((p) => p.kind === "content")
  if (contentProblem !== undefined) {
    messages.push({ role: "user", content: `Your reply was rejected: ${contentProblem.error}. Reply again with only JSON in the required format.` })
  }
  return messages
}

/** The output of one choice as the validator sees it. */
export interface Output {
  readonly content: string | null
  readonly reasoning: string
  readonly toolCalls: ReadonlyArray<AnswerToolCall>
  readonly finish: FinishReason
  readonly note?: { readonly valid: boolean; readonly error: string } | undefined
}

export const checksOf = (request: ChatRequest, limits: ValidationLimits = defaultValidationLimits): Checks => ({
  catalog: new ToolCatalog(request.tools, limits),
  content: makeContentCheck(request.response_format, limits),
  limits
})

/**
 * The repair policy on one output: tool arguments and content that are not
 * JSON repaired (within the repair bound), then judged again. The problems
 * left say why something was not repaired.
 */
export const repairOutput = <O extends Output>(checks: Checks, output: O, problems: ReadonlyArray<Problem>): { readonly output: O; readonly problems: ReadonlyArray<Problem> } => {
  const left: Array<Problem> = []
  const toolCalls = output.toolCalls.map((call, index) => {
    const { call: fixed, verdict } = checks.catalog.repair(call)
    if (!verdict.ok) left.push({ kind: "tool", index, error: `tool call ${call.function.name} ${verdict.error}` })
    return { ...call, function: fixed.function }
  })
  let content = output.content
  if (checks.content !== undefined && content !== null && problems.some((p) => p.kind === "content")) {
    const fixed = repairJson(content, checks.limits)
    const note = "skipped" in fixed ? fixed.skipped : undefined
    if ("text" in fixed) content = fixed.text
    const verdict = checks.content(content)
    if (!verdict.ok) left.push({ kind: "content", error: note === undefined ? verdict.error : `${verdict.error}; ${note}` })
  }
  return { output: { ...output, toolCalls, content }, problems: left }
}
