/**
 * `periscope index` on Node: the snapshot file around the core's read loop
 * (core/ingest/IndexRun.ts). An existing snapshot is loaded and updated (its
 * documents kept, pages read again replacing their older versions); the new
 * one is written atomically (a temporary file renamed over the old one), and
 * only when the run completes, so an interrupted run leaves the old file as it
 * was. Also here: the terminal progress bar and the end-of-run summary.
 *
 * Only a problem with the snapshot itself (an existing file that cannot be
 * read, a path that cannot be written) fails the run; bad items are counted
 * and every damaged input is listed in the summary.
 *
 * A run never leaves less than it found unless asked: when it read
 * no document at all (a refused crawl, an unreachable host, a garbage
 * archive), or when a --fresh run would replace a snapshot with fewer
 * documents than it has, nothing is written and `notWritten` says why;
 * `allowShrink` writes anyway. The starter index (marked by a file beside it,
 * snapshotFile.ts) is replaced, not extended, by the first run unless
 * `keepStarter`.
 *
 * One run at a time per snapshot: a run holds `<snapshot>.lock` (fileLock.ts) from
 * reading the old snapshot to writing the new one, and a second run on the same file
 * fails at once naming the first (two runs would each write their own documents over
 * the other's). Under the lock, the temporary files of killed runs are removed and
 * named in the summary.
 *
 * `workers` > 1 extracts pages on that many worker threads (extractPool.ts),
 * the build fed in the sources' order: the same snapshot bytes as one thread.
 * The pool lives as long as the run; an interrupt terminates its threads.
 */
import { existsSync } from "node:fs"
import cliProgress from "cli-progress"
import { Effect, Result, Schema } from "effect"
import type { EmbeddingsConfig } from "../../core/config/EmbeddingsConfig.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import type { PassageVectors } from "../../core/index/Vectors.ts"
import type { DocumentSource } from "../../core/ingest/DocumentSource.ts"
import { type IndexProgress, type IndexRunResult, type ProgressView, runIndex, silentProgress } from "../../core/ingest/IndexRun.ts"
import { type BulkOptions, type BulkReport, bulkLoad, countDocuments, deleteIndex } from "../../core/backends/search/OpenSearchBulk.ts"
import type { OpenSearchConnection, OpenSearchError } from "../../core/backends/search/OpenSearchConnection.ts"
import { addedPagesPath } from "../../core/backends/AddedPagesJournal.ts"
import { type EmbedReport, embedStep, formatEmbedReport } from "./embedStep.ts"
import { extractPool } from "./extractPool.ts"
import { withFileLock } from "./fileLock.ts"
import { jsonlSource } from "./sources/jsonlSource.ts"
import { isStarterSnapshot, type LeftOverFile, loadSnapshotFile, markStarterSnapshot, removeLeftOverTemporaries, writeSnapshotFile } from "./snapshotFile.ts"

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
  /** Write even when the run read nothing, or a --fresh run would leave fewer documents than the snapshot has. */
  readonly allowShrink?: boolean | undefined
  /** Add to the starter index instead of replacing it. */
  readonly keepStarter?: boolean | undefined
  /** Mark the written snapshot as the starter index (the starter build only). */
  readonly starter?: boolean | undefined
  /** Threads that extract pages (1, the default: the main thread does it). */
  readonly workers?: number | undefined
  /** The embedding server of search.embeddings: the passages' vectors go into the snapshot. */
  readonly embeddings?: EmbeddingsConfig | undefined
  /** Where the embedding step's progress lines go (default stderr). */
  readonly embedProgress?: ((line: string) => void) | undefined
}

export interface IndexSummary extends Omit<IndexRunResult, "index" | "bytes"> {
  readonly out: string
  readonly snapshotBytes: number
  /** Documents and images in the written snapshot (or in the one that would have been written). */
  readonly documents: number
  readonly images: number
  readonly writeMs: number
  /** Documents in the snapshot that was there before, when it was read or counted. */
  readonly previousDocuments: number | undefined
  /** The starter index was replaced by this run. */
  readonly replacedStarter: boolean
  /** Why nothing was written (the old snapshot is as it was); undefined when the snapshot was written. */
  readonly notWritten: string | undefined
  /** Temporary files of killed runs on this snapshot, removed before this one began. */
  readonly removedTemporaries: ReadonlyArray<LeftOverFile>
  /** The passages' vectors: how many embedded and reused, with which model; undefined without search.embeddings. */
  readonly embeddings: EmbedReport | undefined
}

/**
 * runIndex with pages extracted on `workers` threads when more than one is asked
 * and a source hands over raw pages (a crawl or JSONL alone needs no pool).
 */
const runIndexOn = (workers: number | undefined, options: Parameters<typeof runIndex>[0]) =>
  (workers ?? 1) <= 1 || !options.sources.some((source) => source.pages !== undefined)
    ? runIndex(options)
    : Effect.scoped(Effect.flatMap(extractPool({ workers }), (extractor) => runIndex({ ...options, extractor })))

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

/** The vectors of the snapshot at `path`, for reuse by a --fresh run; undefined when there are none or it cannot be read. */
const vectorsOf = (path: string): Effect.Effect<PassageVectors | undefined> =>
  existsSync(path) ? loadSnapshotFile(path).pipe(Effect.map((index) => index.parts.vectors), Effect.orElseSucceed(() => undefined)) : Effect.succeed(undefined)

/** Documents of the snapshot a --fresh run replaces; undefined when there is none or it cannot be read. */
const countPrevious = (path: string): Effect.Effect<number | undefined> =>
  existsSync(path)
    ? loadSnapshotFile(path).pipe(Effect.map((index) => index.documentCount), Effect.orElseSucceed(() => undefined))
    : Effect.succeed(undefined)

const plural = (n: number, one: string) => `${n.toLocaleString("en-US")} ${one}${n === 1 ? "" : "s"}`

/** Why the run must not write, or undefined when it may. */
const refusal = (
  options: IndexRunOptions,
  fresh: boolean,
  result: Omit<IndexRunResult, "index" | "bytes">,
  documents: number,
  previous: number | undefined
): string | undefined => {
  if (options.allowShrink === true) return undefined
  const why = `${plural(result.failed, "error")}, ${plural(result.skipped.reduce((n, s) => n + s.count, 0), "item")} skipped`
  if (result.read === 0) {
    return `nothing was indexed from the sources (${why}); ${existsSync(options.out) ? `the snapshot ${options.out} was left as it was` : "no snapshot was written"}. ` +
      "Check the errors above, or pass --allow-shrink to write it anyway"
  }
  if (fresh && previous !== undefined && documents < previous) {
    return `--fresh would replace ${options.out} (${plural(previous, "document")}) with ${plural(documents, "document")} (${why}); ` +
      "it was left as it was. Pass --allow-shrink to replace it anyway"
  }
  return undefined
}

/**
 * Reads the sources, builds and writes the snapshot. Fails only with IndexRunError: the
 * existing snapshot cannot be read, or the new one cannot be written. Interrupted before
 * the write, it writes nothing; the write itself is not interrupted half-way (it is a
 * temporary file renamed over the old one), so the old snapshot stays whole either way.
 * A run that would leave less than it found writes nothing and says why in `notWritten`.
 */
export const indexSnapshot = Effect.fn("indexSnapshot")(function*(options: IndexRunOptions) {
  return yield* withFileLock(options.out, { purpose: "periscope index", waitMs: 0 }, indexLocked(options)).pipe(
    Effect.catchTag("FileLockError", (error) => Effect.fail(new IndexRunError({ subject: error.subject, message: error.message })))
  )
})

/** indexSnapshot under the snapshot's lock: no other run reads or writes it meanwhile. */
const indexLocked = Effect.fnUntraced(function*(options: IndexRunOptions) {
  const removedTemporaries = removeLeftOverTemporaries(options.out)
  const replacedStarter = options.starter !== true && options.keepStarter !== true && isStarterSnapshot(options.out)
  const fresh = options.fresh === true || replacedStarter
  const previous = fresh ? undefined : yield* loadPrevious(options.out)
  // The starter index may always be replaced by less: it is no one's work.
  const previousDocuments = previous?.documentCount ?? (fresh && !replacedStarter ? yield* countPrevious(options.out) : undefined)
  // Pages added to the running server (webFetch's addToIndex) come last; once it reloads this snapshot, the server lets go of them.
  const added = addedPagesPath(options.out)
  const { index: built, bytes: builtBytes, ...result } = yield* runIndexOn(options.workers, {
    sources: fresh || !existsSync(added) ? options.sources : [...options.sources, jsonlSource(added)],
    previous: previous?.documents(),
    progress: options.progress,
    batchSize: options.batchSize,
    errorSamples: options.errorSamples
  })
  const refused = refusal(options, fresh, result, built.documentCount, previousDocuments)
  // With search.embeddings, the passages' vectors (the old snapshot's reused for unchanged text); a server that fails writes nothing.
  const embedding = options.embeddings === undefined || refused !== undefined ? undefined : yield* Effect.result(
    embedStep(built, options.embeddings, previous?.parts.vectors ?? (yield* vectorsOf(options.out)), options.embedProgress ?? ((line) => process.stderr.write(`${line}\n`)))
  )
  const embedded = embedding !== undefined && Result.isSuccess(embedding) ? embedding.success : undefined
  const index = embedded?.index ?? built
  const bytes = embedded === undefined ? builtBytes : encodeSnapshot(index)
  const notWritten = refused ?? (embedding !== undefined && Result.isFailure(embedding)
    ? `${embedding.failure.setting}: ${embedding.failure.message}; the snapshot was left as it was`
    : undefined)
  const writeStart = performance.now()
  if (notWritten === undefined) {
    yield* writeSnapshotFile(options.out, bytes).pipe(
      Effect.andThen(markStarterSnapshot(options.out, options.starter === true)),
      Effect.mapError((error) => new IndexRunError({ subject: error.path, message: error.message })),
      Effect.uninterruptible
    )
  }
  const summary: IndexSummary = {
    ...result,
    out: options.out,
    snapshotBytes: bytes.byteLength,
    documents: index.documentCount,
    images: index.imageCount,
    writeMs: performance.now() - writeStart,
    previousDocuments,
    replacedStarter: replacedStarter && notWritten === undefined,
    notWritten,
    removedTemporaries,
    embeddings: embedded?.report
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
    `${summary.notWritten === undefined ? "Snapshot" : "NOT written:"} ${summary.out} (${megabytes(summary.snapshotBytes)}): ${number(summary.documents)} documents, ` +
    `${number(summary.images)} images${summary.kept > 0 ? `, ${number(summary.kept)} carried over from the previous snapshot` : ""}` +
    `${summary.replacedStarter ? "; it replaces the starter index (npm package READMEs; --keep-starter adds to it instead)" : ""}.`,
    `Duplicates collapsed: ${number(summary.duplicates)} with the same URL (newest kept), ` +
    `${number(summary.nearDuplicates)} near-duplicate pages grouped at search time.`
  ]
  if (summary.embeddings !== undefined) lines.push(formatEmbedReport(summary.embeddings))
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
  if (summary.notWritten !== undefined) lines.push(`Not written: ${summary.notWritten}.`)
  for (const left of summary.removedTemporaries) lines.push(`Removed ${left.path} (${megabytes(left.bytes)}), the temporary file of a run that was killed.`)
  return lines.join("\n")
}

export interface OpenSearchRunOptions {
  readonly sources: ReadonlyArray<DocumentSource>
  readonly connection: OpenSearchConnection
  /** Delete the index first and load these sources only. */
  readonly fresh?: boolean | undefined
  readonly allowShrink?: boolean | undefined
  readonly progress?: ProgressView | undefined
  readonly bulk?: BulkOptions | undefined
  /** Threads that extract pages (1, the default: the main thread does it). */
  readonly workers?: number | undefined
}

export interface OpenSearchSummary extends Omit<IndexRunResult, "index" | "bytes"> {
  readonly target: string
  /** Documents in the index before the run, when it existed. */
  readonly previousDocuments: number | undefined
  readonly bulk: BulkReport | undefined
  readonly loadMs: number
  /** Why nothing was sent (the index is as it was); undefined when it was loaded. */
  readonly notWritten: string | undefined
}

/**
 * `periscope index --to opensearch://...`: the sources read, checked and de-duplicated
 * exactly as for a snapshot (runIndex), then loaded with `_bulk`. The same rule as for
 * snapshots: nothing read, or a --fresh load smaller than the index, sends nothing
 * unless allowShrink. Fails with IndexRunError when the cluster cannot be used at all.
 */
export const indexOpenSearch = Effect.fn("indexOpenSearch")(function*(options: OpenSearchRunOptions) {
  const { connection } = options
  const target = `${connection.url}/${connection.index}`
  const clusterError = (error: OpenSearchError) => new IndexRunError({ subject: target, message: error.message })
  const previousDocuments = yield* countDocuments(connection).pipe(Effect.mapError(clusterError))
  const { index, bytes: _bytes, ...result } = yield* runIndexOn(options.workers, {
    sources: options.sources,
    progress: options.progress
  })
  const why = `${plural(result.failed, "error")}, ${plural(result.skipped.reduce((n, s) => n + s.count, 0), "item")} skipped`
  const notWritten = options.allowShrink === true ? undefined
    : result.read === 0 ? `nothing was indexed from the sources (${why}); the OpenSearch index ${connection.index} was left as it was. ` +
      "Check the errors above, or pass --allow-shrink to load it anyway"
    : options.fresh === true && previousDocuments !== undefined && index.documentCount < previousDocuments
    ? `--fresh would replace the OpenSearch index ${connection.index} (${plural(previousDocuments, "document")}) with ${plural(index.documentCount, "document")} (${why}); ` +
      "it was left as it was. Pass --allow-shrink to replace it anyway"
    : undefined
  const loadStart = performance.now()
  let bulk: BulkReport | undefined
  if (notWritten === undefined) {
    if (options.fresh === true) yield* deleteIndex(connection).pipe(Effect.mapError(clusterError))
    bulk = yield* bulkLoad(connection, index.documents(), options.bulk).pipe(Effect.mapError(clusterError))
  }
  const summary: OpenSearchSummary = { ...result, target, previousDocuments, bulk, loadMs: performance.now() - loadStart, notWritten }
  return summary
})

/** The end-of-run report of a load into OpenSearch. */
export const formatOpenSearchSummary = (summary: OpenSearchSummary): string => {
  const lines = [
    `Read ${number(summary.read)} documents in ${seconds(summary.readMs)}; ${number(summary.duplicates)} duplicates collapsed.`
  ]
  if (summary.bulk !== undefined) {
    lines.push(
      `Loaded into ${summary.target}: ${number(summary.bulk.indexed)} documents in ${seconds(summary.loadMs)} ` +
        `(${number(summary.bulk.batches)} _bulk requests, ${number(summary.bulk.retries)} retried after 429), ${number(summary.bulk.failed)} refused by OpenSearch.`
    )
    for (const { url, message } of summary.bulk.errors) lines.push(`  ${url}: ${message}`)
  }
  const skippedTotal = summary.skipped.reduce((sum, s) => sum + s.count, 0)
  lines.push(`Skipped: ${number(skippedTotal)}${skippedTotal === 0 ? "" : ":"}`)
  for (const { reason, count } of summary.skipped.slice(0, 15)) lines.push(`  ${number(count).padStart(7)}  ${reason}`)
  lines.push(`Errors: ${number(summary.failed)}${summary.failed === 0 ? "" : ` (showing ${summary.errors.length}):`}`)
  for (const { origin, message } of summary.errors) lines.push(`  ${origin}: ${message}`)
  if (summary.notWritten !== undefined) lines.push(`Not written: ${summary.notWritten}.`)
  return lines.join("\n")
}
