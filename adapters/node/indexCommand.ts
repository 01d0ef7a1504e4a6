/**
 * `periscope index` on Node: the snapshot file around the core's read loop
 * (core/ingest/IndexRun.ts). An existing snapshot is loaded and updated (its
 * documents kept, pages read again replacing their older versions); the new
 * one is written atomically (a temporary file renamed over the old one), and
 * only when the run completes, so an interrupted run leaves the old file as it
 * was. Also here: the terminal progress bar and the end-of-run summary.
 *
 * Only a problem with the snapshot itself (an existing file that cannot be
 * read, a path that cannot be written) fails the run; bad items are counted.
 */
import { existsSync } from "node:fs"
import cliProgress from "cli-progress"
import { Effect, Schema } from "effect"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import type { DocumentSource } from "../../core/ingest/DocumentSource.ts"
import { type IndexProgress, type IndexRunResult, type ProgressView, runIndex, silentProgress } from "../../core/ingest/IndexRun.ts"
import { loadSnapshotFile, writeSnapshotFile } from "./snapshotFile.ts"

export { type IndexProgress, type ProgressView, silentProgress }

export class IndexRunError extends Schema.TaggedError<IndexRunError>()("IndexRunError", {
  /** The file or source the problem is about. */
  subject: Schema.String,
  message: Schema.String
}) {}

const clock = (ms: number) => {
  if (!Number.isFinite(ms) || ms < 0) return "?"
  const s = Math.round(ms / 1000)
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
    : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
}

/**
 * A live bar on a terminal (documents/s, errors, ETA); on a pipe or CI log,
 * a plain line every `lineEveryMs` instead, so logs stay readable.
 */
export const terminalProgress = (stream: NodeJS.WriteStream = process.stderr, lineEveryMs = 10_000): ProgressView => {
  let expected: number | undefined
  let lastLine = 0
  const bar = stream.isTTY
    ? new cliProgress.SingleBar({
      stream,
      format: "{bar} {value}/{expectedText} items | {rate} docs/s | {skipped} skipped | {failed} errors | ETA {etaText} | {source}",
      barsize: 24,
      hideCursor: true,
      clearOnComplete: false,
      fps: 5
    }, cliProgress.Presets.shades_classic)
    : undefined
  const tokens = (p: IndexProgress) => {
    const done = p.documents + p.skipped + p.failed
    const perMs = done / Math.max(1, p.elapsedMs)
    return {
      done,
      expectedText: expected === undefined ? "?" : String(expected),
      rate: ((p.documents / Math.max(1, p.elapsedMs)) * 1000).toFixed(1),
      skipped: p.skipped,
      failed: p.failed,
      etaText: expected === undefined || perMs === 0 ? "?" : clock(Math.max(0, expected - done) / perMs),
      source: p.source.length > 40 ? `...${p.source.slice(-37)}` : p.source
    }
  }
  return {
    start: (total) => {
      expected = total
      bar?.start(Math.max(total ?? 0, 1), 0, { expectedText: total === undefined ? "?" : String(total), rate: "0.0", skipped: 0, failed: 0, etaText: "?", source: "" })
    },
    update: (p) => {
      const t = tokens(p)
      if (bar !== undefined) {
        if (expected === undefined || t.done > expected) bar.setTotal(Math.max(t.done, 1))
        bar.update(t.done, t)
      } else if (p.elapsedMs - lastLine >= lineEveryMs) {
        lastLine = p.elapsedMs
        stream.write(`indexing: ${t.done}/${t.expectedText} items, ${p.documents} documents (${t.rate}/s), ${p.skipped} skipped, ${p.failed} errors, ETA ${t.etaText}\n`)
      }
    },
    stop: () => bar?.stop()
  }
}

export interface IndexRunOptions {
  readonly sources: ReadonlyArray<DocumentSource>
  /** Snapshot file to write (and to update, when it exists). */
  readonly out: string
  /** Ignore an existing snapshot and build from these sources only. */
  readonly fresh?: boolean | undefined
  readonly progress?: ProgressView | undefined
  readonly batchSize?: number | undefined
  /** How many error messages to keep for the summary. */
  readonly errorSamples?: number | undefined
}

export interface IndexSummary extends Omit<IndexRunResult, "index" | "bytes"> {
  readonly out: string
  readonly snapshotBytes: number
  /** Documents and images in the written snapshot. */
  readonly documents: number
  readonly images: number
  readonly writeMs: number
}

/** The snapshot being updated, or undefined when there is none yet. */
const loadPrevious = (path: string): Effect.Effect<SearchIndex | undefined, IndexRunError> =>
  existsSync(path)
    ? loadSnapshotFile(path).pipe(
      Effect.mapError((error) =>
        new IndexRunError({
          subject: path,
          message: error._tag === "SnapshotError"
            ? `is not a readable snapshot (${error.message}); use --fresh to replace it`
            : error.message
        })
      )
    )
    : Effect.succeed(undefined)

/**
 * Reads the sources, builds and writes the snapshot. Fails only with IndexRunError: the
 * existing snapshot cannot be read, or the new one cannot be written. Interrupted before
 * the write, it writes nothing; the write itself is not interrupted half-way (it is a
 * temporary file renamed over the old one), so the old snapshot stays whole either way.
 */
export const indexSnapshot = Effect.fn("indexSnapshot")(function*(options: IndexRunOptions) {
  const previous = options.fresh ? undefined : yield* loadPrevious(options.out)
  const { index, bytes, ...result } = yield* runIndex({
    sources: options.sources,
    previous: previous?.documents(),
    progress: options.progress,
    batchSize: options.batchSize,
    errorSamples: options.errorSamples
  })
  const writeStart = performance.now()
  yield* writeSnapshotFile(options.out, bytes).pipe(
    Effect.mapError((error) => new IndexRunError({ subject: error.path, message: error.message })),
    Effect.uninterruptible
  )
  const summary: IndexSummary = {
    ...result,
    out: options.out,
    snapshotBytes: bytes.byteLength,
    documents: index.documentCount,
    images: index.imageCount,
    writeMs: performance.now() - writeStart
  }
  return summary
})

const number = (n: number) => n.toLocaleString("en-US")
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

/** The end-of-run report, as lines for a terminal. */
export const formatSummary = (summary: IndexSummary): string => {
  const totalMs = summary.loadMs + summary.readMs + summary.buildMs + summary.writeMs
  const rate = summary.readMs > 0 ? (summary.read / summary.readMs) * 1000 : 0
  const lines = [
    `Indexed ${number(summary.read)} documents in ${seconds(totalMs)} (${rate.toFixed(1)} documents/s read and extracted; ` +
    `${summary.kept > 0 ? `load previous ${seconds(summary.loadMs)}, ` : ""}build ${seconds(summary.buildMs)}, write ${seconds(summary.writeMs)}).`,
    `Snapshot ${summary.out} (${megabytes(summary.snapshotBytes)}): ${number(summary.documents)} documents, ` +
    `${number(summary.images)} images${summary.kept > 0 ? `, ${number(summary.kept)} carried over from the previous snapshot` : ""}.`,
    `Duplicates collapsed: ${number(summary.duplicates)} with the same URL (newest kept), ` +
    `${number(summary.nearDuplicates)} near-duplicate pages grouped at search time.`
  ]
  const skippedTotal = summary.skipped.reduce((sum, s) => sum + s.count, 0)
  lines.push(`Skipped: ${number(skippedTotal)}${skippedTotal === 0 ? "" : ":"}`)
  for (const { reason, count } of summary.skipped.slice(0, 15)) lines.push(`  ${number(count).padStart(7)}  ${reason}`)
  if (summary.skipped.length > 15) lines.push(`  ... and ${summary.skipped.length - 15} other reasons`)
  if (summary.refused > 0) {
    lines.push(`Refused by the index: ${number(summary.refused)} (showing ${summary.refusedSamples.length}):`)
    for (const { url, reason } of summary.refusedSamples) lines.push(`  ${url || "(no url)"}: ${reason}`)
  }
  lines.push(`Errors: ${number(summary.failed)}${summary.failed === 0 ? "" : ` (showing ${summary.errors.length}):`}`)
  for (const { origin, message } of summary.errors) lines.push(`  ${origin}: ${message}`)
  return lines.join("\n")
}
