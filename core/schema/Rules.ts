/**
 * Schema building blocks whose every failure reads as one rule, so that a
 * wrong type and an out-of-range value give the same clear message. Each
 * also says its rule in JSON Schema (minimum, maximum, pattern ...), which
 * is what /openapi.json shows: the document and the decoder share one source.
 */
import { Schema } from "effect"

/**
 * A number, optionally integer, within bounds; `rule` is the message on any failure.
 * Bounded on both sides, it also checks isFinite: the same values pass (NaN and
 * the infinities fail a bound anyway), and JSON Schema gets `type: number` with
 * its bounds instead of Number's "or the string NaN/Infinity" (isInt does the same).
 */
export const ruledNumber = (rule: string, bounds: {
  readonly integer?: boolean
  readonly min?: number
  readonly exclusiveMin?: number
  readonly max?: number
  readonly exclusiveMax?: number
}) => {
  const bounded = (bounds.min !== undefined || bounds.exclusiveMin !== undefined) &&
    (bounds.max !== undefined || bounds.exclusiveMax !== undefined)
  const checks = []
  if (!bounds.integer && bounded) checks.push(Schema.isFinite({ message: rule }))
  if (bounds.integer) checks.push(Schema.isInt({ message: rule }))
  if (bounds.min !== undefined) checks.push(Schema.isGreaterThanOrEqualTo(bounds.min, { message: rule }))
  if (bounds.exclusiveMin !== undefined) checks.push(Schema.isGreaterThan(bounds.exclusiveMin, { message: rule }))
  if (bounds.max !== undefined) checks.push(Schema.isLessThanOrEqualTo(bounds.max, { message: rule }))
  if (bounds.exclusiveMax !== undefined) checks.push(Schema.isLessThan(bounds.exclusiveMax, { message: rule }))
  const base = Schema.Number.annotate({ message: rule, description: rule })
  return checks.length === 0 ? base : base.check(...(checks as [typeof checks[0], ...Array<typeof checks[0]>]))
}

/** A string with a rule message on any failure. */
export const ruledString = (rule: string) => Schema.String.annotate({ message: rule, description: rule })

/**
 * A pattern check that also shows as `pattern` in JSON Schema (Schema.isPattern
 * emits it only for RegExps with the `u` flag). For ASCII patterns, whose
 * meaning is the same with or without `u`.
 */
export const ruledPattern = (regExp: RegExp, rule: string) =>
  Schema.isPattern(regExp, { message: rule, toJsonSchema: () => ({ pattern: regExp.source }) })

/**
 * A check that never fails and only says `fragment` in JSON Schema: for a rule
 * the decoder enforces after a transformation (e.g. on the trimmed string), so
 * that the encoded side, which the document shows, still names it.
 */
export const documented = <T>(fragment: Record<string, unknown>) =>
  Schema.makeFilter<T>(() => undefined, { toJsonSchema: () => fragment })
