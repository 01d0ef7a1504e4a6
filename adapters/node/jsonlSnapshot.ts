/**
 * Builds a snapshot from a JSONL file of {url, title, text, date?, lang?, images?} documents,
 * one per line, read with the same line reader as `periscope index` and checked by the
 * index with the one document Schema. A line that is not JSON, or a document the index
 * refuses, is reported with its line number and reason and the rest is still indexed; the
 * snapshot is written atomically at the end.
 */
import { Effect, Result, Stream } from "effect"
import type { IndexDocument } from "../../core/index/Document.ts"
import { type EngineOptions, IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { parseJson } from "../../core/schema/Decode.ts"
import { SnapshotFileError, writeSnapshotFile } from "./snapshotFile.ts"
import { fileLines } from "./sources/jsonlSource.ts"

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
    yield* fileLines(input).pipe(
      Stream.runForEach((text) =>
        Effect.sync(() => {
          lines++
          if (text.trim().length === 0) return
          const parsed = parseJson(text, "JSONL line")
          if (Result.isFailure(parsed)) return note(lines, "", "not a JSON value")
          // One document per add call, so every refusal names its line; the builder checks it with the document Schema.
          const report = builder.add([parsed.success as IndexDocument])
          duplicates += report.duplicates
          for (const rejected of report.rejected) note(lines, rejected.url, rejected.reason)
        })
      ),
      Effect.mapError((error) => new SnapshotFileError({ path: input, message: `cannot read the JSONL file: ${error.message}` }))
    )
    const index = builder.build()
    const bytes = encodeSnapshot(index)
    yield* writeSnapshotFile(output, bytes)
    return {
      output,
      lines,
      documents: index.documentCount,
      images: index.imageCount,
      duplicates,
      problems,
      problemSamples: samples,
      bytes: bytes.length
    }
  })
