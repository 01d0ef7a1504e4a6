/**
 * Judging large model output on a job thread (core/jobs): the schema
 * check, and jsonrepair, of arguments or content over
 * `chat.validation.jobThresholdBytes`, so that neither holds the thread
 * that answers requests, and a deadline ends them. The thread compiles the
 * target's schema itself: schemas are plain data, compiled ones are not.
 *
 * No runtime import of effect here: job threads load this module.
 */
import { defineJob } from "../jobs/Job.ts"
import { Judge, type Judgement, type Target } from "./ToolValidation.ts"
import type { ValidationLimits } from "./ValidationLimits.ts"

export interface JudgeInput {
  readonly target: Target
  readonly text: string
  readonly limits: ValidationLimits
  readonly repair: boolean
}

/** A text judged as Judge.judge does; a valid value is not sent back (the caller has the text). */
export const judgeJob = defineJob(import.meta.url, "chat.judge", (input: JudgeInput): Judgement => {
  const judged = new Judge(input.target, input.limits).judge(input.text, input.repair)
  return judged.verdict.ok ? { verdict: { ok: true, value: undefined }, repaired: judged.repaired } : judged
})
