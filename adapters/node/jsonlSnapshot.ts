/**
 * Builds a snapshot from a JSONL file of {url, title, text, date?, lang?, images?} documents,
 * one per line, streamed in batches. A line that is not JSON, or a document the index
 * refuses, is reported with its line number and reason and the rest is still indexed; the
 * snapshot is written atomically at the end.
 */
import { createReadStream } from "node:fs"
import { createInterface } from "node:readline"
import { Effect } from "effect"
import type { IndexDocument } from "../../core/index/Document.ts"
import { type EngineOptions, IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { SnapshotFileError, writeSnapshotFile } from "./snapshotFile.ts"

export interface JsonlSnapshotOptions {
  readonly engine?: EngineOptions
  /** How many problems to keep in the report (all are counted); default 100. */
  readonly problemSamples?: number
}

export interface JsonlSnapshotReport {
  readonly output: string
  readonly lines: number
  readonly documents: number
  readonly images: number
  /** Documents whose URL was already in the file; the later line won. */
  readonly duplicates: number
  /** Lines or documents not indexed (bad JSON, a field breaking its rule), counted in full. */
  readonly problems: number
  readonly problemSamples: ReadonlyArray<{ readonly line: number; readonly url: string; readonly reason: string }>
  readonly bytes: number
}

/** Reads `input`, builds the index and writes the snapshot to `output`. */
export const jsonlToSnapshot = (
  input: string,
  output: string,
  options: JsonlSnapshotOptions = {}
): Effect.Effect<JsonlSnapshotReport, SnapshotFileError> =>
  Effect.gen(function*() {
    const built = yield* Effect.tryPromise({
      try: () => buildFromJsonl(input, options),
      catch: (error) =>
        new SnapshotFileError({ path: input, message: `cannot read the JSONL file: ${error instanceof Error ? error.message : String(error)}` })
    })
    const bytes = encodeSnapshot(built.index)
    yield* writeSnapshotFile(output, bytes)
    return {
      output,
      lines: built.lines,
      documents: built.index.documentCount,
      images: built.index.imageCount,
      duplicates: built.duplicates,
      problems: built.problems,
      problemSamples: built.samples,
      bytes: bytes.length
    }
  })

const buildFromJsonl = async (input: string, options: JsonlSnapshotOptions) => {
  const builder = new IndexBuilder(options.engine)
  const sampleLimit = options.problemSamples ?? 100
  const samples: Array<{ line: number; url: string; reason: string }> = []
  let problems = 0
  let duplicates = 0
  let lines = 0
  const note = (line: number, url: string, reason: string) => {
    problems++
    if (samples.length < sampleLimit) samples.push({ line, url, reason })
  }
  const reader = createInterface({ input: createReadStream(input, { encoding: "utf8" }), crlfDelay: Infinity })
  for await (const text of reader) {
    lines++
    if (text.trim().length === 0) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      note(lines, "", "not a JSON value")
      continue
    }
    // One document per add call, so every refusal names its line.
    const report = builder.add([parsed as IndexDocument])
    duplicates += report.duplicates
    for (const rejected of report.rejected) note(lines, rejected.url, rejected.reason)
  }
  return { index: builder.build(), lines, duplicates, problems, samples }
}
