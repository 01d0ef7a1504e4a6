/**
 * The embedded search engine as a backend: a SearchEngine service holds the current
 * SearchIndex in a Ref, and WebSearch and ImageSearch answer from whatever index is current
 * when a query starts. Swapping in a new snapshot is one atomic Ref.set: a query already
 * running keeps the index it read and finishes on it, and no request is turned away.
 *
 * Wiring:
 *   EngineSearch.layer(index)                         // an index built or decoded by the caller
 *   EngineSearch.layerFromSnapshot(readBytesEffect)   // decode at startup (Node file, Deno asset or URL)
 *   SearchEngine.use((engine) => engine.reload(bytes)) // a later swap, e.g. on SIGHUP or an admin call
 */
import { Context, Effect, Layer, Ref } from "effect"
import { IndexBuilder } from "../index/IndexBuilder.ts"
import { pageByUrl } from "../index/PageByUrl.ts"
import type { ImageHit, SearchIndex } from "../index/SearchIndex.ts"
import { SnapshotError } from "../index/Snapshot.ts"
import { decodeSnapshotFast } from "../index/SnapshotLoad.ts"
import { ImageSearch } from "../search/ImageSearch.ts"
import { SearchBackendError } from "../search/SearchError.ts"
import { StoredPages } from "../search/StoredPages.ts"
import type { SearchQuery } from "../search/SearchQuery.ts"
import { type ImageResult, toWebSearchData } from "../search/SearchResult.ts"
import { WebSearch } from "../search/WebSearch.ts"
import { spanned } from "../store/Spans.ts"

/** What a loaded index holds, for logs and health checks. */
export interface EngineSummary {
  readonly documents: number
  readonly images: number
}

export class SearchEngine extends Context.Service<SearchEngine, {
  /** The index queries use right now. */
  readonly current: Effect.Effect<SearchIndex>
  /** Makes `index` current; queries already running finish on the previous one. */
  readonly replace: (index: SearchIndex) => Effect.Effect<EngineSummary>
  /** Decodes snapshot bytes and makes them current; a bad snapshot fails and leaves the current index in place. */
  readonly reload: (bytes: Uint8Array) => Effect.Effect<EngineSummary, SnapshotError>
}>()("periscope/backends/SearchEngine") {
  /** A SearchEngine starting from `initial`. */
  static readonly layer = (initial: SearchIndex): Layer.Layer<SearchEngine> =>
    Layer.effect(
      SearchEngine,
      Effect.gen(function*() {
        const cell = yield* Ref.make(initial)
        const replace = Effect.fn("SearchEngine.replace")(function*(index: SearchIndex) {
          yield* Ref.set(cell, index)
          return { documents: index.documentCount, images: index.imageCount } satisfies EngineSummary
        })
        return SearchEngine.of({
          current: Ref.get(cell),
          replace,
          reload: Effect.fn("SearchEngine.reload")(function*(bytes: Uint8Array) {
            return yield* replace(yield* decode(bytes))
          })
        })
      })
    )
}

/** Snapshot bytes to an index, as an Effect failing with SnapshotError. */
const decode = (bytes: Uint8Array): Effect.Effect<SearchIndex, SnapshotError> =>
  decodeSnapshotFast(bytes, (error) =>
    error instanceof SnapshotError
      ? error
      : new SnapshotError({ reason: "malformed", message: `snapshot: ${error instanceof Error ? error.message : String(error)}` }))

/** An engine failure as the error the API maps to HTTP 500; the message says nothing internal. */
const engineFailure = () => new SearchBackendError({ reason: "internal", message: "the search engine failed to answer this query" })

/** A query answered from the index current when it starts, in a span of its own; a throw becomes a SearchBackendError. */
const onCurrentIndex = <A>(span: string, answer: (index: SearchIndex, query: SearchQuery) => A) =>
  Effect.map(Effect.service(SearchEngine), (engine) =>
    (query: SearchQuery) =>
      spanned(Effect.flatMap(engine.current, (index) => Effect.try({ try: () => answer(index, query), catch: engineFailure })), span))

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
    Effect.map(onCurrentIndex("WebSearch.search", (index, query) => {
      const answer = index.search(query.keywords, query.num)
      return toWebSearchData(answer.query, answer.hits)
    }), (search) => WebSearch.of({ search }))
  ),
  Layer.effect(
    ImageSearch,
    Effect.map(onCurrentIndex("ImageSearch.search", (index, query) => index.searchImages(query.keywords, query.num).map(toImageResult)), (search) => ImageSearch.of({ search }))
  ),
  Layer.effect(
    StoredPages,
    Effect.map(Effect.service(SearchEngine), (engine) =>
      StoredPages.of({
        // A page that cannot be read (a snapshot file gone bad) is one the index does not have.
        page: (url, maxChars) =>
          Effect.flatMap(engine.current, (index) => Effect.try({ try: () => pageByUrl(index, url, maxChars), catch: () => undefined })).pipe(
            Effect.orElseSucceed(() => undefined)
          )
      }))
  )
)

export const EngineSearch = {
  /** SearchEngine, WebSearch, ImageSearch and StoredPages over `initial`. */
  layer: (initial: SearchIndex): Layer.Layer<SearchEngine | WebSearch | ImageSearch | StoredPages> =>
    searchLayer.pipe(Layer.provideMerge(SearchEngine.layer(initial))),

  /**
   * The same, from snapshot bytes read by `load` (a Node file read, a Deno asset or fetch).
   * Startup fails with SnapshotError when the bytes are not an intact snapshot.
   */
  layerFromSnapshot: <E, R>(
    load: Effect.Effect<Uint8Array, E, R>
  ): Layer.Layer<SearchEngine | WebSearch | ImageSearch | StoredPages, E | SnapshotError, R> =>
    Layer.unwrap(load.pipe(Effect.flatMap(decode), Effect.map((index) => EngineSearch.layer(index)))),

  /** WebSearch, ImageSearch and StoredPages from a SearchEngine provided elsewhere. */
  searchLayer,

  /** An index with no documents: answers every query with no results (a server before its first snapshot). */
  emptyIndex: (): SearchIndex => new IndexBuilder().build()
} as const
