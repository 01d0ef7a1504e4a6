/**
 * Wire schemas of the two search endpoints: the request body (SearchBody, decoded into the
 * domain's SearchQuery) and the success envelope around the domain data.
 */
import { Schema } from "effect"
import { SearchOptionFields, type SearchQuery } from "../search/SearchQuery.ts"
import { ImageResult, WebSearchData } from "../search/SearchResult.ts"
import { ruledNumber } from "../schema/Rules.ts"

export const MAX_KEYWORDS_LENGTH = 1000
export const MAX_NUM = 100

const keywordsRule = `must be a non-empty string of at most ${MAX_KEYWORDS_LENGTH} characters`

/**
 * `keywords` counts trimmed: empty after trimming is refused, and the length rule applies to
 * the trimmed text, so the document states it on the string as sent (a non-space character,
 * at most MAX_KEYWORDS_LENGTH). The check reads the trimmed length and toSearchQuery trims: a
 * Schema transformation (or decoding default) would keep Effect's schema JIT from compiling
 * the request (core/schema/Decode.ts).
 */
const Keywords = Schema.String.annotate({ message: keywordsRule, description: `Search keywords; ${keywordsRule} once trimmed.` }).check(
  Schema.makeFilter((s: string) => {
    const length = s.trim().length
    return length >= 1 && length <= MAX_KEYWORDS_LENGTH ? undefined : keywordsRule
  }, { toJsonSchema: () => ({ minLength: 1, maxLength: MAX_KEYWORDS_LENGTH, pattern: "\\S" }) })
)

export const DEFAULT_NUM = 10

/**
 * The body of webSearch and imageSearch as sent: what the document shows and the decoder checks.
 * Its document name stays "SearchRequest", the name clients generated from the document use.
 */
export const SearchBody = Schema.Struct({
  keywords: Keywords,
  num: Schema.optionalKey(ruledNumber(`must be an integer from 1 to ${MAX_NUM}`, { integer: true, min: 1, max: MAX_NUM }).annotate({ default: DEFAULT_NUM })),
  /** Optional: freshness, language, region, safeSearch, includeDomains, excludeDomains, sources, explain; web search also content, maxCharsPerResult, maxTokens, expand. */
  ...SearchOptionFields
}).annotate({ identifier: "SearchRequest", message: "must be a JSON object with keywords and optional num" })

export type SearchBody = typeof SearchBody.Type

/** The decoded body as the search it asks for: keywords trimmed, `num` 10 when left out. */
export const toSearchQuery = (body: SearchBody): SearchQuery => ({
  ...body,
  keywords: body.keywords.trim(),
  num: body.num ?? DEFAULT_NUM
})

const envelope = <S extends Schema.Top>(identifier: string, data: S) =>
  Schema.Struct({
    success: Schema.Literal(true),
    code: Schema.Literal("200"),
    message: Schema.Literal("success"),
    exception: Schema.Null,
    data,
    /** null unless the request sent options or the local index searched a corrected query: then provenance (explain), the options a source could not apply, the correction, the pages not read. */
    extra: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
      description: "null unless the request sent options or a misspelt query was corrected: then {unapplied} (options a source could not apply), " +
        "{corrections: {query, searched, words: [{from, to}]}} when the local index searched the corrected query (with explain also a correction it only suggests, searched false), " +
        "or with explain: true the provenance {sources, results, unapplied, corrections, cache, ms}; with content, " +
        "{unread: [{position, link, reason, message}]} for results whose page was not read (their content is the snippet)"
    })
  }).annotate({ identifier })

export const WebSearchResponse = envelope("WebSearchResponse", WebSearchData)
export const ImageSearchResponse = envelope("ImageSearchResponse", Schema.Array(ImageResult))

/** The success envelope with `extra` (provenance, unapplied options) when there is any; the plain one otherwise. */
export const successEnvelopeWith = <A>(data: A, extra: unknown) =>
  extra === null ? successEnvelope(data) : { ...successEnvelope(data), extra }

/** The search API's success envelope (docs/api.md, Search) around any payload. */
export const successEnvelope = <A>(data: A) => ({
  success: true as const,
  code: "200" as const,
  message: "success" as const,
  exception: null,
  data,
  extra: null
})
