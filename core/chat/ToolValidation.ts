/**
 * Trusted tool calls and structured output: tool-call arguments parsed and
 * validated against the tool's JSON Schema (@cfworker/json-schema, which
 * runs on Deno and Workers; its regexes on RE2, see JsonSchemaCheck, its
 * formats bounded, see SchemaFormats, and uniqueItems linear, see
 * UniqueItems), and JSON content checked against the response format.
 * Broken JSON can be repaired with jsonrepair. Every input is bounded first
 * (ValidationLimits): the schema is the client's and the arguments a model's
 * the client can steer. Plain functions; the pipeline decides the policy.
 * `requestSchemaProblem` checks a request's schemas when it arrives.
 */
import { dereference, type OutputUnit, validate } from "@cfworker/json-schema"
import { jsonrepair } from "jsonrepair"
import type { ResponseFormat, ToolCall, ToolDefinition } from "./ChatRequest.ts"
import { checkJsonSchema, describeSchemaProblem, draftOf, type SchemaProblem, withLinearRegExp } from "./JsonSchemaCheck.ts"
import { type PatternBudget, patternSizeProblem, patternWork, requestPatternBudget } from "./PatternSize.ts"
import { boundedFormatsOf, withBoundedFormats } from "./SchemaFormats.ts"
import { findInSchema, isSchemaNode, type SchemaNode } from "./SchemaWalk.ts"
import { PAIRWISE_TEXT, UniqueItemsGuard } from "./UniqueItems.ts"
import { defaultValidationLimits, jsonExtent, limitSetting, maximumValidationLimits, utf8BytesOver, type ValidationLimits } from "./ValidationLimits.ts"

export type Verdict =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string }

/** Keywords that only summarise errors found deeper; the deeper ones say what is wrong. */
const SUMMARY_KEYWORDS = new Set(["properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "items", "prefixItems", "allOf", "$ref", "$dynamicRef", "dependentSchemas"])

const describeErrors = (errors: ReadonlyArray<OutputUnit>): string =>
  errors
    .filter((e) => !SUMMARY_KEYWORDS.has(e.keyword))
    .slice(0, 3)
    .map((e) => {
      const where = e.instanceLocation === "#" ? "value" : e.instanceLocation.replace(/^#\//, "").replace(/\//g, ".")
      return `${where}: ${e.keyword === "false" ? "is not allowed here" : e.error}`
    })
    .join("; ")

/**
 * A schema ready to validate against: its lookup built once, and, when it
 * holds `uniqueItems`, its copy without the keyword and the guard that
 * decides between them. Compiling throws where the library cannot take it.
 */
class CompiledSchema {
  private readonly schema: unknown
  private readonly draft: "4" | "7" | "2019-09" | "2020-12"
  private readonly lookup: ReturnType<typeof dereference>
  private readonly unique: { readonly guard: UniqueItemsGuard; readonly stripped: unknown; readonly lookup: ReturnType<typeof dereference> } | undefined
  /** The formats it names whose checks are replaced by bounded ones. */
  readonly formats: ReadonlyArray<string>
  /** Whether it holds regexes the library builds with the global RegExp (pattern, patternProperties). */
  readonly patterns: boolean
  /** Regex steps per character of a value, at most (PatternSize.patternWork). */
  readonly patternWork: number

  constructor(schema: unknown) {
    this.schema = schema
    this.draft = draftOf(schema) ?? "2020-12"
    this.lookup = dereference(schema as never)
    this.formats = boundedFormatsOf(schema)
    const nodes: Array<SchemaNode> = []
    findInSchema(schema, (node) => void nodes.push(node))
    this.patterns = nodes.some((node) => node.pattern !== undefined || node.patternProperties !== undefined)
    this.patternWork = patternWork(nodes)
    const guarded = UniqueItemsGuard.of(schema, this.draft)
    this.unique = guarded === undefined ? undefined : { ...guarded, lookup: dereference(guarded.stripped as never) }
  }

  private run(value: unknown, schema: unknown, lookup: ReturnType<typeof dereference>) {
    return validate(value, schema as never, this.draft, lookup, false)
  }

  /** `textLength`: the characters of the JSON text the value was parsed from, which bound its arrays. */
  validate(value: unknown, limits: ValidationLimits, textLength: number): Verdict {
    const unique = this.unique
    let valid: boolean
    let errors: ReadonlyArray<OutputUnit>
    if (unique === undefined || (textLength <= PAIRWISE_TEXT && limits.maxUniqueItems >= PAIRWISE_TEXT / 2)) {
      ;({ valid, errors } = this.run(value, this.schema, this.lookup))
    }
    else {
      const outcome = unique.guard.check(value, limits.maxUniqueItems, limitSetting("maxUniqueItems"))
      if (outcome.kind === "refused") return { ok: false, error: outcome.error }
      if (outcome.kind === "whole") ({ valid, errors } = this.run(value, this.schema, this.lookup))
      else {
        ;({ valid, errors } = this.run(value, unique.stripped, unique.lookup))
        if (outcome.kind === "duplicates") {
          valid = false
          errors = [...outcome.errors, ...errors]
        }
      }
    }
    return valid ? { ok: true, value } : { ok: false, error: describeErrors(errors) }
  }
}

const compile = (schema: Record<string, unknown> | undefined): CompiledSchema => new CompiledSchema(schema ?? { type: "object" })

/** A schema's place in the request (the 400's `param`) and what is wrong with it. */
export interface RequestSchemaProblem {
  readonly param: string
  readonly message: string
}

/** Where a schema crosses the size or depth bound, as the rest of a 400 message. */
const extentProblem = (schema: unknown, limits: ValidationLimits): string | undefined => {
  const extent = jsonExtent(schema, limits.maxSchemaBytes, limits.maxSchemaDepth)
  if (extent.within) return undefined
  return extent.bound === "bytes"
    ? `must be at most ${limits.maxSchemaBytes} bytes as JSON (${limitSetting("maxSchemaBytes")}), got more`
    : `must be nested at most ${limits.maxSchemaDepth} levels deep as JSON (${limitSetting("maxSchemaDepth")}), got ${extent.found} or more`
}

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1")

/** The first regex of a schema too large to compile (PatternSize), charged to the request's budget; before any is compiled. */
const costlyPattern = (schema: unknown, budget: PatternBudget): SchemaProblem | undefined =>
  findInSchema(schema, (node, pointer) => {
    if (typeof node.pattern === "string") {
      const rule = patternSizeProblem(node.pattern, budget)
      if (rule !== undefined) return { pointer: `${pointer}/pattern`, rule, value: node.pattern }
    }
    if (isSchemaNode(node.patternProperties)) {
      for (const name in node.patternProperties) {
        const rule = patternSizeProblem(name, budget)
        if (rule !== undefined) return { pointer: `${pointer}/patternProperties/${escapePointer(name)}`, rule: `(the property name pattern) ${rule}`, value: name }
      }
    }
    return undefined
  })

const problemAt = (param: string, schema: unknown, limits: ValidationLimits, budget: PatternBudget): RequestSchemaProblem | undefined => {
  const tooLarge = extentProblem(schema, limits)
  if (tooLarge !== undefined) return { param, message: `${param}: ${tooLarge}` }
  const costly = costlyPattern(schema, budget)
  if (costly !== undefined) return { param, message: `${param}: must be a valid JSON Schema: ${describeSchemaProblem(costly)}` }
  // The size check bounds the nesting as JSON, which is at least the nesting of schemas.
  const problem = checkJsonSchema(schema, limits.maxSchemaDepth)
  if (problem !== undefined) return { param, message: `${param}: must be a valid JSON Schema: ${describeSchemaProblem(problem)}` }
  try {
    compile(schema as Record<string, unknown>)
    return undefined
  } catch (e) {
    return { param, message: `${param}: must be a valid JSON Schema: ${e instanceof Error ? e.message : String(e)}` }
  }
}

interface SchemaHolder {
  readonly tools?: ReadonlyArray<{ readonly function?: { readonly parameters?: unknown } | undefined }> | undefined
  readonly response_format?: ResponseFormat | undefined
}

/** Each request schema with its place in the request, until `check` finds something. */
const firstSchemaProblem = (request: SchemaHolder, check: (param: string, schema: unknown) => RequestSchemaProblem | undefined): RequestSchemaProblem | undefined => {
  const tools = request.tools ?? []
  for (let i = 0; i < tools.length; i++) {
    const parameters = tools[i]!.function?.parameters
    if (parameters === undefined) continue
    const problem = check(`tools[${i}].function.parameters`, parameters)
    if (problem !== undefined) return problem
  }
  const format = request.response_format
  if (format?.type === "json_schema" && format.json_schema.schema !== undefined)
    return check("response_format.json_schema.schema", format.json_schema.schema)
  return undefined
}

/**
 * The first tool `parameters` or `response_format` schema of a request that
 * cannot be evaluated (too large or too deep, invalid, an unsupported draft,
 * a regex RE2 refuses or that expands past its size, alone or with the
 * request's others), checked when the request arrives rather than when
 * the model answers. Without `limits`, the most the settings allow: the
 * gateway holds the request to the configured ones (schemaBoundProblem).
 */
export const requestSchemaProblem = (request: SchemaHolder, limits: ValidationLimits = maximumValidationLimits): RequestSchemaProblem | undefined => {
  const budget = requestPatternBudget()
  return firstSchemaProblem(request, (param, schema) => problemAt(param, schema, limits, budget))
}

/**
 * The first request schema over the size or depth bound, or with regexes too large to compile:
 * cheap (nothing is compiled), for a request whose schemas were checked on arrival.
 */
export const schemaBoundProblem = (request: SchemaHolder, limits: ValidationLimits): RequestSchemaProblem | undefined => {
  const budget = requestPatternBudget()
  return firstSchemaProblem(request, (param, schema) => {
    const tooLarge = extentProblem(schema, limits)
    if (tooLarge !== undefined) return { param, message: `${param}: ${tooLarge}` }
    const costly = costlyPattern(schema, budget)
    return costly === undefined ? undefined : { param, message: `${param}: must be a valid JSON Schema: ${describeSchemaProblem(costly)}` }
  })
}

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

const validateValue = (schema: CompiledSchema, value: unknown, limits: ValidationLimits, textLength: number): Verdict => {
  try {
    const run = () => schema.validate(value, limits, textLength)
    const bounded = schema.formats.length === 0 ? run : () => withBoundedFormats(schema.formats, run)
    return schema.patterns ? withLinearRegExp(bounded) : bounded()
  } catch (e) {
    if (e instanceof RangeError) return { ok: false, error: "the value is nested too deeply to check" }
    // A schema that slipped past the arrival check (e.g. a pattern RE2 refuses behind a remote $ref).
    return { ok: false, error: `the schema cannot be evaluated: ${e instanceof Error ? e.message : String(e)}` }
  }
}

/** A schema compiled without ever throwing (requests are checked on arrival; this is the backstop): one it cannot take rejects every value. */
const compileSafely = (schema: Record<string, unknown> | undefined): CompiledSchema => {
  try {
    return compile(schema)
  } catch {
    return new CompiledSchema(false)
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
