/**
 * Adds fetched pages to the running engine's index (webFetch's `addToIndex`): the page goes to
 * the engine's added pages, within their bounds, and the answer says whether it went in or why
 * not. Nothing waits for an index build: the engine searches the added pages in a segment
 * beside its snapshot, built off the answering thread (EngineSearch.ts).
 */
import { Effect } from "effect"
import type { PageIndexing } from "../search/PageIndexing.ts"
import type { CachedPage } from "../store/PageCache.ts"
import { SearchEngine } from "./EngineSearch.ts"

/** Called once per fetched page that should go into the local index, with who asked (a key's name). */
export type IndexPage = (page: CachedPage, caller?: string) => Effect.Effect<PageIndexing>

/** Requests that name no key (grounded chat, config-wide addToIndex): one count among them. */
const UNNAMED = ""

/**
 * The hook GuardedWebFetch calls for pages to index, when the search backend is the engine
 * (undefined otherwise: a fixture or custom backend has no index to add to).
 */
export const pageIndexer: Effect.Effect<IndexPage | undefined> = Effect.map(Effect.serviceOption(SearchEngine), (engine) => {
  if (engine._tag === "None") return undefined
  const indexPage: IndexPage = (page, caller) =>
    engine.value.add({ url: page.url, title: page.title, text: page.text, date: page.date }, caller ?? UNNAMED)
  return indexPage
})
