/**
 * Schema building blocks whose every failure reads as one rule, so that a
 * wrong type and an out-of-range value give the same clear message.
 */
import { Schema } from "effect"

/** A number, optionally integer, within bounds; `rule` is the message on any failure. */
export const ruledNumber = (rule: string, bounds: {
  readonly integer?: boolean
  readonly min?: number
  readonly exclusiveMin?: number
  readonly max?: number
  readonly exclusiveMax?: number
}) => {
  const checks = []
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
