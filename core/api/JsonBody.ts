/**
 * Reads a JSON request body under a size limit and decodes it with a Schema.
 * Each way a body can be wrong has its own ApiError: wrong content type (415),
 * too large (413), not JSON (400 invalid_json), not valid for the schema (400).
 */
import { ByteSize, Effect, Result, Schema } from "effect"
import { HttpIncomingMessage, type HttpServerRequest } from "effect/http"
import { ApiError } from "./ApiError.ts"
import { decoderFor, parseJson } from "../schema/Decode.ts"
import { fromInvalidInput } from "./DomainErrors.ts"

/** Body limits per family: search bodies are tiny, chat bodies carry whole conversations. */
export const SEARCH_BODY_LIMIT = 1024 * 1024
export const CHAT_BODY_LIMIT = 16 * 1024 * 1024
/** MCP messages carry a tool's arguments: small, but a batch may hold several. */
export const MCP_BODY_LIMIT = 1024 * 1024

const describeBytes = (bytes: number) =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB (${bytes} bytes)` : `${bytes} bytes`

const tooLarge = (limit: number, size?: number) =>
  new ApiError({
    kind: "payload_too_large",
    message: `request body: must be at most ${describeBytes(limit)}${size === undefined ? "" : `, got ${size} bytes`}`,
    param: null
  })

/** application/json, or any +json type, with optional parameters (charset). */
const isJsonMediaType = (contentType: string): boolean => {
  const semi = contentType.indexOf(";")
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"))
}

const isBodyTooLarge = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "reason" in error &&
  typeof error.reason === "object" && error.reason !== null && "reason" in error.reason &&
  error.reason.reason === "BodyTooLarge"

/**
 * What is wrong with a body before it is read: a content type that is not JSON
 * (a missing one is read as JSON), or a declared length over `limit`.
 */
export const bodyHeadProblem = (contentType: string | undefined, contentLength: string | undefined, limit: number): ApiError | undefined => {
  if (contentType !== undefined && contentType !== "" && !isJsonMediaType(contentType)) {
    return new ApiError({
      kind: "unsupported_media_type",
      message: `Content-Type: must be application/json, got ${JSON.stringify(contentType.slice(0, 100))}`,
      param: null
    })
  }
  if (contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) > limit) return tooLarge(limit, Number(contentLength))
  return undefined
}

/** A body that turned out larger than `limit` while it was read. */
export const bodyTooLarge = (limit: number): ApiError => tooLarge(limit)

/** Reads the raw body text, refusing a body over `limit` bytes (its head was checked at admission: Admission). */
export const readJsonText = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<string, ApiError> =>
  request.text.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit)),
    Effect.mapError((error) =>
      isBodyTooLarge(error)
        ? tooLarge(limit)
        : new ApiError({ kind: "invalid_request", message: "request body: could not be read", param: null })
    )
  )

/** A decoder from an unknown body to the schema's type, failing with a 400 that names the field and the rule. */
export const makeBodyDecoder = <S extends Schema.Codec<any, any, never, never>>(schema: S) => {
  const decode = decoderFor(schema, "request body", { compiled: true })
  return (input: unknown): Result.Result<S["Type"], ApiError> => Result.mapError(decode(input), fromInvalidInput)
}

/** Parses and decodes a body's text, as a plain result (no Effect step: the hot routes branch on it). */
export const parseBody = <A>(text: string, decode: (input: unknown) => Result.Result<A, ApiError>): Result.Result<A, ApiError> => {
  const json = parseJson(text, "request body")
  return Result.isFailure(json) ? Result.fail(fromInvalidInput(json.failure)) : decode(json.success)
}

/** Parses and decodes a body's text. */
export const decodeJsonText = <A>(text: string, decode: (input: unknown) => Result.Result<A, ApiError>): Effect.Effect<A, ApiError> => {
  const decoded = parseBody(text, decode)
  return Result.isSuccess(decoded) ? Effect.succeed(decoded.success) : Effect.fail(decoded.failure)
}

/** Reads, parses and decodes a JSON body in one step. */
export const decodeJsonBody = <A>(
  request: HttpServerRequest.HttpServerRequest,
  limit: number,
  decode: (input: unknown) => Result.Result<A, ApiError>
): Effect.Effect<A, ApiError> => Effect.flatMap(readJsonText(request, limit), (text) => decodeJsonText(text, decode))
