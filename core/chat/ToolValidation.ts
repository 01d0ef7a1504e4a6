/**
 * Trusted tool calls and structured output: a Judge per target (a tool's
 * parameters, the response format) holds model output to it: within the
 * size bound, JSON, matching the schema (CompiledSchema), and, under the
 * repair policy, repaired with jsonrepair within its own bound. Every input
 * is bounded first (ValidationLimits): the schema is the client's and the
 * output a model's the client can steer. Plain functions; the pipeline
 * decides the policy and where a check runs (OutputAssessment). The
 * request's schemas are checked when it arrives (RequestSchemas).
 *
 * No runtime import of effect here: job threads load this module.
 */
import { jsonrepair } from "jsonrepair"
import type { ResponseFormat, ToolCall, ToolDefinition } from "./ChatRequest.ts"
import { type CompiledSchema, compileSafely, validateValue, type Verdict } from "./CompiledSchema.ts"
import { defaultValidationLimits, limitSetting, utf8BytesOver, type ValidationLimits } from "./ValidationLimits.ts"

export type { Verdict } from "./CompiledSchema.ts"
export { type RequestSchemaProblem, requestSchemaProblem, schemaBoundProblem } from "./RequestSchemas.ts"

/** `what` (arguments, content) over the size bound, as a verdict's error. */
const sizeProblem = (what: string, text: string, limits: ValidationLimits): string | undefined => {
  const bytes = utf8BytesOver(text, limits.maxArgumentBytes)
  return bytes === undefined ? undefined : `${what} ${what === "content" ? "is" : "are"} ${bytes} bytes, more than the ${limits.maxArgumentBytes} that are validated (${limitSetting("maxArgumentBytes")})`
}

const parseJson = (text: string): Verdict => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (e) {
    return { ok: false, error: `is not valid JSON (${e instanceof Error ? e.message : String(e)})` }
  }
}

/**
 * Broken JSON repaired, when it is small enough for jsonrepair (whose work
 * grows faster than its input); the reason it was not, otherwise.
 */
const repaired = (text: string, limits: ValidationLimits): { readonly text: string } | { readonly skipped: string } => {
  const bytes = utf8BytesOver(text, limits.maxRepairBytes)
  if (bytes !== undefined) return { skipped: `not repaired: ${bytes} bytes, more than the ${limits.maxRepairBytes} that are repaired (${limitSetting("maxRepairBytes")})` }
  try {
    return { text: jsonrepair(text) }
  } catch (e) {
    return { skipped: `not repairable: ${e instanceof Error ? e.message : String(e)}` }
  }
}

/**
 * What a piece of model output is held to: a tool's parameters (its
 * arguments), or the response format (the content). Plain data, so that a
 * job thread can judge it too (ValidationJobs).
 */
export type Target =
  | { readonly kind: "tool"; readonly name: string; readonly schema: Record<string, unknown> | undefined }
  | { readonly kind: "json_object" }
  | { readonly kind: "json_schema"; readonly name: string; readonly schema: Record<string, unknown> | undefined }

/** A text judged: the verdict, and the text as repaired when it was. */
export interface Judgement {
  readonly verdict: Verdict
  readonly repaired?: string | undefined
}

/** One target with its schema compiled once: judges texts against it, repairing them when asked. */
export class Judge {
  readonly target: Target
  readonly limits: ValidationLimits
  /** How errors name the text: arguments or content. */
  readonly what: "arguments" | "content"
  /** Regex steps per character of a text, at most (where that work runs: OutputAssessment). */
  readonly patternWork: number
  private readonly schema: CompiledSchema | undefined

  constructor(target: Target, limits: ValidationLimits) {
    this.target = target
    this.limits = limits
    this.what = target.kind === "tool" ? "arguments" : "content"
    this.schema = target.kind === "json_object" ? undefined : compileSafely(target.schema ?? (target.kind === "tool" ? undefined : {}))
    this.patternWork = this.schema?.patternWork ?? 0
  }

  /**
   * The text within the size bound, JSON, and matching; with `repair`, jsonrepair first (JSON
   * comes back as it was), or, over the repair bound, the text as it is with the reason.
   */
  judge(text: string, repair = false): Judgement {
    const tooLarge = sizeProblem(this.what, text, this.limits)
    if (tooLarge !== undefined) return { verdict: { ok: false, error: tooLarge } }
    if (!repair) return { verdict: this.verdictOf(parseJson(text), text.length) }
    const fixed = repaired(text, this.limits)
    if ("skipped" in fixed) {
      const parsed = parseJson(text)
      return { verdict: parsed.ok ? this.verdictOf(parsed, text.length) : { ok: false, error: `${this.what} ${parsed.error}; ${fixed.skipped}` } }
    }
    return { verdict: this.verdictOf(parseJson(fixed.text), fixed.text.length), repaired: fixed.text }
  }

  private verdictOf(parsed: Verdict, textLength: number): Verdict {
    if (!parsed.ok) return { ok: false, error: `${this.what} ${parsed.error}` }
    const target = this.target
    if (target.kind === "json_object") {
      return typeof parsed.value === "object" && parsed.value !== null && !Array.isArray(parsed.value)
        ? parsed
        : { ok: false, error: "content is JSON but not an object, as json_object requires" }
    }
    const valid = validateValue(this.schema!, parsed.value, this.limits, textLength)
    if (valid.ok) return valid
    return {
      ok: false,
      error: target.kind === "tool"
        ? `arguments do not match the schema of ${target.name}: ${valid.error}`
        : `content does not match the schema ${JSON.stringify(target.name)}: ${valid.error}`
    }
  }
}

/** The tools of one request, their schemas compiled once. */
export class ToolCatalog {
  private readonly judges = new Map<string, Judge>()
  readonly names: ReadonlyArray<string>

  constructor(tools: ReadonlyArray<ToolDefinition> | undefined, limits: ValidationLimits = defaultValidationLimits) {
    for (const tool of tools ?? []) {
      this.judges.set(tool.function.name, new Judge({ kind: "tool", name: tool.function.name, schema: tool.function.parameters }, limits))
    }
    this.names = [...this.judges.keys()]
  }

  /** The judge of a tool's arguments; undefined for a tool the request does not have. */
  judgeOf(name: string): Judge | undefined {
    return this.judges.get(name)
  }

  /** Why a call to a tool the request does not have is invalid. */
  unknown(call: ToolCall): Verdict {
    return { ok: false, error: `calls ${JSON.stringify(call.function.name)}, which is not one of the request's tools (${this.names.map((n) => JSON.stringify(n)).join(", ") || "none"})` }
  }

  /** Checks one call: the tool exists, its arguments are within the size bound, are JSON and match the schema. */
  check(call: ToolCall): Verdict {
    const judge = this.judges.get(call.function.name)
    return judge === undefined ? this.unknown(call) : judge.judge(call.function.arguments).verdict
  }

  /** Repairs a call's arguments (see Judge.judge), then checks the result. */
  repair(call: ToolCall): { readonly call: ToolCall; readonly verdict: Verdict } {
    const judge = this.judges.get(call.function.name)
    if (judge === undefined) return { call, verdict: this.unknown(call) }
    const { verdict, repaired } = judge.judge(call.function.arguments, true)
    return { call: repaired === undefined ? call : { ...call, function: { ...call.function, arguments: repaired } }, verdict }
  }
}

/** The judge of content under a json_object or json_schema response format; none for text. */
export const contentJudge = (format: ResponseFormat | undefined, limits: ValidationLimits = defaultValidationLimits): Judge | undefined => {
  if (format === undefined || format.type === "text") return undefined
  return new Judge(format.type === "json_object" ? { kind: "json_object" } : { kind: "json_schema", name: format.json_schema.name, schema: format.json_schema.schema }, limits)
}

/** Checks content against a json_object or json_schema response format; text formats always pass. */
export const makeContentCheck = (format: ResponseFormat | undefined, limits: ValidationLimits = defaultValidationLimits): ((content: string) => Verdict) | undefined => {
  const judge = contentJudge(format, limits)
  return judge === undefined ? undefined : (content) => judge.judge(content).verdict
}
