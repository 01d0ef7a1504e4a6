/**
 * The documents of the fixture backend (search.documents): a JSONL file of
 * {url, title, text, date?, images?}, each line decoded by the same Schema as
 * `periscope index`. A bad line stops the start with its line number.
 */
import { Effect, Result } from "effect"
import type { IndexDocument } from "../../core/index/Document.ts"
import { parseJsonlLine } from "../../core/ingest/JsonlDocument.ts"
import { readText, SettingsError } from "./settings.ts"

export const readJsonlDocuments = (path: string, setting: string): Effect.Effect<Array<IndexDocument>, SettingsError> =>
  Effect.gen(function*() {
    const where = `${setting} (${path})`
    const text = yield* Effect.mapError(readText(path), (message) => new SettingsError({ setting: where, message }))
    const docs: Array<IndexDocument> = []
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() === "") continue
      const parsed = parseJsonlLine(lines[i]!)
      if (Result.isFailure(parsed)) return yield* new SettingsError({ setting: where, message: `line ${i + 1}: ${parsed.failure}` })
      docs.push(parsed.success)
    }
    return docs
  })
