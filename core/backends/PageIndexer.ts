/**
 * Adds fetched pages to the running engine's index (webFetch's `addToIndex`). The engine's
 * index is immutable (one build, one snapshot), so adding means rebuilding: the current index's
 * pages and images are read back from its stored fields, the new pages are added (a page already
 * there under the same URL is replaced by the newer one), and the result is swapped in with
 * SearchEngine.replace, as a reload does; cached search answers are dropped with it.
 *
 * Pages wait in a queue and one background fiber rebuilds with every page that arrived in the
 * meantime, so a burst of fetches costs one rebuild and no request waits for one. The rebuild
 * itself is synchronous work on this process (about as long as `periscope index` takes for the
 * same documents), which is why it is batched. Added pages live in memory only: a reload
 * (SIGHUP) or a restart goes back to the snapshot on disk.
 */
import { Effect, Queue } from "effect"
import { IndexBuilder } from "../index/IndexBuilder.ts"
import type { SearchIndex } from "../index/SearchIndex.ts"
import type { CachedPage } from "../store/PageCache.ts"
import { ResultCache } from "../store/ResultCache.ts"
import { SearchEngine } from "./EngineSearch.ts"

/** Called once per fetched page that should go into the local index (webFetch's addToIndex). */
export type IndexPage = (page: CachedPage) => Effect.Effect<void>

/** `index` with `pages` added (same URL: the page replaces the indexed one), and how many went in. */
export const withPages = (index: SearchIndex, pages: ReadonlyArray<CachedPage>): { readonly index: SearchIndex; readonly added: number } => {
  const builder = new IndexBuilder(index.options)
  builder.add(index.documents())
  const report = builder.add(pages.filter((p) => p.text.trim() !== "").map((p) => ({ url: p.url, title: p.title, text: p.text, date: p.date })))
  return { index: builder.build(), added: report.added + report.duplicates }
}

/**
 * The hook GuardedWebFetch calls for pages to index, when the search backend is the engine
 * (undefined otherwise: a fixture or custom backend has no index to add to). Needs a Scope
 * for its background fiber.
 */
export const pageIndexer = Effect.gen(function*() {
  const engine = yield* Effect.serviceOption(SearchEngine)
  if (engine._tag === "None") return undefined
  const cache = yield* Effect.serviceOption(ResultCache)
  const queue = yield* Queue.unbounded<CachedPage>()
  const rebuild = Effect.gen(function*() {
    const pages = yield* Queue.takeAll(queue)
    const current = yield* engine.value.current
    const next = yield* Effect.try({ try: () => withPages(current, pages), catch: (error) => error })
    const summary = yield* engine.value.replace(next.index)
    if (cache._tag === "Some") yield* cache.value.clear
    yield* Effect.logInfo(`webFetch: added ${next.added} page(s) to the local index (${summary.documents} documents)`)
  }).pipe(Effect.catch((error) => Effect.logError(`webFetch: pages could not be added to the local index: ${String(error)}`)))
  yield* Effect.forkScoped(Effect.forever(rebuild))
  const indexPage: IndexPage = (page) => Effect.asVoid(Queue.offer(queue, page))
  return indexPage
})
