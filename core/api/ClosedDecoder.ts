/**
 * A decoder that refuses keys its schema does not declare, at the price of an open one: the
 * known keys are checked with a Set, and only a body that has another key goes through the
 * decoder that names it ("include_domain: is not a known key (did you mean ...)"). Effect's
 * compiled decoder checks excess keys slower than it decodes the rest (test/bench/wires.ts).
 */
import { Result, type Schema } from "effect"
import { decoderFor } from "../schema/Decode.ts"
import type { InvalidInput } from "../schema/InvalidInput.ts"

export const closedDecoder = <S extends Schema.Codec<any, any, never, never>>(schema: S, root: string, keys: ReadonlyArray<string>) => {
  const known = new Set(keys)
  const open = decoderFor(schema, root, { compiled: true })
  const closed = decoderFor(schema, root, { unknownKeys: "error" })
  return (input: unknown): Result.Result<S["Type"], InvalidInput> => {
    if (typeof input === "object" && input !== null && !Array.isArray(input)) {
      for (const key in input) if (!known.has(key)) return closed(input)
    }
    return open(input)
  }
}
