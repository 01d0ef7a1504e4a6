/**
 * The JSON Schemas a request brings (tool `parameters`, a `json_schema`
 * response format), checked on arrival so that a bad one is a 400 naming
 * it instead of a 500 or a silent pass later: within the size and depth
 * bounds, with regexes small enough to compile (PatternSize), valid
 * (JsonSchemaCheck), and compiled once by the validator.
 */
import type { ResponseFormat } from "./ChatRequest.ts"
import { compileSchema } from "./CompiledSchema.ts"
import { checkJsonSchema, describeSchemaProblem, type SchemaProblem } from "./JsonSchemaCheck.ts"
import { type PatternBudget, patternSizeProblem, requestPatternBudget } from "./PatternSize.ts"
import { findInSchema, isSchemaNode } from "./SchemaWalk.ts"
import { jsonExtent, limitSetting, maximumValidationLimits, type ValidationLimits } from "./ValidationLimits.ts"

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
    compileSchema(schema as Record<string, unknown>)
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
