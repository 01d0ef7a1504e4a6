/**
 * What a source yields per item it reads: a document, an item it skipped on
 * purpose (with the reason, for the summary), or an item that failed (with the
 * error). A bad item never ends a source; it is reported and reading goes on.
 */
import type { IndexDocument } from "../../../core/index/Document.ts"

export type SourceItem =
  | { readonly _tag: "Document"; readonly origin: string; readonly document: IndexDocument }
  | { readonly _tag: "Skipped"; readonly origin: string; readonly reason: string }
  | { readonly _tag: "Failed"; readonly origin: string; readonly message: string }

/** A named stream of items; `describe` is what progress and summaries show. */
export interface DocumentSource {
  readonly describe: string
  readonly items: () => AsyncIterable<SourceItem>
  /** How many items to expect, for progress and ETA; undefined when it cannot be known cheaply. */
  readonly estimate?: () => Promise<number | undefined>
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
