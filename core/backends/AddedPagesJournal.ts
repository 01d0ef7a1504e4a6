/**
 * Where the pages added to the running index outlive it: a JSONL file beside the snapshot
 * (`<snapshot>.added.jsonl`, one document a line, the format `periscope index` reads),
 * appended to as pages are added, read at start and at each reload, and written again without
 * the pages a `periscope index` run has taken into the snapshot. The index run reads it as one
 * more source, after the others. Through the platform's FileSystem; writes take turns.
 */
import { Effect, FileSystem, Result, Semaphore } from "effect"
import type { IndexDocument } from "../index/Document.ts"
import { parseJsonlLine } from "../ingest/JsonlDocument.ts"

export interface AddedPagesJournal {
  /** The file, for logs. */
  readonly path: string
  /** The pages kept, in the order they were added (a URL added again: its last line wins). */
  readonly read: Effect.Effect<ReadonlyArray<IndexDocument>>
  readonly append: (document: IndexDocument) => Effect.Effect<void>
  /** The file with exactly these pages (none: the file is removed). */
  readonly rewrite: (documents: ReadonlyArray<IndexDocument>) => Effect.Effect<void>
}

/** The journal of the snapshot at `snapshot`. */
export const addedPagesPath = (snapshot: string): string => `${snapshot}.added.jsonl`

/** Lines parsed between two yields: a reload reads the file while queries are answered. */
const linesPerStep = 32

const line = (document: IndexDocument) => `${JSON.stringify({ url: document.url, title: document.title, text: document.text, date: document.date ?? null })}\n`

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** A journal in the file at `path`; failures to read or write it are logged, and the pages stay in memory. */
export const fileJournal = (path: string): Effect.Effect<AddedPagesJournal, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const turns = yield* Semaphore.make(1)
    const read = Effect.gen(function*() {
      if (!(yield* Effect.orElseSucceed(fs.exists(path), () => false))) return []
      const text = yield* fs.readFileString(path)
      const documents: Array<IndexDocument> = []
      const bad: Array<string> = []
      const lines = text.split("\n")
      for (let i = 0; i < lines.length; i++) {
        if (i > 0 && i % linesPerStep === 0) yield* Effect.yieldNow
        if (lines[i]!.trim() === "") continue
        const parsed = parseJsonlLine(lines[i]!)
        if (Result.isSuccess(parsed)) documents.push(parsed.success)
        else if (bad.length < 3) bad.push(`line ${i + 1}: ${parsed.failure}`)
      }
      if (bad.length > 0) yield* Effect.logWarning(`added pages: ${path} has lines that are not documents, left out (${bad.join("; ")})`)
      return documents
    }).pipe(Effect.catch((error) => Effect.as(Effect.logError(`added pages: ${path} could not be read (${describe(error)}); the pages in it are not served`), [])))
    const append = (document: IndexDocument) =>
      turns.withPermit(fs.writeFileString(path, line(document), { flag: "a" })).pipe(
        Effect.catch((error) => Effect.logError(`added pages: ${document.url} could not be written to ${path} (${describe(error)}); it is served until the server stops`))
      )
    const rewrite = (documents: ReadonlyArray<IndexDocument>) =>
      turns.withPermit(
        documents.length === 0
          ? Effect.asVoid(fs.remove(path, { force: true }))
          : Effect.andThen(fs.writeFileString(`${path}.next`, documents.map(line).join("")), fs.rename(`${path}.next`, path))
      ).pipe(Effect.catch((error) => Effect.logError(`added pages: ${path} could not be written again (${describe(error)})`)))
    return { path, read, append, rewrite } satisfies AddedPagesJournal
  })
