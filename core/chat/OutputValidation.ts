/**
 * Judging one finished choice: its tool calls against the request's tools
 * and its content against the response format, the error a caller sees when
 * it stays invalid, and the messages that tell the model what to fix.
 */
import type { AnswerToolCall } from "./ChatCompletion.ts"
import { ChatModelError } from "./ChatError.ts"
import type { ChatMessage, ChatRequest, ToolCall } from "./ChatRequest.ts"
import type { FinishReason } from "./FinishReason.ts"
import type { JobRunnerShape } from "../jobs/JobRunner.ts"
import { contentJudge, type Judge, ToolCatalog } from "./ToolValidation.ts"
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

/** What one request's output is judged with. */
export interface Checks {
  readonly catalog: ToolCatalog
  /** The content's judge under a JSON response format. */
  readonly content: Judge | undefined
  readonly limits: ValidationLimits
  /** Job threads for large texts (see OutputAssessment); none: everything is judged here. */
  readonly jobs: JobRunnerShape | undefined
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

export const checksOf = (request: ChatRequest, limits: ValidationLimits = defaultValidationLimits, jobs?: JobRunnerShape): Checks => ({
  catalog: new ToolCatalog(request.tools, limits),
  content: contentJudge(request.response_format, limits),
  limits,
  // On the calling thread a job would only add a hop: jobs are for runners with threads of their own.
  jobs: jobs?.where === "threads" ? jobs : undefined
})
