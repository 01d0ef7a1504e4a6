/**
 * Trusted tool calls and structured output: tool-call arguments parsed and
 * validated against the tool's JSON Schema (@cfworker/json-schema, which
 * runs on Deno and Workers), and JSON content checked against the response
 * format. Broken JSON can be repaired with jsonrepair. Plain functions; the
 * pipeline decides the policy.
 */
import { type OutputUnit, Validator } from "@cfworker/json-schema"
import { Predicate } from "effect"
import { jsonrepair } from "jsonrepair"
import type { ResponseFormat, ToolCall, ToolDefinition } from "./ChatRequest.ts"

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
  new Validator((schema ?? { type: "object" }) as never, "2020-12", false)

const parseJson = (text: string): Verdict => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (e) {
    return { ok: false, error: `is not valid JSON (${e instanceof Error ? e.message : String(e)})` }
  }
}

const validateValue = (validator: Validator, value: unknown): Verdict => {
  const result = validator.validate(value)
  return result.valid ? { ok: true, value } : { ok: false, error: describeErrors(result.errors) }
}

/** The tools of one request, their schemas compiled once. */
export class ToolCatalog {
  private readonly validators = new Map<string, Validator>()
  readonly names: ReadonlyArray<string>

  constructor(tools: ReadonlyArray<ToolDefinition> | undefined) {
    for (const tool of tools ?? []) this.validators.set(tool.function.name, compile(tool.function.parameters))
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
  const validator = compile(format.json_schema.schema ?? {})
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
