/**
 * Turns a Schema decoding failure into an ApiError whose message names the
 * field and the rule, e.g. `num: must be an integer from 1 to 100, got 101`.
 */
import { SchemaIssue } from "effect"
import { ApiError } from "./ApiError.ts"

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

/** A short, safe rendering of the offending value (never the whole body). */
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

/**
 * The first issue of a failed decode as an ApiError. `root` names the body
 * for issues about the body itself ("request body: must be an object").
 */
export const invalidInput = (issue: SchemaIssue.Issue, input: unknown, root = "request body"): ApiError => {
  const first = formatter(issue).issues[0]
  const path = (first?.path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p)) as Array<PropertyKey>
  const field = path.length === 0 ? root : formatPath(path)
  const rule = first?.message ?? "is invalid"
  const received = valueAt(input, path)
  const got = received.found && rule !== "is required" ? `, got ${previewValue(received.value)}` : ""
  return new ApiError({
    kind: "invalid_request",
    message: `${field}: ${rule}${got}`,
    param: path.length === 0 ? null : field
  })
}
