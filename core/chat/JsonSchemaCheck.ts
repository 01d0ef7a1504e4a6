/**
 * JSON Schemas that arrive with a request (tool `parameters`, a
 * `json_schema` response format), checked on arrival so that a bad one is a
 * 400 naming it instead of a 500 or a silent pass later, and regular
 * expressions run in linear time (RE2, via re2js): a schema's `pattern` is
 * attacker-chosen and the string it is matched against model-chosen, so a
 * backtracking engine could block the event loop for minutes (`^(a+)+$`).
 */
import { RE2JS } from "re2js"
import { patternSize } from "./PatternSize.ts"

// Not effect's Predicate: job threads load this module (ValidationJobs), and need nothing more.
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** What is wrong with a schema: where (a JSON Pointer into it), the rule, and the value found there. */
export interface SchemaProblem {
  readonly pointer: string
  readonly rule: string
  readonly value: unknown
}

/** `$schema` values we evaluate, and the draft each one means to the validator. */
export const SUPPORTED_DRAFTS: Readonly<Record<string, "4" | "7" | "2019-09" | "2020-12">> = {
  "https://json-schema.org/draft/2020-12/schema": "2020-12",
  "https://json-schema.org/draft/2019-09/schema": "2019-09",
  "http://json-schema.org/draft-07/schema": "7",
  "http://json-schema.org/draft-04/schema": "4"
}

/** The draft a schema declares (trailing `#` and http/https ignored), 2020-12 when it declares none. */
export const draftOf = (schema: unknown): "4" | "7" | "2019-09" | "2020-12" | undefined => {
  if (!isObject(schema) || !("$schema" in schema) || schema.$schema === undefined) return "2020-12"
  if (typeof schema.$schema !== "string") return undefined
  const uri = schema.$schema.replace(/#$/, "")
  return SUPPORTED_DRAFTS[uri] ?? SUPPORTED_DRAFTS[uri.replace(/^https:/, "http:")] ?? SUPPORTED_DRAFTS[uri.replace(/^http:/, "https:")]
}

// --- linear-time regular expressions -------------------------------------------

const MAX_CACHED = 1024
/** Steps (PatternSize) the cached programs may hold together: memory grows with a program's size, not with the count. */
const MAX_CACHED_STEPS = 100_000
const compiled = new Map<string, { readonly re: RE2JS; readonly steps: number }>()
let cachedSteps = 0

const flagBits = (flags: string): number =>
  (flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0) | (flags.includes("s") ? RE2JS.DOTALL : 0) |
  (flags.includes("m") ? RE2JS.MULTILINE : 0)

/** Compiles an ECMAScript pattern for RE2; throws (RE2JSSyntaxException) where RE2 cannot run it in linear time. */
export const compileLinear = (pattern: string, flags = ""): RE2JS => {
  const key = `${flags}/${pattern}`
  const cached = compiled.get(key)
  if (cached !== undefined) return cached.re
  const re = RE2JS.compile(RE2JS.translateRegExp(pattern), flagBits(flags))
  // Schemas repeat their patterns across requests; the cache bounds memory, not correctness.
  const steps = patternSize(pattern)
  while (compiled.size > 0 && (compiled.size >= MAX_CACHED || cachedSteps + steps > MAX_CACHED_STEPS)) {
    const [oldest, entry] = compiled.entries().next().value!
    compiled.delete(oldest)
    cachedSteps -= entry.steps
  }
  compiled.set(key, { re, steps })
  cachedSteps += steps
  return re
}

/** Why RE2 refuses a pattern, or undefined when it runs it. */
export const linearPatternProblem = (pattern: string): string | undefined => {
  try {
    compileLinear(pattern, "u")
    return undefined
  } catch (e) {
    const detail = e instanceof Error ? e.message.replace(/^error parsing regexp: /, "") : String(e)
    return `must be a regular expression that runs in linear time (no lookaround, no backreferences, repetition counts up to 1000): ${detail}`
  }
}

/**
 * The RegExp the validator sees while `run` runs: `new RegExp(p, f).test(s)`
 * goes to RE2. @cfworker/json-schema builds its `pattern` and
 * `patternProperties` regexes with the global constructor at validation time
 * and offers no hook; validation is synchronous, so the swap cannot leak
 * into other code.
 */
class LinearRegExp {
  private readonly re: RE2JS
  constructor(pattern: string | RegExp, flags?: string) {
    try {
      this.re = compileLinear(typeof pattern === "string" ? pattern : pattern.source, flags ?? "")
    } catch (e) {
      throw new SyntaxError(e instanceof Error ? e.message : String(e))
    }
  }
  test(input: string): boolean {
    return this.re.test(String(input))
  }
}

export const withLinearRegExp = <A>(run: () => A): A => {
  const original = globalThis.RegExp
  globalThis.RegExp = LinearRegExp as unknown as RegExpConstructor
  try {
    return run()
  } finally {
    globalThis.RegExp = original
  }
}

// --- the structural check -----------------------------------------------------------

/** Schema levels (each keyword that holds schemas is one) checked when the caller names no bound. */
const MAX_DEPTH = 64
const TYPES = new Set(["null", "boolean", "object", "array", "number", "string", "integer"])

const schemaKeywords = ["not", "if", "then", "else", "additionalProperties", "unevaluatedProperties", "propertyNames", "contains", "additionalItems", "unevaluatedItems"] as const
const schemaMaps = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"] as const
const schemaArrays = ["allOf", "anyOf", "oneOf", "prefixItems"] as const
const countKeywords = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"] as const
const numberKeywords = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] as const

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1")
const isCount = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0

/** Follows a local `$ref` ("#", "#/a/b"); true when it names something in the document. */
const resolvesLocally = (root: unknown, ref: string): boolean => {
  if (ref === "#") return true
  if (!ref.startsWith("#/")) return true // anchors and $id-relative refs: the validator resolves them or fails at compile
  let node: unknown = root
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~")
    if (Array.isArray(node)) node = node[Number(key)]
    else if (isObject(node)) node = (node as Record<string, unknown>)[key]
    else return false
    if (node === undefined) return false
  }
  return true
}

/**
 * The first problem found in a JSON Schema, or undefined. Checks what the
 * validator would otherwise trip over or silently ignore: the draft, the
 * shape of every keyword that holds schemas, types, counts, `required`,
 * `enum`, local `$ref`s, nesting depth (at most `maxDepth` schema levels),
 * and that every regex runs on RE2.
 */
export const checkJsonSchema = (root: unknown, maxDepth = MAX_DEPTH): SchemaProblem | undefined => {
  if (draftOf(root) === undefined) {
    const declared = isObject(root) ? (root as Record<string, unknown>).$schema : undefined
    return { pointer: "/$schema", rule: `must name a supported draft (2020-12, 2019-09, draft-07 or draft-04)`, value: declared }
  }
  const visit = (node: unknown, pointer: string, depth: number): SchemaProblem | undefined => {
    if (typeof node === "boolean") return undefined
    if (!isObject(node) || Array.isArray(node)) return { pointer, rule: "must be a schema (an object or a boolean)", value: node }
    if (depth > maxDepth) return { pointer, rule: `must be nested at most ${maxDepth} levels deep`, value: "…" }
    const s = node as Record<string, unknown>
    const at = (key: string) => `${pointer}/${escapePointer(key)}`
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type]
      if (types.length === 0 || !types.every((t) => typeof t === "string" && TYPES.has(t)))
        return { pointer: at("type"), rule: "must be one of null, boolean, object, array, number, string, integer (or an array of them)", value: s.type }
    }
    if (s.pattern !== undefined) {
      if (typeof s.pattern !== "string") return { pointer: at("pattern"), rule: "must be a string", value: s.pattern }
      const problem = linearPatternProblem(s.pattern)
      if (problem !== undefined) return { pointer: at("pattern"), rule: problem, value: s.pattern }
    }
    if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((r) => typeof r === "string")))
      return { pointer: at("required"), rule: "must be an array of property names", value: s.required }
    if (s.enum !== undefined && !Array.isArray(s.enum)) return { pointer: at("enum"), rule: "must be an array", value: s.enum }
    for (const key of countKeywords)
      if (s[key] !== undefined && !isCount(s[key])) return { pointer: at(key), rule: "must be a non-negative integer", value: s[key] }
    for (const key of numberKeywords)
      if (s[key] !== undefined && typeof s[key] !== "number" && typeof s[key] !== "boolean")
        return { pointer: at(key), rule: "must be a number", value: s[key] }
    if (s.multipleOf !== undefined && !(typeof s.multipleOf === "number" && s.multipleOf > 0))
      return { pointer: at("multipleOf"), rule: "must be a number > 0", value: s.multipleOf }
    if (s.$ref !== undefined) {
      if (typeof s.$ref !== "string") return { pointer: at("$ref"), rule: "must be a string", value: s.$ref }
      if (!resolvesLocally(root, s.$ref)) return { pointer: at("$ref"), rule: "must point at a part of this schema", value: s.$ref }
    }
    for (const key of schemaKeywords) {
      if (s[key] === undefined) continue
      const problem = visit(s[key], at(key), depth + 1)
      if (problem !== undefined) return problem
    }
    for (const key of schemaMaps) {
      const map = s[key]
      if (map === undefined) continue
      if (!isObject(map) || Array.isArray(map)) return { pointer: at(key), rule: "must be an object of schemas", value: map }
      for (const [name, sub] of Object.entries(map)) {
        if (key === "patternProperties") {
          const problem = linearPatternProblem(name)
          if (problem !== undefined) return { pointer: `${at(key)}/${escapePointer(name)}`, rule: `(the property name pattern) ${problem}`, value: name }
        }
        const problem = visit(sub, `${at(key)}/${escapePointer(name)}`, depth + 1)
        if (problem !== undefined) return problem
      }
    }
    for (const key of schemaArrays) {
      const list = s[key]
      if (list === undefined) continue
      if (!Array.isArray(list) || (key !== "prefixItems" && list.length === 0))
        return { pointer: at(key), rule: "must be a non-empty array of schemas", value: list }
      for (let i = 0; i < list.length; i++) {
        const problem = visit(list[i], `${at(key)}/${i}`, depth + 1)
        if (problem !== undefined) return problem
      }
    }
    if (s.items !== undefined) {
      // An array of schemas is the older drafts' tuple form.
      const items = Array.isArray(s.items) ? s.items : [s.items]
      for (let i = 0; i < items.length; i++) {
        const problem = visit(items[i], Array.isArray(s.items) ? `${at("items")}/${i}` : at("items"), depth + 1)
        if (problem !== undefined) return problem
      }
    }
    return undefined
  }
  return visit(root, "", 0)
}

/** A problem as the rest of a 400 message: where in the schema, the rule, and the value. */
export const describeSchemaProblem = (problem: SchemaProblem): string => {
  const value = JSON.stringify(problem.value) ?? String(problem.value)
  return `${problem.pointer === "" ? "the schema" : problem.pointer} ${problem.rule}, got ${value.length > 80 ? `${value.slice(0, 77)}...` : value}`
}
