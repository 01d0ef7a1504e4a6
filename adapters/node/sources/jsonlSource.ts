/**
 * JSONL files (optionally .gz) of ready documents, one JSON object a line:
 * `{url, title, text, date?, lang?, images?}`. Each line is validated; a bad
 * line fails alone, its origin naming file and line, its message the field and
 * the rule ("docs.jsonl:12", "url: must be an absolute http(s) URL"), and reading goes on.
 */
import { createReadStream } from "node:fs"
import { createInterface } from "node:readline"
import { createGunzip } from "node:zlib"
import { Result, Schema } from "effect"
import { makeBodyDecoder, parseJson } from "../../../core/api/RequestBody.ts"
import type { IndexDocument } from "../../../core/index/Document.ts"
import { toIsoDate } from "../../../core/ingest/IsoDate.ts"
import { normalizeLanguageTag } from "../../../core/ingest/PageLanguage.ts"
import { type DocumentSource, type SourceItem, skipped } from "./SourceItem.ts"

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

const JsonlImage = Schema.Struct({
  url: HttpUrl,
  alt: Schema.optionalKey(Schema.String),
  title: Schema.optionalKey(Schema.String),
  caption: Schema.optionalKey(Schema.String),
  heading: Schema.optionalKey(Schema.String),
  width: Schema.optionalKey(Dimension),
  height: Schema.optionalKey(Dimension)
})

/** One line of a documents JSONL file. */
export const JsonlRecord = Schema.Struct({
  url: HttpUrl,
  title: Schema.String,
  text: Schema.String,
  date: Schema.optionalKey(Schema.NullOr(DateText)),
  lang: Schema.optionalKey(LanguageTag),
  images: Schema.optionalKey(Schema.Array(JsonlImage))
})

const decodeRecord = makeBodyDecoder(JsonlRecord)

/** A line as a document, or the message naming what is wrong with it. */
export const parseJsonlLine = (line: string): Result.Result<IndexDocument, string> => {
  const json = parseJson(line)
  if (Result.isFailure(json)) return Result.fail(json.failure.message.replace(/^request body: /, ""))
  const decoded = decodeRecord(json.success)
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure.message.replace(/^request body: /, ""))
  const record = decoded.success
  return Result.succeed({
    ...record,
    date: record.date === undefined || record.date === null ? null : toIsoDate(record.date),
    ...(record.lang === undefined ? {} : { lang: normalizeLanguageTag(record.lang) })
  })
}

/** Newlines in a plain file, read in chunks (a gzipped file is not counted). */
const countLines = async (path: string): Promise<number | undefined> => {
  if (/\.gz$/i.test(path)) return undefined
  let lines = 0
  for await (const chunk of createReadStream(path)) {
    const bytes = chunk as Buffer
    for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) lines++
  }
  return lines
}

export const jsonlSource = (path: string): DocumentSource => ({
  describe: `${path} (JSONL documents)`,
  estimate: () => countLines(path).catch(() => undefined),
  items: async function*(): AsyncGenerator<SourceItem> {
    const file = createReadStream(path)
    const input = /\.gz$/i.test(path) ? file.pipe(createGunzip()) : file
    const lines = createInterface({ input, crlfDelay: Infinity })
    let number = 0
    try {
      for await (const line of lines) {
        number++
        if (line.trim() === "") continue
        const origin = `${path}:${number}`
        const parsed = parseJsonlLine(line)
        if (Result.isFailure(parsed)) {
          yield { _tag: "Failed", origin, message: parsed.failure }
        } else if (parsed.success.text.trim() === "") {
          yield skipped(origin, "no main text")
        } else {
          yield { _tag: "Document", origin, document: parsed.success }
        }
      }
    } catch (error) {
      // An unreadable or corrupt (bad gzip) file ends this file only.
      yield { _tag: "Failed", origin: `${path}:${number + 1}`, message: error instanceof Error ? error.message : String(error) }
    } finally {
      lines.close()
      file.destroy()
    }
  }
})
