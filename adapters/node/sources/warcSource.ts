/**
 * WARC and WARC.gz files (as Common Crawl publishes them) as documents, read
 * with warcio. Only `response` records are pages; request, metadata, warcinfo
 * and revisit records are passed over silently. A response that is not a
 * successful HTML answer is skipped with the reason; one whose bytes are not
 * HTML (an image or random bytes served as text/html) is an error.
 *
 * Dates: the page's own date first; when it states none, the response's
 * Last-Modified header, then the record's WARC-Date (when it was crawled: the
 * page existed then), so dated searches do not drop every archived page.
 *
 * Damage is reported, never silent: gzip members are inflated by
 * zlib, which notices a cut or corrupt stream, and the WARC framing is checked
 * (the file must start with a WARC header, every record must be whole). What
 * was read before the damage is kept; the damage is one error naming the byte
 * where the file ends or breaks. A file cut exactly between two gzip members
 * is a valid, shorter archive and cannot be told from one.
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from "node:fs"
import { createGunzip, type Gunzip } from "node:zlib"
import { WARCParser, type WARCRecord } from "warcio"
import { type DocumentSource, failed, formatBytes, type PageItem, type SourceItem, skipped } from "../../../core/ingest/DocumentSource.ts"
import { generatedPageKind, generatedPageReason } from "../../../core/ingest/GeneratedPage.ts"
import { notHtml } from "../../../core/ingest/NotHtml.ts"
import { DEFAULT_MAX_FILE_BYTES } from "./htmlDirectorySource.ts"
import { asyncItems, extractedInPlace } from "./asyncItems.ts"

export interface WarcOptions {
  /** Payloads larger than this are skipped without being read into memory (default 10 MiB). */
  readonly maxBytes?: number | undefined
  /** Index generated index pages (genindex, index-all, ...) too; left out by default. */
  readonly keepGenerated?: boolean | undefined
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

/** The file is cut short or corrupt: ends reading it, reported once. */
class ArchiveDamage extends Error {}

// Reads past the end that a reader may make before it is told the file was cut short.
const READS_PAST_END = 1000

/** Gzipped by its first two bytes (the name may say either). */
const isGzipFile = (path: string): boolean => {
  const fd = openSync(path, "r")
  try {
    const magic = Buffer.alloc(2)
    return readSync(fd, magic, 0, 2, 0) === 2 && magic[0] === 0x1f && magic[1] === 0x8b
  } finally {
    closeSync(fd)
  }
}

interface ArchiveBytes extends AsyncIterable<Uint8Array> {
  /** True once every byte of the file was handed out. */
  readonly ended: () => boolean
  /** Plain WARC bytes handed out so far. */
  readonly offset: () => number
}

/**
 * A gzip file's inflated bytes, every byte zlib produced handed out before the
 * error that ends a cut or corrupt file. (A piped stream's async iterator drops
 * what it had buffered when it errors, so how many records of a cut archive
 * survived depended on how fast they were taken: a run extracting on worker
 * threads kept fewer than a one-thread run.) One file chunk is inflated at a
 * time, so memory stays bounded.
 */
async function* inflated(path: string, gunzip: Gunzip): AsyncGenerator<Uint8Array> {
  const file = createReadStream(path)
  const out: Array<Uint8Array> = []
  let failure: Error | undefined
  // Wakes whoever waits for a write or the end; a failed stream may never call a write's callback.
  let wake = () => {}
  gunzip.on("data", (chunk: Uint8Array) => out.push(chunk))
  gunzip.on("error", (error) => {
    failure ??= error
    wake()
  })
  gunzip.on("end", () => wake())
  const settled = (start: () => void) =>
    new Promise<void>((done) => {
      wake = done
      if (failure === undefined) start()
      else done()
    })
  try {
    for await (const chunk of file) {
      await settled(() => gunzip.write(chunk, () => wake()))
      // An error is emitted after the write's callback: let it land before looking.
      await new Promise((done) => setImmediate(done))
      while (out.length > 0) yield out.shift()!
      if (failure !== undefined) throw failure
    }
    await settled(() => gunzip.end())
    while (out.length > 0) yield out.shift()!
    if (failure !== undefined) throw failure
  } finally {
    file.destroy()
    gunzip.destroy()
  }
}

/**
 * The file's WARC bytes for warcio: inflated by zlib when gzipped (a cut or
 * corrupt member is an ArchiveDamage naming the byte), checked to start with a
 * WARC header. When a record is cut short, warcio's skip of it keeps asking for
 * the missing bytes forever; after the end this answers "done" a while, then
 * throws, which ends the file with an error instead of hanging the run.
 */
const archiveBytes = (path: string, size: number): ArchiveBytes => {
  const gzipped = isGzipFile(path)
  let ended = false
  let offset = 0
  const iterable: ArchiveBytes = {
    ended: () => ended,
    offset: () => offset,
    [Symbol.asyncIterator]: () => {
      const gunzip = gzipped ? createGunzip() : undefined
      const chunks = (gunzip === undefined ? createReadStream(path) : inflated(path, gunzip))[Symbol.asyncIterator]()
      let readsPastEnd = 0
      let damage: ArchiveDamage | undefined
      let first = true
      return {
        next: async (): Promise<IteratorResult<Uint8Array>> => {
          if (damage !== undefined) throw damage
          if (ended) {
            if (++readsPastEnd > READS_PAST_END) {
              damage = new ArchiveDamage(`the archive ends in the middle of a record (truncated at byte ${size})`)
              throw damage
            }
            return { done: true, value: undefined }
          }
          let result: IteratorResult<Uint8Array>
          try {
            result = (await chunks.next()) as IteratorResult<Uint8Array>
          } catch (error) {
            const at = gunzip === undefined ? size : Math.min(size, gunzip.bytesWritten)
            const cause = error instanceof Error ? error.message : String(error)
            damage = new ArchiveDamage(
              /unexpected end/i.test(cause)
                ? `the archive is truncated at byte ${size} (gzip: ${cause})`
                : `the archive is corrupt at byte ${at} (gzip: ${cause})`
            )
            throw damage
          }
          if (result.done) {
            ended = true
            return result
          }
          if (first) {
            first = false
            const head = new TextDecoder("latin1").decode(result.value.subarray(0, 16)).trimStart()
            if (!head.startsWith("WARC/") && !(head.length < 5 && "WARC/".startsWith(head))) {
              damage = new ArchiveDamage(
                `not a WARC archive: it does not start with a WARC/1.x record header`
              )
              throw damage
            }
          }
          offset += result.value.byteLength
          return result
        },
        return: async (): Promise<IteratorResult<Uint8Array>> => {
          await chunks.return?.(undefined)
          return { done: true, value: undefined }
        }
      }
    }
  }
  return iterable
}

/** Bytes of a record's payload warcio did not deliver (a record cut short), via its LimitReader. */
const missingBytes = (record: WARCRecord): number => {
  const limit = (record as unknown as { _reader?: { limit?: unknown } })._reader?.limit
  return typeof limit === "number" && limit > 0 ? limit : 0
}

export const warcSource = (path: string, options: WarcOptions = {}): DocumentSource => {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_FILE_BYTES
  const pages = asyncItems(path, async function*(): AsyncGenerator<SourceItem | PageItem> {
    const size = statSync(path).size
    if (size === 0) {
      yield failed(path, "the archive is empty (0 bytes)")
      return
    }
    const bytes = archiveBytes(path, size)
    const parser = new WARCParser(bytes)
    let index = 0
    let responses = 0
    let last: WARCRecord | undefined
    try {
      for await (const record of parser) {
        index++
        last = record
        const protocol = record.warcHeaders.protocol ?? ""
        if (!protocol.startsWith("WARC/")) {
          throw new ArchiveDamage(
            bytes.ended() && "WARC/1.0".startsWith(protocol.slice(0, 8))
              ? `the archive ends in the middle of a record header (truncated at byte ${size})`
              : `unreadable data where record ${index} should start (near byte ${bytes.offset()} of the WARC data)`
          )
        }
        if (record.warcHeaders.headers.get("content-length") === null || record.warcHeaders.headers.get("content-length") === undefined) {
          // Content-Length is mandatory (WARC 1.1, 5.3): without it the header was cut or the record is not WARC.
          throw new ArchiveDamage(
            bytes.ended()
              ? `the archive ends in the middle of a record header (truncated at byte ${size})`
              : `record ${index} has no Content-Length header (near byte ${bytes.offset()} of the WARC data)`
          )
        }
        if (record.warcType !== "response") continue
        responses++
        const url = record.warcTargetURI ?? ""
        const origin = url || `record ${index}`
        try {
          const reason = notHtmlPage(record)
          if (reason !== undefined) {
            yield skipped(origin, reason)
            continue
          }
          const generated = options.keepGenerated === true ? undefined : generatedPageKind(url)
          if (generated !== undefined) {
            yield skipped(origin, generatedPageReason(generated))
            continue
          }
          if (record.warcContentLength > maxBytes) {
            yield skipped(origin, `larger than ${formatBytes(maxBytes)}`)
            continue
          }
          const payload = await record.readFully(true)
          if (bytes.ended() && missingBytes(record) > 0) {
            throw new ArchiveDamage(`the archive ends in the middle of a record (truncated at byte ${size}, ${missingBytes(record)} bytes of ${origin} missing)`)
          }
          const contentType = record.httpHeaders?.headers.get("content-type") ?? undefined
          const binary = notHtml(payload, contentType)
          if (binary !== undefined) {
            yield failed(origin, binary)
            continue
          }
          const lastModified = record.httpHeaders?.headers.get("last-modified")
          yield { _tag: "Page", origin, page: { bytes: payload, url, contentType, fallbackDates: [lastModified, record.warcDate] } }
        } catch (error) {
          if (error instanceof ArchiveDamage) throw error
          yield failed(origin, error)
        }
      }
      // The last record was skipped to its end when the parser looked for another: bytes it lacked mean a cut.
      if (last !== undefined && bytes.ended() && missingBytes(last) > 0) {
        throw new ArchiveDamage(`the archive ends in the middle of a record (truncated at byte ${size}, ${missingBytes(last)} bytes of record ${index} missing)`)
      }
      if (responses === 0) yield failed(path, index === 0 ? "no WARC records in the archive" : "no response records (pages) in the archive")
    } catch (error) {
      // A truncated or corrupt file ends the file, not the run; what was read is kept.
      yield failed(`${path} after record ${index}`, error)
    }
  })
  return { describe: `${path} (WARC)`, items: extractedInPlace(pages), pages }
}
