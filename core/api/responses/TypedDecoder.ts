/**
 * Decoding objects told apart by their `type` (input items, content parts, tools, text formats):
 * the decoder picks the member schema by `type` and decodes with it alone, so that a broken item
 * is named by its own rule (`input[2].call_id: is required`), not by the first member a union
 * tried. A type this server knows but does not serve is refused with its own sentence.
 */
import { Result, type Schema } from "effect"
import { decoderFor } from "../../schema/Decode.ts"
import { invalid, InvalidInput, previewValue } from "../../schema/InvalidInput.ts"

const ROOT = "request body"

/** Decodes `input` found at `path` (`input[2]`, `tools[0]`). */
export type PathDecoder<A> = (input: unknown, path: string) => Result.Result<A, InvalidInput>

/** `path` + a field path relative to it (`call_id`, `[0].text`). */
const joinPath = (path: string, inner: string): string =>
  inner === "" ? path : path === "" ? inner : inner.startsWith("[") ? path + inner : `${path}.${inner}`

/**
 * A schema's decoder at a path: errors name the field from the request's root. `closed`: a key
 * the schema does not declare is refused (configuration the client writes, such as a tool),
 * not ignored (items a client echoes back from an earlier answer).
 */
export const pathDecoder = <S extends Schema.Codec<any, any, never, never>>(schema: S, options: { readonly closed?: boolean } = {}): PathDecoder<S["Type"]> => {
  // Root "": a failure's message is `<field path>: <rule>[, got <value>]`, its tail kept after the full path.
  const decode = decoderFor(schema, "", { compiled: true, unknownKeys: options.closed === true ? "error" : "ignore" })
  return (input, path) => {
    const result = decode(input)
    if (Result.isSuccess(result)) return result
    const { path: inner, rule, message } = result.failure
    const at = joinPath(path, inner)
    return Result.fail(new InvalidInput({ reason: "invalid", root: ROOT, path: at, rule, message: `${at === "" ? ROOT : at}${message.slice(inner.length)}` }))
  }
}

export interface TypedMembers<A> {
  /** The decoder of each type served. */
  readonly members: Readonly<Record<string, PathDecoder<A>>>
  /** Types known but not served, with why (shown after the path of `type`). */
  readonly refused?: Readonly<Record<string, string>>
  /** The type of an object that names none (a message item's `type` may be left out). */
  readonly untyped?: string
  /** What the object must be, for an input that is not an object or names no type. */
  readonly rule: string
}

/** A decoder that dispatches on `type` (see the module comment). */
export const typedDecoder = <A>(spec: TypedMembers<A>): PathDecoder<A> => {
  const served = Object.keys(spec.members)
  const typeRule = `must be ${served.length === 1 ? served[0] : `one of ${served.join(", ")}`}`
  return (input, path) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return Result.fail(invalid(ROOT, path, `${spec.rule}, got ${previewValue(input)}`))
    }
    const type = (input as Record<string, unknown>).type ?? spec.untyped
    const typePath = joinPath(path, "type")
    if (typeof type !== "string") {
      return Result.fail(type === undefined ? invalid(ROOT, typePath, "is required") : invalid(ROOT, typePath, `${typeRule}, got ${previewValue(type)}`))
    }
    const member = spec.members[type]
    if (member !== undefined) return member(input, path)
    const refusal = spec.refused?.[type]
    return Result.fail(invalid(ROOT, typePath, refusal ?? `${typeRule}, got ${previewValue(type)}`))
  }
}

/** Each element of an array through `decode`, at `path[i]`; the first failure wins. */
export const decodeEach = <A>(items: ReadonlyArray<unknown>, path: string, decode: PathDecoder<A>): Result.Result<Array<A>, InvalidInput> => {
  const out: Array<A> = []
  for (let i = 0; i < items.length; i++) {
    const result = decode(items[i], `${path}[${i}]`)
    if (Result.isFailure(result)) return Result.fail(result.failure)
    out.push(result.success)
  }
  return Result.succeed(out)
}
