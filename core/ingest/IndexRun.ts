/**
 * The indexer's read loop: reads every source into an IndexBuilder in batches,
 * reporting progress through a callback, then builds the index and encodes the
 * snapshot. Where the snapshot comes from and goes to is the caller's business
 * (files in the Node adapter), so a run interrupted before it returns has
 * written nothing.
 *
 * A bad item never stops the run: it is counted, and a sample of the errors is
 * kept for the summary. A source that cannot be read at all is one error.
 *
 * With an `extractor` (worker threads in the Node adapter), sources that hand
 * over raw pages have them extracted `concurrency` at a time, and the answers
 * are taken back in the order the pages came (a reorder window as wide as the
 * pages in flight): the build, and so the snapshot bytes, are exactly those of
 * a one-thread run. Progress counts items that reached the build, not pages
 * handed out. An extractor that can also analyse texts does the build's
 * analysis too (the build's larger part), which the build replays in page
 * order: the same snapshot again.
 */
import { Effect, Stream } from "effect"
import type { IndexDocument } from "../index/Document.ts"
import { type EngineOptions, IndexBuilder } from "../index/IndexBuilder.ts"
import type { SearchIndex } from "../index/SearchIndex.ts"
import { encodeSnapshot } from "../index/Snapshot.ts"
import type { DocumentSource, SourceItem } from "./DocumentSource.ts"
import type { PageExtractor } from "./RawPage.ts"

/** Counts while the run goes; what progress displays show. */
export interface IndexProgress {
  readonly source: string
  readonly documents: number
  readonly skipped: number
  readonly failed: number
  readonly elapsedMs: number
}

/** A progress display (a terminal bar in the Node CLI); called synchronously from the loop. */
export interface ProgressView {
  readonly start: (expected: number | undefined) => void
  readonly update: (progress: IndexProgress) => void
  readonly stop: () => void
}

export const silentProgress: ProgressView = { start: () => {}, update: () => {}, stop: () => {} }

export interface IndexRunOptions {
  readonly sources: ReadonlyArray<DocumentSource>
  /** Documents of the snapshot being updated; pages read again replace them. */
  readonly previous?: Iterable<IndexDocument> | undefined
  readonly engine?: EngineOptions | undefined
  readonly progress?: ProgressView | undefined
  readonly batchSize?: number | undefined
  /** How many error messages to keep for the summary. */
  readonly errorSamples?: number | undefined
  /** Where pages are extracted; in the read loop itself when absent. */
  readonly extractor?: PageExtractor | undefined
}

/** What the run read and built; the Node adapter adds the file's name and write time. */
export interface IndexRunResult {
  readonly index: SearchIndex
  readonly bytes: Uint8Array
  /** Documents read from the sources in this run (before duplicates collapse). */
  readonly read: number
  /** Documents kept from the previous snapshot. */
  readonly kept: number
  /** Same-URL documents collapsed into one (the newest version kept). */
  readonly duplicates: number
  /** Pages whose near-duplicates are grouped under them at search time. */
  readonly nearDuplicates: number
  readonly skipped: ReadonlyArray<{ readonly reason: string; readonly count: number }>
  readonly failed: number
  readonly errors: ReadonlyArray<{ readonly origin: string; readonly message: string }>
  /** Documents or images the index refused, with the field and rule. */
  readonly refused: number
  readonly refusedSamples: ReadonlyArray<{ readonly url: string; readonly reason: string }>
  readonly loadMs: number
  readonly readMs: number
  readonly buildMs: number
}

const DEFAULT_BATCH = 500
const DEFAULT_ERROR_SAMPLES = 10

const nearDuplicateCount = (index: SearchIndex): number => {
  const cluster = index.parts.pageCluster
  let grouped = 0
  for (let doc = 0; doc < cluster.length; doc++) if (cluster[doc] !== doc) grouped++
  return grouped
}

/** The sum of the sources' estimates, or undefined when one of them cannot tell. */
const estimateAll = (sources: ReadonlyArray<DocumentSource>): Effect.Effect<number | undefined> =>
  Effect.gen(function*() {
    let total = 0
    for (const source of sources) {
      const estimate = source.estimate === undefined ? undefined : yield* source.estimate
      if (estimate === undefined) return undefined
      total += estimate
    }
    return total
  })

/** The source's items, its raw pages extracted by `extractor` in their original order. */
const itemsOf = (source: DocumentSource, extractor: PageExtractor | undefined): DocumentSource["items"] =>
  extractor === undefined || source.pages === undefined
    ? source.items
    : source.pages.pipe(
      Stream.mapEffect(
        (item): Effect.Effect<SourceItem> => item._tag === "Page" ? extractor.extract(item.origin, item.page) : Effect.succeed(item),
        { concurrency: extractor.concurrency }
      )
    )

/**
 * The build with its pages' texts analysed by the extractor (on its worker threads), `concurrency`
 * pages in flight, replayed into the build in page order: the same index as `builder.build()`.
 */
const buildAnalysedBy = (builder: IndexBuilder, analyze: NonNullable<PageExtractor["analyze"]>, concurrency: number) =>
  Effect.suspend(() => {
    const build = builder.begin()
    let next = 0
    return Stream.range(0, build.pageCount - 1).pipe(
      Stream.mapEffect((doc) => analyze(build.pageToAnalyze(doc)), { concurrency }),
      Stream.runForEach((analyzed) => Effect.sync(() => build.addPage(next++, analyzed))),
      Effect.map(() => build.finish())
    )
  })

/** Reads the sources, builds the index and encodes it; interruptible at every item. */
export const runIndex = Effect.fn("runIndex")(function*(options: IndexRunOptions) {
  const progress = options.progress ?? silentProgress
  const batchSize = options.batchSize ?? DEFAULT_BATCH
  const sampleLimit = options.errorSamples ?? DEFAULT_ERROR_SAMPLES

  const loadStart = performance.now()
  const builder = new IndexBuilder(options.engine)
  if (options.previous !== undefined) builder.add(options.previous)
  const kept = builder.size
  const loadMs = performance.now() - loadStart

  const refusedSamples: Array<{ url: string; reason: string }> = []
  const skipped = new Map<string, number>()
  const errors: Array<{ origin: string; message: string }> = []
  let refused = 0
  let duplicates = 0
  let read = 0
  let skippedCount = 0
  let failed = 0
  let batch: Array<IndexDocument> = []
  const flush = () => {
    if (batch.length === 0) return
    const report = builder.add(batch)
    batch = []
    duplicates += report.duplicates
    refused += report.rejected.length
    for (const entry of report.rejected) if (refusedSamples.length < sampleLimit) refusedSamples.push(entry)
  }
  const fail = (origin: string, message: string) => {
    failed++
    if (errors.length < sampleLimit) errors.push({ origin, message })
  }

  progress.start(yield* estimateAll(options.sources))
  const started = performance.now()
  yield* Effect.forEach(options.sources, (source) =>
    itemsOf(source, options.extractor).pipe(
      Stream.runForEach((item) =>
        Effect.sync(() => {
          switch (item._tag) {
            case "Document":
              read++
              batch.push(item.document)
              if (batch.length >= batchSize) flush()
              break
            case "Skipped":
              skippedCount++
              skipped.set(item.reason, (skipped.get(item.reason) ?? 0) + 1)
              break
            case "Failed":
              fail(item.origin, item.message)
              break
          }
          progress.update({ source: source.describe, documents: read, skipped: skippedCount, failed, elapsedMs: performance.now() - started })
        })
      ),
      Effect.catchTag("SourceError", (error) => Effect.sync(() => fail(error.origin, error.message)))
    ), { discard: true }).pipe(Effect.ensuring(Effect.sync(() => progress.stop())))
  flush()
  const readMs = performance.now() - started

  const buildStart = performance.now()
  const extractor = options.extractor
  const index = extractor?.analyze === undefined ? builder.build() : yield* buildAnalysedBy(builder, extractor.analyze, extractor.concurrency)
  const bytes = encodeSnapshot(index)
  const buildMs = performance.now() - buildStart

  const result: IndexRunResult = {
    index,
    bytes,
    read,
    kept,
    duplicates,
    nearDuplicates: nearDuplicateCount(index),
    skipped: [...skipped].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count),
    failed,
    errors,
    refused,
    refusedSamples,
    loadMs,
    readMs,
    buildMs
  }
  return result
})
