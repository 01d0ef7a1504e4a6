/**
 * The source contract of the indexer: a named stream of items, each a
 * document, an item skipped on purpose (with the reason, for the summary), or
 * an item that failed (with the error). A bad item never ends a source; a
 * source that cannot be read at all fails its stream with a SourceError, which
 * the read loop counts as one error and goes on with the next source.
 */
import { Schema, type Effect, type Stream } from "effect"
import type { RawPage } from "./RawPage.ts"
import type { SourceItem } from "./SourceItem.ts"

export { documentItem, failed, skipped, type SourceItem } from "./SourceItem.ts"

/** A page not yet extracted: the read loop turns it into a SourceItem (RawPage.ts). */
export type PageItem = { readonly _tag: "Page"; readonly origin: string; readonly page: RawPage }

/** A whole source could not be read (missing file, unreadable folder). */
export class SourceError extends Schema.TaggedError<SourceError>()("SourceError", {
  origin: Schema.String,
  message: Schema.String
}) {}

/** What progress and summaries show is `describe`; `items` is read once per run. */
export interface DocumentSource {
  readonly describe: string
  readonly items: Stream.Stream<SourceItem, SourceError>
  /** How many items to expect, for progress and ETA; undefined when it cannot be known cheaply. */
  readonly estimate?: Effect.Effect<number | undefined> | undefined
  /**
   * The same items with HTML pages left unextracted (PageItem), for a read
   * loop that extracts on other threads; `items` is this stream with every
   * page extracted in place. Sources whose pages need no extraction, or
   * extract them themselves (the crawler reads links from them), leave it out.
   */
  readonly pages?: Stream.Stream<SourceItem | PageItem, SourceError> | undefined
}

/** Sizes in messages: "12.0 MiB". */
export const formatBytes = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} B`
