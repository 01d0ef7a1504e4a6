/**
 * The local search's own copy of its pages: a backend that stores the text it searches
 * (the embedded engine, the fixture backend) provides it, so that grounded chat reads a page
 * the local index found from there instead of fetching it from the web again.
 */
import { Context, type Effect } from "effect"

export interface StoredPage {
  readonly url: string
  readonly title: string
  /** The page's text from its start, at most the characters asked for. */
  readonly text: string
  readonly date: string | null
}

export class StoredPages extends Context.Service<StoredPages, {
  /** The page the local index holds at `url` (tracking parameters and a trailing slash aside), or undefined. */
  page(url: string, maxChars: number): Effect.Effect<StoredPage | undefined>
}>()("periscope/search/StoredPages") {}
