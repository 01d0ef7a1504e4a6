/**
 * Outside input that failed its rules: a request body, a config file, a JSONL
 * line. The message names the field (or the root, when the input as a whole
 * is wrong) and the rule, e.g. `num: must be an integer from 1 to 100, got 101`.
 * Each room that reads input maps it once to its own error (core/api to the
 * wire, core/config to a setting, ingest to a failed item).
 */
import { Schema, SchemaIssue } from "effect"

export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  /** not_json: the text does not parse; invalid: parsed, but breaks a rule. */
  reason: Schema.Literals(["not_json", "invalid"]),
  /** What the input is, for messages about it as a whole: "request body", "file", "JSONL line". */
  root: Schema.String,
  /** The field at fault (`tools[3].function.name`), or "" for the input as a whole. */
  path: Schema.String,
  /** The rule that was broken, e.g. "must be an integer from 1 to 100". */
  rule: Schema.String,
  /** `<path or root>: <rule>[, got <value>]`: safe to show (a short preview, never the whole input). */
  message: Schema.String
}) {}

/** Edit distance, for "did you mean" on a misspelt key (keys are short: the quadratic table is fine). */
const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/** The declared key nearest to a misspelt one, when it is near enough to be a likely typo. */
export const nearestKey = (key: string, known: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined
}

const unexpectedKeyRule = (issue: SchemaIssue.UnexpectedKey, key: PropertyKey | undefined): string => {
  const known = issue.ast._tag === "Objects" ? issue.ast.propertySignatures.map((p) => String(p.name)) : []
  const suggestion = typeof key === "string" ? nearestKey(key, known) : undefined
  return suggestion === undefined ? "is not a known key" : `is not a known key (did you mean "${suggestion}"?)`
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    if (issue._tag === "MissingKey") return issue.annotations?.messageMissingKey ?? "is required"
    const message = SchemaIssue.defaultLeafHook(issue)
    // Default messages read "Expected string, got 1": we add the received value ourselves.
    return message.replace(/^Expected /, "must be ").replace(/, got .*$/s, "")
  }
})

/** `["tools", 3, "function", "name"]` -> `tools[3].function.name` */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): { found: boolean; value?: unknown } => {
  let current: unknown = input
  for (const key of path) {
    if (current === null || typeof current !== "object" || !(key in (current as object))) return { found: false }
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return { found: true, value: current }
}

/** A short, safe rendering of the offending value (never the whole input). */
export const previewValue = (value: unknown): string => {
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value
    return `${JSON.stringify(shown)} (a string)`
  }
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value)
  if (Array.isArray(value)) return `an array of ${value.length}`
  if (typeof value === "object") return "an object"
  return typeof value
}

/** The leaf of the first issue's branch (the one the formatter reports first). */
const firstLeaf = (issue: SchemaIssue.Issue): SchemaIssue.Issue | undefined => {
  let current: SchemaIssue.Issue | undefined = issue
  while (current !== undefined) {
    if (current._tag === "Pointer" || current._tag === "Filter" || current._tag === "Encoding") current = current.issue
    else if (current._tag === "Composite") current = current.issues[0]
    else return current
  }
  return undefined
}

/** A rule broken by the input as a whole or by one field, as an InvalidInput. */
export const invalid = (root: string, path: string, rule: string, reason: InvalidInput["reason"] = "invalid"): InvalidInput =>
  new InvalidInput({ reason, root, path, rule, message: `${path === "" ? root : path}: ${rule}` })

/** The first issue of a failed decode, naming the field, the rule and (briefly) the value received. */
export const fromSchemaIssue = (issue: SchemaIssue.Issue, input: unknown, root: string): InvalidInput => {
  const first = formatter(issue).issues[0]
  const keys = (first?.path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p)) as Array<PropertyKey>
  const path = formatPath(keys)
  const leaf = firstLeaf(issue)
  const rule = leaf?._tag === "UnexpectedKey" ? unexpectedKeyRule(leaf, keys[keys.length - 1]) : first?.message ?? "is invalid"
  const received = valueAt(input, keys)
  const got = received.found && rule !== "is required" ? `, got ${previewValue(received.value)}` : ""
  return new InvalidInput({ reason: "invalid", root, path, rule, message: `${path === "" ? root : path}: ${rule}${got}` })
}
