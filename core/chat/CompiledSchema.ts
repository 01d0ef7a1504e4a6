/**
 * A client's JSON Schema ready to validate model output against, with
 * @cfworker/json-schema (which runs on Deno and Workers): its regexes on RE2
 * (JsonSchemaCheck), its formats bounded (SchemaFormats), `uniqueItems`
 * linear (UniqueItems), and what its regexes may cost per character of a
 * value (PatternSize), which decides where a check runs.
 *
 * No runtime import of effect here: job threads load this module.
 */
import { dereference, type OutputUnit, validate } from "@cfworker/json-schema"
import { draftOf, withLinearRegExp } from "./JsonSchemaCheck.ts"
import { patternWork } from "./PatternSize.ts"
import { boundedFormatsOf, withBoundedFormats } from "./SchemaFormats.ts"
import { findInSchema, type SchemaNode } from "./SchemaWalk.ts"
import { PAIRWISE_TEXT, UniqueItemsGuard } from "./UniqueItems.ts"
import { limitSetting, type ValidationLimits } from "./ValidationLimits.ts"

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
export class CompiledSchema {
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

export const compileSchema = (schema: Record<string, unknown> | undefined): CompiledSchema => new CompiledSchema(schema ?? { type: "object" })

/** A value checked against a compiled schema; never throws (a schema that cannot be evaluated, a value nested past the stack: invalid, said so). */
export const validateValue = (schema: CompiledSchema, value: unknown, limits: ValidationLimits, textLength: number): Verdict => {
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
export const compileSafely = (schema: Record<string, unknown> | undefined): CompiledSchema => {
  try {
    return compileSchema(schema)
  } catch {
    return new CompiledSchema(false)
  }
}
