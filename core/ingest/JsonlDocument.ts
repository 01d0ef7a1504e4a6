/**
 * A document as outside input: one JSONL line `{url, title, text, date?, lang?,
 * images?}`. Every reader of documents from outside (`periscope index` on a
 * .jsonl file, the fixture backend's search.documents) decodes with this one
 * Schema, through core/schema, so a rule reads the same wherever it is broken
 * ("url: must be an absolute http(s) URL, got ..."). Dates and language tags
 * are brought to their stored form after decoding.
 */
import { Result, Schema, Stream } from "effect"
import type { IndexDocument } from "../index/Document.ts"
import { decodeJsonText, decoderFor } from "../schema/Decode.ts"
import type { SourceItem } from "./DocumentSource.ts"
import { toIsoDate } from "./IsoDate.ts"
import { normalizeLanguageTag } from "./PageLanguage.ts"

const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

const HttpUrl = Schema.String.pipe(
  Schema.check(Schema.makeFilter((s: string) => isHttpUrl(s) || "must be an absolute http(s) URL"))
)
const Dimension = Schema.Number.pipe(
  Schema.check(Schema.makeFilter((n: number) => (Number.isInteger(n) && n > 0) || "must be a positive integer"))
)
const DateText = Schema.String.pipe(
  Schema.check(Schema.makeFilter((s: string) => toIsoDate(s) !== null || "must be an ISO 8601 date (YYYY-MM-DD or a full timestamp)"))
)
const LanguageTag = Schema.String.pipe(
  Schema.check(Schema.makeFilter((s: string) => normalizeLanguageTag(s) !== undefined || "must be a BCP 47 language tag such as en or pt-BR"))
)

export const DocumentImage = Schema.Struct({
  url: HttpUrl,
  alt: Schema.optionalKey(Schema.String),
  title: Schema.optionalKey(Schema.String),
  caption: Schema.optionalKey(Schema.String),
  heading: Schema.optionalKey(Schema.String),
  width: Schema.optionalKey(Dimension),
  height: Schema.optionalKey(Dimension)
})

/** An indexed document as it comes from outside. */
export const DocumentRecord = Schema.Struct({
  url: HttpUrl,
  title: Schema.String,
  text: Schema.String,
  date: Schema.optionalKey(Schema.NullOr(DateText)),
  lang: Schema.optionalKey(LanguageTag),
  images: Schema.optionalKey(Schema.Array(DocumentImage))
})

const ROOT = "JSONL line"
const decodeRecord = decoderFor(DocumentRecord, ROOT)

/** A line as a document, or the message naming the field and the rule it breaks. */
export const parseJsonlLine = (line: string): Result.Result<IndexDocument, string> => {
  const decoded = decodeJsonText(line, ROOT, decodeRecord)
  if (Result.isFailure(decoded)) {
    const { path, message } = decoded.failure
    // The origin already names the file and the line: a problem with the line as a whole is its rule alone.
    return Result.fail(path === "" ? message.replace(`${ROOT}: `, "") : message)
  }
  const record = decoded.success
  return Result.succeed({
    ...record,
    date: record.date === undefined || record.date === null ? null : toIsoDate(record.date),
    ...(record.lang === undefined ? {} : { lang: normalizeLanguageTag(record.lang) })
  })
}

/** The lines of a JSONL file as items: blank lines pass, `origin` is `<name>:<line>`. */
export const jsonlItems = <E, R>(name: string, lines: Stream.Stream<string, E, R>): Stream.Stream<SourceItem, E, R> =>
  lines.pipe(
    Stream.zipWithIndex,
    Stream.filter(([line]) => line.trim() !== ""),
    Stream.map(([line, index]): SourceItem => {
      const origin = `${name}:${index + 1}`
      const parsed = parseJsonlLine(line)
      if (Result.isFailure(parsed)) return { _tag: "Failed", origin, message: parsed.failure }
      if (parsed.success.text.trim() === "") return { _tag: "Skipped", origin, reason: "no main text" }
      return { _tag: "Document", origin, document: parsed.success }
    })
  )
