/**
 * Trusted tool calls and structured output: tool-call arguments parsed and
 * validated against the tool's JSON Schema (@cfworker/json-schema, which
 * runs on Deno and Workers; its regexes on RE2, see JsonSchemaCheck), and
 * JSON content checked against the response format. Broken JSON can be
 * repaired with jsonrepair. Plain functions; the pipeline decides the policy.
 * `requestSchemaProblem` checks a request's schemas when it arrives.
 */
import { type OutputUnit, Validator } from "@cfworker/json-schema"
import { Predicate } from "effect"
import { jsonrepair } from "jsonrepair"
import type { ResponseFormat, ToolCall, ToolDefinition } from "./ChatRequest.ts"
import { checkJsonSchema, describeSchemaProblem, draftOf, withLinearRegExp } from "./JsonSchemaCheck.ts"

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

const compile = (schema: Record<string, unknown> | undefined): Validator =>
  new Validator((schema ?? { type: "object" }) as never, draftOf(schema) ?? "2020-12", false)

/** A schema's place in the request (the 400's `param`) and what is wrong with it. */
export interface RequestSchemaProblem {
  readonly param: string
  readonly message: string
}

const problemAt = (param: string, schema: unknown): RequestSchemaProblem | undefined => {
  const problem = checkJsonSchema(schema)
  if (problem !== undefined) return { param, message: `${param}: must be a valid JSON Schema: ${describeSchemaProblem(problem)}` }
  try {
    compile(schema as Record<string, unknown>)
    return undefined
  } catch (e) {
    return { param, message: `${param}: must be a valid JSON Schema: ${e instanceof Error ? e.message : String(e)}` }
  }
}

/**
 * The first tool `parameters` or `response_format` schema of a request that
 * cannot be evaluated (invalid, an unsupported draft, a regex RE2 refuses),
 * checked when the request arrives rather than when the model answers.
 */
export const requestSchemaProblem = (request: {
  readonly tools?: ReadonlyArray<{ readonly function?: { readonly parameters?: unknown } | undefined }> | undefined
  readonly response_format?: ResponseFormat | undefined
}): RequestSchemaProblem | undefined => {
  const tools = request.tools ?? []
  for (let i = 0; i < tools.length; i++) {
    const parameters = tools[i]!.function?.parameters
    if (parameters === undefined) continue
    const problem = problemAt(`tools[${i}].function.parameters`, parameters)
    if (problem !== undefined) return problem
  }
  const format = request.response_format
  if (format?.type === "json_schema" && format.json_schema.schema !== undefined)
    return problemAt("response_format.json_schema.schema", format.json_schema.schema)
  return undefined
}

const parseJson = (text: string): Verdict => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (e) {
    return { ok: false, error: `is not valid JSON (${e instanceof Error ? e.message : String(e)})` }
  }
}

const validateValue = (validator: Validator, value: unknown): Verdict => {
  let result: ReturnType<Validator["validate"]>
  try {
    result = withLinearRegExp(() => validator.validate(value))
  } catch (e) {
    // A schema that slipped past the arrival check (e.g. a pattern RE2 refuses behind a remote $ref).
    return { ok: false, error: `the schema cannot be evaluated: ${e instanceof Error ? e.message : String(e)}` }
  }
  return result.valid ? { ok: true, value } : { ok: false, error: describeErrors(result.errors) }
}

/** A validator that never throws at compile time (requests are checked on arrival; this is the backstop): a schema it cannot take rejects every value. */
const compileSafely = (schema: Record<string, unknown> | undefined): Validator => {
  try {
    return compile(schema)
  } catch {
    return new Validator(false as never, "2020-12", false)
  }
}

/** The tools of one request, their schemas compiled once. */
export class ToolCatalog {
  private readonly validators = new Map<string, Validator>()
  readonly names: ReadonlyArray<string>

  constructor(tools: ReadonlyArray<ToolDefinition> | undefined) {
    for (const tool of tools ?? []) this.validators.set(tool.function.name, compileSafely(tool.function.parameters))
    this.names = [...this.validators.keys()]
  }

  /** Checks one call: the tool exists, its arguments are JSON and match the schema. */
  check(call: ToolCall): Verdict {
    const validator = this.validators.get(call.function.name)
    if (validator === undefined) {
      return { ok: false, error: `calls ${JSON.stringify(call.function.name)}, which is not one of the request's tools (${this.names.map((n) => JSON.stringify(n)).join(", ") || "none"})` }
    }
    const parsed = parseJson(call.function.arguments)
    if (!parsed.ok) return { ok: false, error: `arguments ${parsed.error}` }
    const valid = validateValue(validator, parsed.value)
    return valid.ok ? valid : { ok: false, error: `arguments do not match the schema of ${call.function.name}: ${valid.error}` }
  }

  /** Repairs broken JSON arguments (when the tool exists), then checks the result. */
  repair(call: ToolCall): { readonly call: ToolCall; readonly verdict: Verdict } {
    if (!this.validators.has(call.function.name)) return { call, verdict: this.check(call) }
    let repaired: string
    try {
      repaired = jsonrepair(call.function.arguments)
    } catch {
      return { call, verdict: this.check(call) }
    }
    const fixed: ToolCall = { ...call, function: { ...call.function, arguments: repaired } }
    return { call: fixed, verdict: this.check(fixed) }
  }
}

/** Checks content against a json_object or json_schema response format; text formats always pass. */
export const makeContentCheck = (format: ResponseFormat | undefined): ((content: string) => Verdict) | undefined => {
  if (format === undefined || format.type === "text") return undefined
  if (format.type === "json_object") {
    return (content) => {
      const parsed = parseJson(content)
      if (!parsed.ok) return { ok: false, error: `content ${parsed.error}` }
      return Predicate.isObject(parsed.value)
        ? parsed
        : { ok: false, error: "content is JSON but not an object, as json_object requires" }
    }
  }
  const validator = compileSafely(format.json_schema.schema ?? {})
  return (content) => {
    const parsed = parseJson(content)
    if (!parsed.ok) return { ok: false, error: `content ${parsed.error}` }
    const valid = validateValue(validator, parsed.value)
    return valid.ok ? valid : { ok: false, error: `content does not match the schema ${JSON.stringify(format.json_schema.name)}: ${valid.error}` }
  }
}

/** Repairs broken JSON content, if jsonrepair can. */
export const repairJson = (text: string): string | undefined => {
  try {
    return jsonrepair(text)
  } catch {
    return undefined
  }
}
