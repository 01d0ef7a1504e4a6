/**
 * JSONL documents: one line `{url, title, text, date?, lang?, images?}`, decoded
 * with the one document Schema (core/index/Document.ts) under the root label
 * "JSONL line", so a rule reads the same wherever it is broken ("url: must be an
 * absolute http(s) URL, got ..."). `periscope index` on a .jsonl file, the
 * fixture backend's search.documents and jsonlToSnapshot all read lines here.
 */
import { Result, Stream } from "effect"
import { DocumentInput, type ImageRecord, type IndexDocument, storedDate, storedLanguage } from "../index/Document.ts"
import { decodeJsonText, decoderFor } from "../schema/Decode.ts"
import type { SourceItem } from "./DocumentSource.ts"

const ROOT = "JSONL line"
const decodeRecord = decoderFor(DocumentInput, ROOT)

/** A line as a document (date and language in their stored form), or the message naming the field and the rule it breaks. */
export const parseJsonlLine = (line: string): Result.Result<IndexDocument, string> => {
  const decoded = decodeJsonText(line, ROOT, decodeRecord)
  if (Result.isFailure(decoded)) {
    const { path, message } = decoded.failure
    // The origin already names the file and the line: a problem with the line as a whole is its rule alone.
    return Result.fail(path === "" ? message.replace(`${ROOT}: `, "") : message)
  }
  const { date, lang, images, ...record } = decoded.success
  return Result.succeed({
    ...record,
    date: date === undefined || date === null ? null : storedDate(date),
    ...(lang === undefined || lang === null ? {} : { lang: storedLanguage(lang) }),
    // Checked image by image when indexed, so a bad image is dropped (and reported) and its page kept.
    ...(images === undefined || images === null ? {} : { images: images as ReadonlyArray<ImageRecord> })
  })
}

/**
 * The lines of a JSONL file as items: blank lines pass, `origin` is `<name>:<line>`.
 * A file without a single non-blank line is one error, so an empty export is not mistaken for success.
 */
export const jsonlItems = <E, R>(name: string, lines: Stream.Stream<string, E, R>): Stream.Stream<SourceItem, E, R> =>
  Stream.suspend(() => {
    let seen = 0
    return lines.pipe(
      Stream.zipWithIndex,
      Stream.filter(([line]) => line.trim() !== ""),
      Stream.map(([line, index]): SourceItem => {
        seen++
        const origin = `${name}:${index + 1}`
        const parsed = parseJsonlLine(line)
        if (Result.isFailure(parsed)) return { _tag: "Failed", origin, message: parsed.failure }
        if (parsed.success.text.trim() === "") return { _tag: "Skipped", origin, reason: "no main text" }
        return { _tag: "Document", origin, document: parsed.success }
      }),
      Stream.concat(Stream.suspend(() =>
        seen === 0 ? Stream.make<Array<SourceItem>>({ _tag: "Failed", origin: name, message: "no documents: the file has no lines" }) : Stream.empty
      ))
    )
  })
