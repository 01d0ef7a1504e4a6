/**
 * Decoding outside input with a root label: JSON text to a value, and a value
 * to a Schema's type, failing with one InvalidInput that names the field and
 * the rule. Request bodies, config files, key files and JSONL lines all go
 * through here, so a rule reads the same wherever it is broken.
 */
import { Result, Schema } from "effect"
import { SchemaJITCompiler } from "effect/schema"
import { fromSchemaIssue, invalid, type InvalidInput } from "./InvalidInput.ts"

/** Parses JSON text; the error names where parsing stopped. */
export const parseJson = (text: string, root: string): Result.Result<unknown, InvalidInput> => {
  if (text.trim() === "") return Result.fail(invalid(root, "", "is empty, expected a JSON object", "not_json"))
  try {
    return Result.succeed(JSON.parse(text))
  } catch (error) {
    const detail = error instanceof SyntaxError ? ` (${error.message})` : ""
    return Result.fail(invalid(root, "", `is not valid JSON${detail}`, "not_json"))
  }
}

/**
 * A decoder from unknown input to the schema's type that fails with the first issue.
 * `unknownKeys: "error"` (files an operator writes) names a key the schema does not
 * declare, with the nearest declared key; request bodies stay open, as OpenAI's are.
 * `compiled` (request bodies, decoded on every request): Effect's schema JIT compiler turns
 * the schema into plain code, since interpreted decoding is a real share of a chat request's
 * CPU (test/bench/gateway.ts);
 * a schema it cannot compile (a Schema decoding default, a `decodeTo` transformation) stays
 * interpreted, with the same answers.
 */
export const decoderFor = <S extends Schema.Codec<any, any, never, never>>(
  schema: S,
  root: string,
  options?: { readonly unknownKeys?: "ignore" | "error"; readonly compiled?: boolean }
) => {
  const parseOptions = { errors: "first", onExcessProperty: options?.unknownKeys ?? "ignore" } as const
  // Before any decoder is made from the schema: Effect's JIT compiles it on first use.
  if (options?.compiled === true) SchemaJITCompiler.enable(schema.ast)
  const decode = Schema.decodeUnknownResult(schema, parseOptions)
  const detailed = (input: unknown): Result.Result<S["Type"], InvalidInput> => {
    const result = decode(input)
    return Result.isSuccess(result) ? Result.succeed(result.success) : Result.fail(fromSchemaIssue(result.failure.issue, input, root))
  }
  if (options?.compiled !== true) return detailed
  // The compiled decoder answers a valid input without Effect's runtime. For an invalid one it
  // runs the interpreter itself and throws a SchemaError with the issue (naming the field and
  // the rule): that issue is used, not found a second time.
  const compiled = Schema.decodeUnknownSync(schema, parseOptions)
  return (input: unknown): Result.Result<S["Type"], InvalidInput> => {
    try {
      return Result.succeed(compiled(input))
    } catch (error) {
      return Schema.isSchemaError(error) ? Result.fail(fromSchemaIssue(error.issue, input, root)) : detailed(input)
    }
  }
}

/** Parses and decodes JSON text in one step. */
export const decodeJsonText = <A>(
  text: string,
  root: string,
  decode: (input: unknown) => Result.Result<A, InvalidInput>
): Result.Result<A, InvalidInput> => {
  const json = parseJson(text, root)
  return Result.isFailure(json) ? Result.fail(json.failure) : decode(json.success)
}
