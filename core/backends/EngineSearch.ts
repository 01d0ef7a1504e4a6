/**
 * The embedded search engine as a backend: a SearchEngine service holds the current snapshot's
 * SearchIndex and, beside it, a segment of the pages added since (webFetch's addToIndex;
 * core/index/SegmentedIndex.ts). WebSearch, ImageSearch and StoredPages answer from whatever is
 * current when a query starts. A swap is one atomic Ref.set: a query already running keeps
 * the index it read and finishes on it, and no request is turned away.
 *
 * Adding pages never stops the answers: the segment is built from the added pages off this
 * thread where the platform can (a job thread: core/jobs), linked to the
 * snapshot in steps between which queries are answered, and swapped in; pages added meanwhile
 * go into the next build. A new snapshot (a reload) keeps the added pages, less those it holds
 * as they were added (a `periscope index` run took them in); with a journal (a snapshot file's
 * `.added.jsonl`) they outlive the process too.
 *
 * Wiring:
 *   EngineSearch.layer(index)                         // an index built or decoded by the caller
 *   EngineSearch.layerFromSnapshot(readBytesEffect)   // decode at startup (Node file, Deno asset or URL)
 *   SearchEngine.use((engine) => engine.reload(bytes)) // a later swap, e.g. on SIGHUP or an admin call
 */
import { Clock, Context, Effect, Layer, Queue, Ref, Semaphore } from "effect"
import type { IndexDocument } from "../index/Document.ts"
import type { ResolvedEngineOptions } from "../index/EngineOptions.ts"
import { defaultExpansionSettings, type ExpansionSettings } from "../index/Expansion.ts"
import { IndexBuilder } from "../index/IndexBuilder.ts"
import { type IndexedPage, pageByUrl } from "../index/PageByUrl.ts"
import type { ImageHit, SearchIndex } from "../index/SearchIndex.ts"
import { buildSegment, segmentSnapshotJob } from "../index/SegmentBuild.ts"
import { linkSegment, SegmentedIndex, type ServingIndex } from "../index/SegmentedIndex.ts"
import { SnapshotError } from "../index/Snapshot.ts"
import { decodeSnapshotFast } from "../index/SnapshotLoad.ts"
import { JobWorkers, type JobWorkersShape } from "../jobs/JobRunner.ts"
import { ImageSearch } from "../search/ImageSearch.ts"
import type { PageIndexing } from "../search/PageIndexing.ts"
import { SearchBackendError } from "../search/SearchError.ts"
import { StoredPages } from "../search/StoredPages.ts"
import type { SearchQuery } from "../search/SearchQuery.ts"
import type { ImageResult } from "../search/SearchResult.ts"
import { WebSearch } from "../search/WebSearch.ts"
import { ResultCache } from "../store/ResultCache.ts"
import { spanned } from "../store/Spans.ts"
import { AddedPages, AddedPagesLimits } from "./AddedPages.ts"
import type { AddedPagesJournal } from "./AddedPagesJournal.ts"
import { engineWebAnswer } from "./EngineWebAnswer.ts"

export type { ServingIndex } from "../index/SegmentedIndex.ts"

/** What a loaded index holds, for logs and health checks. */
export interface EngineSummary {
  readonly documents: number
  readonly images: number
}

/** Pages added since the snapshot: how many, their bytes, and whether searches see them all yet. */
export interface AddedSummary {
  readonly pages: number
  readonly bytes: number
  readonly searchable: boolean
}

/** Builds the added pages' segment with the snapshot's options. */
export type SegmentBuilder = (documents: ReadonlyArray<IndexDocument>, options: ResolvedEngineOptions) => Effect.Effect<SearchIndex, string>

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Heap of the thread that builds a segment: one at its bounds (fetch.addedBytesMax) takes a fraction of it. */
const segmentMemoryMb = 1024
/** A build still running after this has gone wrong: its thread is ended. */
const segmentDeadlineMs = 10 * 60_000

/**
 * The segment built on a job thread of its own, ended with the build so that its memory goes
 * with it (the request jobs' threads stay free for pages); on the calling thread where the
 * runtime has no threads (the embed library's default).
 */
export const segmentsOn = (workers: JobWorkersShape): SegmentBuilder => (documents, options) =>
  Effect.scoped(Effect.gen(function*() {
    const runner = yield* workers.start({ workers: 1, memoryMb: segmentMemoryMb, queue: 1, deadlineMs: segmentDeadlineMs })
    if (runner.where === "same thread") return yield* Effect.try({ try: () => buildSegment(documents, options), catch: describe })
    const bytes = yield* Effect.mapError(runner.run(segmentSnapshotJob, { documents, options }), (error) => error.message)
    return yield* decodeSnapshotFast(bytes, (error) => `the segment's snapshot could not be read: ${describe(error)}`)
  }))

export interface EngineConfig {
  /** Where added pages are kept across restarts; without one they live as long as the process. */
  readonly journal?: AddedPagesJournal | undefined
  /** How segments are built; by default on the platform's job threads (JobWorkers). */
  readonly buildSegment?: SegmentBuilder | undefined
  /** Query expansion's depths and weights (`expand: true`); Anserini's RM3 defaults otherwise. */
  readonly expansion?: ExpansionSettings | undefined
}

export class SearchEngine extends Context.Service<SearchEngine, {
  /** What queries use right now: the snapshot, with the added pages' segment beside it when there are any. */
  readonly current: Effect.Effect<ServingIndex>
  /** The snapshot alone. */
  readonly snapshot: Effect.Effect<SearchIndex>
  /** Makes `index` the snapshot (the added pages stay beside it); queries already running finish on the previous one. */
  readonly replace: (index: SearchIndex) => Effect.Effect<EngineSummary>
  /** Decodes snapshot bytes and makes them current; a bad snapshot fails and leaves the current index in place. */
  readonly reload: (bytes: Uint8Array) => Effect.Effect<EngineSummary, SnapshotError>
  /**
   * Adds a page for `caller` (a key's name) within the bounds (AddedPagesLimits), or says why
   * not. Returns at once: the page is searchable once the next segment is built.
   */
  readonly add: (page: IndexDocument, caller: string) => Effect.Effect<PageIndexing>
  readonly added: Effect.Effect<AddedSummary>
  /** The stored page under `url`'s key (an added page first), up to `maxChars` of its text. */
  readonly page: (url: string, maxChars: number) => Effect.Effect<IndexedPage | undefined>
  /** How a search that asks for `expand` is expanded. */
  readonly expansion: ExpansionSettings
}>()("periscope/backends/SearchEngine") {
  /** A SearchEngine starting from `initial`. */
  static readonly layer = (initial: SearchIndex, config: EngineConfig = {}): Layer.Layer<SearchEngine> =>
    Layer.effect(SearchEngine, makeEngine(initial, config))
}

interface EngineState {
  readonly snapshot: SearchIndex
  readonly serving: SearchIndex | SegmentedIndex
  /** The added pages' own index, and the AddedPages version it holds. */
  readonly segment: SearchIndex | undefined
  readonly version: number
}

/** Runs a generator of steps (linkSegment) to its end, letting other fibers and I/O in between steps. */
const runSteps = <A>(steps: Generator<void, A>): Effect.Effect<A> =>
  Effect.gen(function*() {
    for (;;) {
      const next = steps.next()
      if (next.done === true) return next.value
      yield* Effect.yieldNow
    }
  })

const sameOptions = (a: ResolvedEngineOptions, b: ResolvedEngineOptions) => JSON.stringify(a) === JSON.stringify(b)

const summaryOf = (index: ServingIndex): EngineSummary => ({ documents: index.documentCount, images: index.imageCount })

const makeEngine = Effect.fnUntraced(function*(initial: SearchIndex, config: EngineConfig) {
  const pages = new AddedPages(yield* AddedPagesLimits)
  // Answers cached from an index outlive it by their TTL: every swap drops them.
  const cache = yield* Effect.serviceOption(ResultCache)
  const build = config.buildSegment ?? segmentsOn(yield* JobWorkers)
  const journal = config.journal
  const cell = yield* Ref.make<EngineState>({ snapshot: initial, serving: initial, segment: undefined, version: pages.version })
  // One swap at a time: a reload and a segment build each read the other's result.
  const turns = yield* Semaphore.make(1)
  const wake = yield* Queue.unbounded<void>()

  /** `snapshot` served with the added pages as they are now (their segment built again only when they changed). */
  const serve = Effect.fnUntraced(function*(snapshot: SearchIndex) {
    const state = yield* Ref.get(cell)
    const version = pages.version
    let segment = pages.size === 0 ? undefined : state.segment
    if (pages.size > 0 && (segment === undefined || state.version !== version || !sameOptions(segment.options, snapshot.options))) {
      const built = yield* Effect.result(build(pages.documents(), snapshot.options))
      if (built._tag === "Failure") {
        yield* Effect.logError(`added pages: ${pages.size} page(s) could not be indexed (${built.failure}); searches do not see the latest ones`)
        if (state.snapshot !== snapshot) yield* Ref.set(cell, { ...state, snapshot, serving: state.segment === undefined ? snapshot : yield* runSteps(linkSegment(snapshot, state.segment)) })
        return
      }
      segment = built.success
    }
    const serving = segment === undefined ? snapshot : yield* runSteps(linkSegment(snapshot, segment))
    yield* Ref.set(cell, { snapshot, serving, segment, version })
    if (cache._tag === "Some") yield* cache.value.clear
  })

  /** The added pages `snapshot` took in as they were added leave the segment and the journal. */
  const forgetTakenIn = Effect.fnUntraced(function*(snapshot: SearchIndex) {
    if (pages.size === 0) return
    const taken = yield* runSteps(pages.takenInBy(snapshot))
    if (taken.length === 0) return
    pages.remove(taken)
    if (journal !== undefined) yield* journal.rewrite(pages.documents())
    yield* Effect.logInfo(`added pages: ${taken.length} are in the snapshot now; ${pages.size} remain beside it`)
  })

  const replace = Effect.fn("SearchEngine.replace")(function*(index: SearchIndex) {
    return yield* turns.withPermit(Effect.gen(function*() {
      yield* forgetTakenIn(index)
      yield* serve(index)
      return summaryOf((yield* Ref.get(cell)).serving)
    }))
  })

  // The pages kept from before, then a segment build whenever pages were added since the last.
  yield* Effect.forkScoped(Effect.gen(function*() {
    if (journal !== undefined) {
      const kept = yield* journal.read
      for (const document of kept) pages.restore(document)
      if (kept.length > 0) {
        yield* turns.withPermit(Effect.andThen(forgetTakenIn(initial), Effect.suspend(() => serve(initial))))
        yield* Effect.logInfo(`added pages: ${pages.size} from ${journal.path} searched beside the snapshot`)
      }
    }
    for (;;) {
      yield* Queue.take(wake)
      yield* Queue.clear(wake)
      yield* turns.withPermit(Effect.suspend(() => Effect.flatMap(Ref.get(cell), (state) => state.version === pages.version ? Effect.void : serve(state.snapshot))))
    }
  }))

  return SearchEngine.of({
    current: Effect.map(Ref.get(cell), (state) => state.serving),
    snapshot: Effect.map(Ref.get(cell), (state) => state.snapshot),
    replace,
    reload: Effect.fn("SearchEngine.reload")(function*(bytes: Uint8Array) {
      return yield* replace(yield* decode(bytes))
    }),
    add: Effect.fnUntraced(function*(page: IndexDocument, caller: string) {
      const outcome = pages.add(page, caller, yield* Clock.currentTimeMillis)
      if (outcome.added) {
        if (journal !== undefined) yield* journal.append(page)
        yield* Queue.offer(wake, undefined)
      }
      return outcome
    }),
    added: Effect.map(Ref.get(cell), (state) => ({ pages: pages.size, bytes: pages.bytes, searchable: state.version === pages.version })),
    page: (url, maxChars) =>
      Effect.map(Ref.get(cell), ({ serving }) => serving instanceof SegmentedIndex ? serving.page(url, maxChars) : pageByUrl(serving, url, maxChars)),
    expansion: config.expansion ?? defaultExpansionSettings
  })
})

/** Snapshot bytes to an index, as an Effect failing with SnapshotError. */
const decode = (bytes: Uint8Array): Effect.Effect<SearchIndex, SnapshotError> =>
  decodeSnapshotFast(bytes, (error) =>
    error instanceof SnapshotError
      ? error
      : new SnapshotError({ reason: "malformed", message: `snapshot: ${error instanceof Error ? error.message : String(error)}` }))

/** An engine failure as the error the API maps to HTTP 500; the message says nothing internal. */
const engineFailure = () => new SearchBackendError({ reason: "internal", message: "the search engine failed to answer this query" })

/** A query answered from the index current when it starts, in a span of its own; a throw becomes a SearchBackendError. */
const onCurrentIndex = <A>(span: string, answer: (index: ServingIndex, query: SearchQuery, engine: SearchEngine["Service"]) => A) =>
  Effect.map(Effect.service(SearchEngine), (engine) =>
    (query: SearchQuery) =>
      spanned(Effect.flatMap(engine.current, (index) => Effect.try({ try: () => answer(index, query, engine), catch: engineFailure })), span))

/** The wire's image result: the engine's hit, with its size in pixels when the page stated it. */
const toImageResult = (hit: ImageHit): ImageResult => ({
  url: hit.url,
  refUrl: hit.refUrl,
  title: hit.title,
  ...(hit.width === undefined ? {} : { width: hit.width }),
  ...(hit.height === undefined ? {} : { height: hit.height })
})

/** WebSearch, ImageSearch and StoredPages answering from the current index of the SearchEngine. */
const searchLayer: Layer.Layer<WebSearch | ImageSearch | StoredPages, never, SearchEngine> = Layer.mergeAll(
  Layer.effect(
    WebSearch,
    Effect.map(onCurrentIndex("WebSearch.search", (index, query, engine) => engineWebAnswer(index, query, engine.expansion)), (search) => WebSearch.of({ search }))
  ),
  Layer.effect(
    ImageSearch,
    Effect.map(onCurrentIndex("ImageSearch.search", (index, query) => index.searchImages(query.keywords, query.num, { language: query.language }).map(toImageResult)), (search) => ImageSearch.of({ search }))
  ),
  Layer.effect(
    StoredPages,
    Effect.map(Effect.service(SearchEngine), (engine) =>
      StoredPages.of({
        // A page that cannot be read (a snapshot file gone bad) is one the index does not have.
        page: (url, maxChars) => engine.page(url, maxChars).pipe(Effect.orElseSucceed(() => undefined), Effect.catchDefect(() => Effect.succeed(undefined)))
      }))
  )
)

export const EngineSearch = {
  /** SearchEngine, WebSearch, ImageSearch and StoredPages over `initial`. */
  layer: (initial: SearchIndex, config: EngineConfig = {}): Layer.Layer<SearchEngine | WebSearch | ImageSearch | StoredPages> =>
    searchLayer.pipe(Layer.provideMerge(SearchEngine.layer(initial, config))),

  /**
   * The same, from snapshot bytes read by `load` (a Node file read, a Deno asset or fetch).
   * Startup fails with SnapshotError when the bytes are not an intact snapshot.
   */
  layerFromSnapshot: <E, R>(
    load: Effect.Effect<Uint8Array, E, R>,
    config: EngineConfig = {}
  ): Layer.Layer<SearchEngine | WebSearch | ImageSearch | StoredPages, E | SnapshotError, R> =>
    Layer.unwrap(load.pipe(Effect.flatMap(decode), Effect.map((index) => EngineSearch.layer(index, config)))),

  /** WebSearch, ImageSearch and StoredPages from a SearchEngine provided elsewhere. */
  searchLayer,

  /** An index with no documents: answers every query with no results (a server before its first snapshot). */
  emptyIndex: (): SearchIndex => new IndexBuilder().build()
} as const
