/**
 * JSONL files (optionally .gz) of ready documents, one JSON object a line,
 * read line by line from disk. Each line is decoded by the core's one document
 * Schema (core/ingest/JsonlDocument.ts); a bad line fails alone, its origin
 * naming file and line, and reading goes on. An unreadable or corrupt (bad
 * gzip) file ends that file with one error.
 */
import { createReadStream } from "node:fs"
import { createInterface } from "node:readline"
import { createGunzip } from "node:zlib"
import { Effect, Stream } from "effect"
import { type DocumentSource, SourceError } from "../../../core/ingest/DocumentSource.ts"
import { jsonlItems } from "../../../core/ingest/JsonlDocument.ts"
import { asyncEstimate } from "./asyncItems.ts"

/** The lines of a plain or gzipped file; interrupting the stream closes the file. */
export const fileLines = (path: string): Stream.Stream<string, SourceError> =>
  Stream.suspend(() => {
    const file = createReadStream(path)
    const input = /\.gz$/i.test(path) ? file.pipe(createGunzip()) : file
    // readline does not pass on errors of a piped stream: end it with the error instead.
    if (input !== file) file.on("error", (error) => input.destroy(error))
    const lines = createInterface({ input, crlfDelay: Infinity })
    return Stream.fromAsyncIterable(lines, (error) =>
      new SourceError({ origin: path, message: error instanceof Error ? error.message : String(error) })).pipe(
        Stream.ensuring(Effect.sync(() => {
          lines.close()
          file.destroy()
        }))
      )
  })

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
  estimate: asyncEstimate(() => countLines(path)),
  items: jsonlItems(path, fileLines(path))
})
