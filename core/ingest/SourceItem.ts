/**
 * What a source yields, and the constructors every source uses. Kept apart
 * from DocumentSource (which re-exports it) with no runtime import at all, so
 * an extraction worker thread loads only the ingest modules, not effect.
 */
import type { IndexDocument } from "../index/Document.ts"

export type SourceItem =
  | { readonly _tag: "Document"; readonly origin: string; readonly document: IndexDocument }
  | { readonly _tag: "Skipped"; readonly origin: string; readonly reason: string }
  | { readonly _tag: "Failed"; readonly origin: string; readonly message: string }

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
