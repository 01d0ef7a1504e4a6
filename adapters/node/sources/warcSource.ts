/**
 * WARC and WARC.gz files (as Common Crawl publishes them) as documents, read
 * with warcio. Only `response` records are pages; request, metadata, warcinfo
 * and revisit records are passed over silently. A response that is not a
 * successful HTML answer is skipped with the reason. The crawl time
 * (WARC-Date) is never taken as a publish date.
 */
import { createReadStream } from "node:fs"
import { WARCParser, type WARCRecord } from "warcio"
import { decodeHtml } from "../../../core/ingest/HtmlBytes.ts"
import { htmlToDocument } from "../../../core/ingest/HtmlDocument.ts"
import { DEFAULT_MAX_FILE_BYTES } from "./htmlDirectorySource.ts"
import { type DocumentSource, documentItem, failed, formatBytes, type SourceItem, skipped } from "../../../core/ingest/DocumentSource.ts"
import { asyncItems } from "./asyncItems.ts"

export interface WarcOptions {
  /** Payloads larger than this are skipped without being read into memory (default 10 MiB). */
  readonly maxBytes?: number | undefined
}

const HTML_TYPE = /^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i

/** Why a response record is not an HTML page, or undefined when it is one. */
const notHtmlPage = (record: WARCRecord): string | undefined => {
  const status = Number(record.httpHeaders?.statusCode)
  if (!Number.isInteger(status)) return "response without an HTTP status line"
  if (status < 200 || status >= 300) return `HTTP ${status}`
  const type = record.httpHeaders?.headers.get("content-type") ?? ""
  if (!HTML_TYPE.test(type)) return `not HTML (${type.split(";")[0]!.trim() || "no Content-Type"})`
  return undefined
}

// Reads past the end that a reader may make before it is told the file was cut short.
const READS_PAST_END = 1000

/**
 * The file's bytes for warcio. When a record is cut short (a truncated download),
 * warcio's skip of that record keeps asking for the missing bytes forever; after
 * the end, this source answers "done" a while, then throws, which ends the file
 * with an error instead of hanging the run.
 */
const fileChunks = (path: string): AsyncIterable<Uint8Array> => ({
  [Symbol.asyncIterator]: () => {
    const chunks = createReadStream(path)[Symbol.asyncIterator]()
    let readsPastEnd = 0
    return {
      next: async (): Promise<IteratorResult<Uint8Array>> => {
        if (readsPastEnd > 0) {
          if (++readsPastEnd > READS_PAST_END) throw new Error("the archive ends in the middle of a record (truncated file)")
          return { done: true, value: undefined }
        }
        const result = await chunks.next()
        if (result.done) readsPastEnd = 1
        return result as IteratorResult<Uint8Array>
      },
      return: async (): Promise<IteratorResult<Uint8Array>> => {
        await chunks.return?.()
        return { done: true, value: undefined }
      }
    }
  }
})

export const warcSource = (path: string, options: WarcOptions = {}): DocumentSource => {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_FILE_BYTES
  return {
    describe: `${path} (WARC)`,
    items: asyncItems(path, async function*(): AsyncGenerator<SourceItem> {
      // The parser detects gzip members itself, so .warc and .warc.gz read the same way.
      const parser = new WARCParser(fileChunks(path))
      let index = 0
      try {
        for await (const record of parser) {
          index++
          if (record.warcType !== "response") continue
          const url = record.warcTargetURI ?? ""
          const origin = url || `record ${index}`
          try {
            const reason = notHtmlPage(record)
            if (reason !== undefined) {
              yield skipped(origin, reason)
              continue
            }
            if (record.warcContentLength > maxBytes) {
              yield skipped(origin, `larger than ${formatBytes(maxBytes)}`)
              continue
            }
            const bytes = await record.readFully(true)
            const contentType = record.httpHeaders?.headers.get("content-type") ?? undefined
            yield documentItem(origin, htmlToDocument(decodeHtml(bytes, contentType), url))
          } catch (error) {
            yield failed(origin, error)
          }
        }
      } catch (error) {
        // A truncated or corrupt file ends the file, not the run; what was read is kept.
        yield failed(`${path} after record ${index}`, error)
      }
    })
  }
}
