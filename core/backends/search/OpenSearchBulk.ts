/**
 * Loading documents into an OpenSearch/Elasticsearch index for the
 * `opensearch` search backend: the index is created with Periscope's mapping
 * when it does not exist, documents go in `_bulk` batches of NDJSON (bounded
 * by count and bytes), each document's id is its URL so a page loaded again
 * replaces itself. A 429 (the cluster's back-pressure), for the whole batch or
 * for single items, is retried with exponential backoff; other item errors
 * (a mapping conflict, a too-long id) are reported by URL and never stop the
 * load. The index is refreshed at the end, so the documents are searchable
 * when the command returns.
 */
import { Effect } from "effect"
import type { IndexDocument } from "../../index/Document.ts"
import { type OpenSearchConnection, OpenSearchError, openSearchRequest } from "./OpenSearchConnection.ts"
import { openSearchIndexBody, toOpenSearchSource } from "./OpenSearchMapping.ts"

export interface BulkOptions {
  /** Documents per `_bulk` request (default 500). */
  readonly batchDocuments?: number | undefined
  /** Bytes of NDJSON per request, roughly (default 5 MiB; OpenSearch's default limit is 100 MiB). */
  readonly batchBytes?: number | undefined
  /** Tries per batch after a 429 (default 6). */
  readonly maxRetries?: number | undefined
  /** First backoff after a 429, doubled each time (default 500 ms). */
  readonly retryBaseMs?: number | undefined
  /** Error messages kept for the report (default 10). */
  readonly errorSamples?: number | undefined
  /** Called after each batch with the documents sent so far. */
  readonly onBatch?: ((sent: number) => void) | undefined
}

export interface BulkReport {
  readonly indexed: number
  readonly failed: number
  readonly errors: ReadonlyArray<{ readonly url: string; readonly message: string }>
  readonly batches: number
  /** `_bulk` requests sent again after a 429. */
  readonly retries: number
}

/** OpenSearch refuses ids over 512 bytes. */
const MAX_ID_BYTES = 512
const encoder = new TextEncoder()

const indexPath = (connection: OpenSearchConnection) => `/${encodeURIComponent(connection.index)}`

/** True when the index exists. */
export const indexExists = (connection: OpenSearchConnection) =>
  Effect.map(openSearchRequest(connection, { method: "HEAD", path: indexPath(connection), accept: [404] }), (a) => a.status !== 404)

/** Creates the index with Periscope's mapping unless it exists; true when it was created. */
export const ensureIndex = Effect.fn("OpenSearch.ensureIndex")(function*(connection: OpenSearchConnection) {
  if (yield* indexExists(connection)) return false
  const answer = yield* openSearchRequest(connection, { method: "PUT", path: indexPath(connection), json: openSearchIndexBody, accept: [400] })
  if (answer.status === 400) {
    // Created by someone else between the two requests: fine. Anything else is a real refusal.
    const type = String((answer.body as { error?: { type?: unknown } } | null)?.error?.type ?? "")
    if (type !== "resource_already_exists_exception") {
      return yield* new OpenSearchError({ reason: "rejected", status: 400, message: `OpenSearch refused to create the index ${connection.index} (${type || "400"})` })
    }
    return false
  }
  return true
})

/** Documents in the index, or undefined when there is no such index. */
export const countDocuments = Effect.fn("OpenSearch.count")(function*(connection: OpenSearchConnection) {
  const answer = yield* openSearchRequest(connection, { method: "GET", path: `${indexPath(connection)}/_count`, accept: [404] })
  if (answer.status === 404) return undefined
  const count = (answer.body as { count?: unknown } | null)?.count
  return typeof count === "number" ? count : undefined
})

/** Deletes the index (a --fresh load starts from an empty one); nothing when it does not exist. */
export const deleteIndex = Effect.fn("OpenSearch.deleteIndex")(function*(connection: OpenSearchConnection) {
  yield* openSearchRequest(connection, { method: "DELETE", path: indexPath(connection), accept: [404] })
})

interface Pending {
  readonly url: string
  readonly lines: string
}

const itemsOf = (body: unknown): ReadonlyArray<{ status: number; error: string | undefined }> => {
  const items = (body as { items?: unknown } | null)?.items
  if (!Array.isArray(items)) return []
  return items.map((item) => {
    const action = (item as Record<string, { status?: unknown; error?: { type?: unknown; reason?: unknown } }>).index ?? {}
    const status = typeof action.status === "number" ? action.status : 0
    const error = action.error === undefined ? undefined : [action.error.type, action.error.reason].filter((s) => typeof s === "string").join(": ")
    return { status, error }
  })
}

/** Loads `documents` into the index (created when missing); fails only when the cluster cannot be used at all. */
export const bulkLoad = Effect.fn("OpenSearch.bulkLoad")(function*(
  connection: OpenSearchConnection,
  documents: Iterable<IndexDocument>,
  options: BulkOptions = {}
) {
  const batchDocuments = Math.max(1, options.batchDocuments ?? 500)
  const batchBytes = Math.max(1, options.batchBytes ?? 5 * 1024 * 1024)
  const maxRetries = options.maxRetries ?? 6
  const retryBaseMs = options.retryBaseMs ?? 500
  const sampleLimit = options.errorSamples ?? 10
  const errors: Array<{ url: string; message: string }> = []
  let indexed = 0
  let failed = 0
  let batches = 0
  let retries = 0
  let sent = 0
  const fail = (url: string, message: string) => {
    failed++
    if (errors.length < sampleLimit) errors.push({ url, message })
  }

  yield* ensureIndex(connection)

  const send = Effect.fnUntraced(function*(batch: ReadonlyArray<Pending>) {
    let pending = batch
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) {
        retries++
        yield* Effect.sleep(retryBaseMs * 2 ** (attempt - 1))
      }
      const answer = yield* openSearchRequest(connection, {
        method: "POST",
        path: "/_bulk",
        ndjson: pending.map((p) => p.lines).join(""),
        accept: [429]
      })
      batches++
      if (answer.status === 429) {
        if (attempt >= maxRetries) {
          for (const p of pending) fail(p.url, `still rejected with 429 after ${maxRetries} retries`)
          return
        }
        continue
      }
      const items = itemsOf(answer.body)
      const again: Array<Pending> = []
      pending.forEach((p, i) => {
        const item = items[i]
        if (item === undefined) fail(p.url, "no answer for this document in the bulk response")
        else if (item.status >= 200 && item.status < 300) indexed++
        else if (item.status === 429 && attempt < maxRetries) again.push(p)
        else fail(p.url, `${item.status}${item.error ? ` ${item.error}` : ""}`)
      })
      pending = again
    }
  })

  let batch: Array<Pending> = []
  let bytes = 0
  const flush = Effect.suspend(() => {
    const out = batch
    batch = []
    bytes = 0
    sent += out.length
    return out.length === 0 ? Effect.void : Effect.tap(send(out), () => Effect.sync(() => options.onBatch?.(sent)))
  })
  for (const document of documents) {
    if (encoder.encode(document.url).byteLength > MAX_ID_BYTES) {
      fail(document.url, `the URL is longer than ${MAX_ID_BYTES} bytes, too long for a document id`)
      continue
    }
    const lines = `${JSON.stringify({ index: { _index: connection.index, _id: document.url } })}\n${JSON.stringify(toOpenSearchSource(document))}\n`
    batch.push({ url: document.url, lines })
    bytes += lines.length
    if (batch.length >= batchDocuments || bytes >= batchBytes) yield* flush
  }
  yield* flush
  yield* openSearchRequest(connection, { method: "POST", path: `${indexPath(connection)}/_refresh` })
  return { indexed, failed, errors, batches, retries } satisfies BulkReport
})
