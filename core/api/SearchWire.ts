/**
 * Wire schemas of the two search endpoints: the request body (spec 2.1 with
 * our rules) and the success envelope (spec 2.2) around the domain data.
 */
import { Effect, Schema, SchemaGetter } from "effect"
import { SearchOptionFields } from "../search/SearchOptions.ts"
import { ImageResult, WebSearchData } from "../search/SearchResult.ts"
import { documented, ruledNumber } from "../schema/Rules.ts"

export const MAX_KEYWORDS_LENGTH = 1000
export const MAX_NUM = 100

const keywordsRule = `must be a non-empty string of at most ${MAX_KEYWORDS_LENGTH} characters`

/**
 * `keywords` is trimmed on decode; empty after trimming is refused. The length
 * rule applies to the trimmed text, so the document states it on the string as
 * sent (a non-space character, at most MAX_KEYWORDS_LENGTH).
 */
const Keywords = Schema.String.annotate({ message: keywordsRule, description: `Search keywords; ${keywordsRule} once trimmed.` }).pipe(
  Schema.check(documented<string>({ minLength: 1, maxLength: MAX_KEYWORDS_LENGTH, pattern: "\\S" })),
  Schema.decode({ decode: SchemaGetter.transform((s: string) => s.trim()), encode: SchemaGetter.transform((s: string) => s) }),
  Schema.check(
    Schema.isMinLength(1, { message: keywordsRule }),
    Schema.isMaxLength(MAX_KEYWORDS_LENGTH, { message: keywordsRule })
  )
)

export const SearchRequest = Schema.Struct({
  keywords: Keywords,
  num: ruledNumber(`must be an integer from 1 to ${MAX_NUM}`, { integer: true, min: 1, max: MAX_NUM }).annotate({ default: 10 }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed(10))
  ),
  /** Optional: freshness, language, region, safeSearch, sources, explain (live web search). */
  ...SearchOptionFields
}).annotate({ identifier: "SearchRequest", message: "must be a JSON object with keywords and optional num" })
export type SearchRequest = typeof SearchRequest.Type

const envelope = <S extends Schema.Top>(identifier: string, data: S) =>
  Schema.Struct({
    success: Schema.Literal(true),
    code: Schema.Literal("200"),
    message: Schema.Literal("success"),
    exception: Schema.Null,
    data,
    /** null unless the request sent options: then provenance (explain) or the options a source could not apply. */
    extra: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
      description: "null unless the request sent options: then {unapplied} (options a source could not apply), " +
        "or with explain: true the provenance {sources, results, unapplied, cache, ms}"
    })
  }).annotate({ identifier })

export const WebSearchResponse = envelope("WebSearchResponse", WebSearchData)
export const ImageSearchResponse = envelope("ImageSearchResponse", Schema.Array(ImageResult))

/** The success envelope with `extra` (provenance, unapplied options) when there is any; spec 2.2's otherwise. */
export const successEnvelopeWith = <A>(data: A, extra: unknown) =>
  extra === null ? successEnvelope(data) : { ...successEnvelope(data), extra }

/** The success envelope of spec 2.2 around any payload. */
export const successEnvelope = <A>(data: A) => ({
  success: true as const,
  code: "200" as const,
  message: "success" as const,
  exception: null,
  data,
  extra: null
})
