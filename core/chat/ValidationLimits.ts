/**
 * The bounds on chat validation: the schema comes from the client and the
 * arguments from a model the client can steer, so every dimension whose
 * cost grows with the input has a limit, each one a setting
 * (`chat.validation.*`) named in the refusal. Defaults keep each check on
 * the answering thread within a few milliseconds
 * (test/bench/toolValidation.ts); larger ones run as jobs with a deadline.
 * The maximums are what the config file may raise them to.
 */

export interface ValidationLimits {
  /** Bytes (UTF-8) of one tool call's arguments, or of JSON content, that are parsed and validated. */
  readonly maxArgumentBytes: number
  /** Bytes of broken JSON handed to jsonrepair, whose work grows faster than the input. */
  readonly maxRepairBytes: number
  /** Bytes of one request schema (a tool's parameters, a response format) as JSON. */
  readonly maxSchemaBytes: number
  /** Nesting depth of one request schema as JSON (objects and arrays). */
  readonly maxSchemaDepth: number
  /** Items of an array checked against `uniqueItems`. */
  readonly maxUniqueItems: number
  /** Bytes of arguments or content from which checking and repair run as a job, off the answering thread (when the server has job threads). */
  readonly jobThresholdBytes: number
  /** How long such a job may take before it is ended and the output judged invalid. */
  readonly jobDeadlineMs: number
}

export const defaultValidationLimits: ValidationLimits = {
  maxArgumentBytes: 256 * 1024,
  maxRepairBytes: 8 * 1024,
  maxSchemaBytes: 128 * 1024,
  maxSchemaDepth: 64,
  maxUniqueItems: 10_000,
  jobThresholdBytes: 64 * 1024,
  jobDeadlineMs: 5_000
}

/** The most each setting may be raised to (the config file's rule, and the arrival check's own bound). */
export const maximumValidationLimits: ValidationLimits = {
  maxArgumentBytes: 4 * 1024 * 1024,
  // Repair above the job threshold runs on a job thread, ended at its deadline.
  maxRepairBytes: 1024 * 1024,
  maxSchemaBytes: 4 * 1024 * 1024,
  maxSchemaDepth: 512,
  maxUniqueItems: 1_000_000,
  jobThresholdBytes: 16 * 1024 * 1024,
  jobDeadlineMs: 120_000
}

/** The setting's name as a refusal names it. */
export const limitSetting = (limit: keyof ValidationLimits): string => `chat.validation.${limit}`

/** UTF-8 bytes of a string, counted only as far as needed to tell whether it exceeds `limit`. */
export const utf8BytesOver = (text: string, limit: number): number | undefined => {
  // Each UTF-16 unit is one to three bytes: most strings are decided by their length alone.
  if (text.length > limit) return utf8Bytes(text)
  if (text.length * 3 <= limit) return undefined
  const bytes = utf8Bytes(text)
  return bytes > limit ? bytes : undefined
}

const utf8Bytes = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit < 0xdc00 && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next < 0xe000) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

/** How far a JSON value reaches: its size as JSON text and its nesting depth, or the first bound it crosses. */
export type JsonExtent =
  | { readonly within: true; readonly bytes: number; readonly depth: number }
  | { readonly within: false; readonly bound: "bytes" | "depth"; readonly found: number }

/**
 * Measures a parsed JSON value without recursion (a client's schema may be
 * nested deeper than the stack), stopping at the first bound crossed. Bytes
 * are counted as the compact JSON text would be, strings by UTF-8 length
 * without escapes: close enough for a bound, and never below the real size
 * by more than the escapes.
 */
export const jsonExtent = (value: unknown, maxBytes: number, maxDepth: number): JsonExtent => {
  let bytes = 0
  let deepest = 0
  const stack: Array<unknown> = [value]
  const depths: Array<number> = [0]
  while (stack.length > 0) {
    const node = stack.pop()
    const depth = depths.pop()!
    if (node === null || typeof node !== "object") {
      bytes += typeof node === "string" ? utf8Bytes(node) + 2 : typeof node === "number" ? String(node).length : typeof node === "boolean" ? (node ? 4 : 5) : 4
    } else {
      const level = depth + 1
      if (level > deepest) {
        deepest = level
        if (deepest > maxDepth) return { within: false, bound: "depth", found: deepest }
      }
      if (Array.isArray(node)) {
        bytes += 2 + Math.max(0, node.length - 1)
        for (let i = node.length - 1; i >= 0; i--) {
          stack.push(node[i])
          depths.push(level)
        }
      } else {
        const keys = Object.keys(node)
        bytes += 2 + Math.max(0, keys.length - 1)
        for (const key of keys) {
          bytes += utf8Bytes(key) + 3
          stack.push((node as Record<string, unknown>)[key])
          depths.push(level)
        }
      }
    }
    if (bytes > maxBytes) return { within: false, bound: "bytes", found: bytes }
  }
  return { within: true, bytes, depth: deepest }
}
