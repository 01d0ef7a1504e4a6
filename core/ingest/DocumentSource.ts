/**
 * The source contract of the indexer: a named stream of items, each a
 * document, an item skipped on purpose (with the reason, for the summary), or
 * an item that failed (with the error). A bad item never ends a source; a
 * source that cannot be read at all fails its stream with a SourceError, which
 * the read loop counts as one error and goes on with the next source.
 */
import { Schema, type Effect, type Stream } from "effect"
import type { IndexDocument } from "../index/Document.ts"

export type SourceItem =
  | { readonly _tag: "Document"; readonly origin: string; readonly document: IndexDocument }
  | { readonly _tag: "Skipped"; readonly origin: string; readonly reason: string }
  | { readonly _tag: "Failed"; readonly origin: string; readonly message: string }

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
}

export const documentItem = (origin: string, document: IndexDocument): SourceItem =>
  document.text.trim() === ""
    ? { _tag: "Skipped", origin, reason: "no main text" }
    : { _tag: "Document", origin, document }

export const skipped = (origin: string, reason: string): SourceItem => ({ _tag: "Skipped", origin, reason })

export const failed = (origin: string, error: unknown): SourceItem => ({
  _tag: "Failed",
  origin,
  message: error instanceof Error ? error.message : String(error)
})

/** Sizes in messages: "12.0 MiB". */
export const formatBytes = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} B`
