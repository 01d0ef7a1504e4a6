/**
 * An extraction worker thread (adapters/node/extractPool.ts): pages in, items
 * out, and the build's page texts in, their tokens out (AnalyzedText.ts), one
 * request at a time in the order they came. It loads only the modules those
 * two need (core/ingest/RawPage.ts and the analyzer), so it is ready in a
 * fraction of a second.
 */
import { parentPort } from "node:worker_threads"
import type { AnalyzedFields } from "../../core/index/analysis/AnalyzedText.ts"
import { extractRawPage, type RawPage } from "../../core/ingest/RawPage.ts"
import type { SourceItem } from "../../core/ingest/SourceItem.ts"
import { analyzeTexts } from "./analyzeTexts.ts"

/** One page to extract, or one page's texts to analyse; `id` comes back with the answer. */
export type WorkerRequest =
  | { readonly kind: "extract"; readonly id: number; readonly origin: string; readonly page: RawPage }
  | { readonly kind: "analyze"; readonly id: number; readonly texts: ReadonlyArray<string>; readonly stemming: boolean }

export type WorkerAnswer =
  | { readonly kind: "extract"; readonly id: number; readonly item: SourceItem }
  | { readonly kind: "analyze"; readonly id: number; readonly analyzed: AnalyzedFields }

const port = parentPort
if (port === null) throw new Error("extractWorker.ts runs as a worker thread of extractPool.ts, not on its own")
port.on("message", (request: WorkerRequest) => {
  if (request.kind === "extract") {
    port.postMessage({ kind: "extract", id: request.id, item: extractRawPage(request.origin, request.page) } satisfies WorkerAnswer)
  } else {
    const analyzed = analyzeTexts(request.texts, request.stemming)
    // The tokens' buffers move to the main thread instead of being copied.
    port.postMessage({ kind: "analyze", id: request.id, analyzed } satisfies WorkerAnswer, analyzed.map((text) => text.tokens.buffer as ArrayBuffer))
  }
})
