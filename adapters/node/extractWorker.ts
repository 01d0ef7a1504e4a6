/**
 * An extraction worker thread (adapters/node/extractPool.ts): pages in, items
 * out, one at a time in the order they came. It loads only the ingest modules
 * that extraction needs (core/ingest/RawPage.ts and what it imports), so it is
 * ready in a fraction of a second.
 */
import { parentPort } from "node:worker_threads"
import { extractRawPage, type RawPage } from "../../core/ingest/RawPage.ts"

/** One page to extract; `id` comes back with its item. */
export interface ExtractRequest {
  readonly id: number
  readonly origin: string
  readonly page: RawPage
}

const port = parentPort
if (port === null) throw new Error("extractWorker.ts runs as a worker thread of extractPool.ts, not on its own")
port.on("message", (request: ExtractRequest) => {
  port.postMessage({ id: request.id, item: extractRawPage(request.origin, request.page) })
})
