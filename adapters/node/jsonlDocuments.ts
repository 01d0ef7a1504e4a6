/** Reads a JSONL file of {url, title, text, date?, images?} documents, naming the line of any bad record. */
import { Effect, Result, Schema } from "effect"
import { makeBodyDecoder, parseJson } from "../../core/api/RequestBody.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { readText, SettingsError } from "./settings.ts"

const ImageRecordSchema = Schema.Struct({
  url: Schema.String,
  alt: Schema.optionalKey(Schema.String),
  title: Schema.optionalKey(Schema.String),
  caption: Schema.optionalKey(Schema.String),
  heading: Schema.optionalKey(Schema.String),
  width: Schema.optionalKey(Schema.Number),
  height: Schema.optionalKey(Schema.Number)
})

export const DocumentRecord = Schema.Struct({
  url: Schema.String,
  title: Schema.String,
  text: Schema.String,
  date: Schema.optionalKey(Schema.NullOr(Schema.String)),
  lang: Schema.optionalKey(Schema.String),
  images: Schema.optionalKey(Schema.Array(ImageRecordSchema))
})

const decodeRecord = makeBodyDecoder(DocumentRecord)

export const readJsonlDocuments = (path: string, setting: string): Effect.Effect<Array<IndexDocument>, SettingsError> =>
  Effect.gen(function*() {
    const where = `${setting} (${path})`
    const text = yield* Effect.mapError(readText(path), (message) => new SettingsError({ setting: where, message }))
    const docs: Array<IndexDocument> = []
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() === "") continue
      const json = parseJson(lines[i]!)
      const decoded = Result.isFailure(json) ? json : decodeRecord(json.success)
      if (Result.isFailure(decoded)) {
        return yield* new SettingsError({ setting: where, message: `line ${i + 1}: ${decoded.failure.message.replace(/^request body/, "record")}` })
      }
      docs.push(decoded.success)
    }
    return docs
  })
