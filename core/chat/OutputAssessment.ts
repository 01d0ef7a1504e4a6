/**
 * The problems of one finished output (its tool calls against the request's
 * tools, its content against the response format), and, under the repair
 * policy, the output repaired. Texts under `chat.validation.jobThresholdBytes`
 * are judged here and then, without an Effect in between; larger ones go to
 * a job thread (ValidationJobs), where a deadline ends the check: the
 * assessment is then an Effect. A check the deadline or the memory bound
 * ended makes the text invalid, under the same policy; a full job queue is
 * the server's to answer (503).
 */
import { Effect } from "effect"
import type { JobError } from "../jobs/JobRunner.ts"
import { ChatModelError } from "./ChatError.ts"
import type { Checks, Output, Problem } from "./OutputValidation.ts"
import type { Judge, Judgement } from "./ToolValidation.ts"
import { judgeJob } from "./ValidationJobs.ts"
import { limitSetting, utf8BytesOver } from "./ValidationLimits.ts"

export interface Assessment<O extends Output> {
  /** The output, with the texts repaired when repairing. */
  readonly output: O
  readonly problems: Array<Problem>
}

type Judged = Judgement | Effect.Effect<Judgement, ChatModelError>

/** A job's failure as the judgement of its text, or as the request's failure when the server is to blame. */
const fromJobError = (judge: Judge, error: JobError): Effect.Effect<Judgement, ChatModelError> => {
  const subject = judge.what === "arguments" ? "the arguments were" : "the content was"
  switch (error.reason) {
    case "timeout":
      return Effect.succeed({ verdict: { ok: false, error: `${subject} not checked within ${judge.limits.jobDeadlineMs} ms (${limitSetting("jobDeadlineMs")})` } })
    case "memory":
      return Effect.succeed({ verdict: { ok: false, error: `${subject} not checked: the check needed more memory than a job may use (jobs.memoryMb)` } })
    case "busy":
      return Effect.fail(new ChatModelError({ reason: "unavailable", message: `the ${judge.what} could not be checked now: every job thread is busy and the queue is full`, ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }) }))
    default:
      return Effect.fail(new ChatModelError({ reason: "internal", message: `checking the ${judge.what} failed: ${error.message}` }))
  }
}

/**
 * Regex steps one check may take here (the text's length times the schema's pattern work): a
 * few milliseconds. A short text under large patterns goes to a job like a long one.
 */
const INLINE_REGEX_STEPS = 4_000_000

/** Whether a text is judged here: small, with regex work to match, or over the size bound (which needs no parsing). */
const judgedHere = (checks: Checks, judge: Judge, text: string): boolean => {
  const limits = checks.limits
  if (utf8BytesOver(text, limits.maxArgumentBytes) !== undefined) return true
  return utf8BytesOver(text, limits.jobThresholdBytes - 1) === undefined && text.length * judge.patternWork <= INLINE_REGEX_STEPS
}

/** One text judged: here when it is small, as a job otherwise. */
const judgeText = (checks: Checks, judge: Judge, text: string, repair: boolean): Judged => {
  const jobs = checks.jobs
  const limits = checks.limits
  if (jobs === undefined || judgedHere(checks, judge, text)) return judge.judge(text, repair)
  return Effect.catch(
    jobs.run(judgeJob, { target: judge.target, text, limits: judge.limits, repair }, { deadlineMs: limits.jobDeadlineMs }),
    (error) => fromJobError(judge, error)
  )
}

/**
 * Judges an output. With `repairing` (the problems a first assessment found), the texts those
 * problems name are repaired and judged again, and the rest are taken as they were found: valid.
 */
export const assessOutput = <O extends Output>(checks: Checks, output: O, repairing?: ReadonlyArray<Problem>): Assessment<O> | Effect.Effect<Assessment<O>, ChatModelError> => {
  let deferred = false
  const calls: Array<Judged | undefined> = output.toolCalls.map((call, index) => {
    if (repairing !== undefined && !repairing.some((p) => p.kind === "tool" && p.index === index)) return undefined
    const judge = checks.catalog.judgeOf(call.function.name)
    const judged = judge === undefined ? { verdict: checks.catalog.unknown(call) } : judgeText(checks, judge, call.function.arguments, repairing !== undefined)
    if (Effect.isEffect(judged)) deferred = true
    return judged
  })
  let content: Judged | undefined
  // A reply that only calls tools has no content to hold to the response format.
  const judgesContent = checks.content !== undefined && !(output.toolCalls.length > 0 && (output.content === null || output.content === "")) &&
    (repairing === undefined || repairing.some((p) => p.kind === "content"))
  if (judgesContent) {
    content = judgeText(checks, checks.content!, output.content ?? "", repairing !== undefined)
    if (Effect.isEffect(content)) deferred = true
  }
  if (!deferred) return combine(output, calls as Array<Judgement | undefined>, content as Judgement | undefined)
  return Effect.map(
    Effect.all([Effect.all(calls.map(settled), { concurrency: "unbounded" }), settled(content)], { concurrency: "unbounded" }),
    ([judgedCalls, judgedContent]) => combine(output, judgedCalls, judgedContent)
  )
}

const settled = (judged: Judged | undefined): Effect.Effect<Judgement | undefined, ChatModelError> =>
  judged === undefined ? Effect.succeed(undefined) : Effect.isEffect(judged) ? judged : Effect.succeed(judged)

const combine = <O extends Output>(output: O, calls: ReadonlyArray<Judgement | undefined>, content: Judgement | undefined): Assessment<O> => {
  const problems: Array<Problem> = []
  let changed = false
  const toolCalls = output.toolCalls.map((call, index) => {
    const judged = calls[index]
    if (judged === undefined) return call
    if (!judged.verdict.ok) problems.push({ kind: "tool", index, error: `tool call ${call.function.name} ${judged.verdict.error}` })
    if (judged.repaired === undefined || judged.repaired === call.function.arguments) return call
    changed = true
    return { ...call, function: { ...call.function, arguments: judged.repaired } }
  })
  if (content !== undefined && !content.verdict.ok) problems.push({ kind: "content", error: content.verdict.error })
  const repairedContent = content?.repaired
  if (repairedContent !== undefined && repairedContent !== output.content) changed = true
  return {
    output: changed ? { ...output, toolCalls, content: repairedContent ?? output.content } : output,
    problems
  }
}
