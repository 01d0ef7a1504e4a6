/**
 * The text of a PDF, page after page, with its title and dates from the document info.
 * unpdf bundles Mozilla's pdf.js built for serverless runtimes: pure JavaScript, no native
 * canvas, the same on Node as on Deno; a broken or encrypted PDF fails with the reason.
 *
 * A small file can hold a great deal of work: a stream that inflates a thousandfold, or
 * thousands of pages. Both are measured before pdf.js reads the document (the Flate streams
 * inflated and counted, never kept; the page count from the page tree) and a PDF beyond a
 * limit is refused with PageLimitError.
 */
import { extractText, getDocumentProxy, getMeta } from "unpdf"
import { PageLimitError } from "./PageLimits.ts"

export interface PdfContent {
  readonly title: string
  readonly text: string
  readonly pages: number
  /** ISO 8601 date from ModDate or CreationDate, when the info dictionary has one. */
  readonly date: string | null
}

export interface PdfLimits {
  /** Of all Flate streams together, inflated. */
  readonly maxDecodedBytes: number
  readonly maxPages: number
}

/** A PDF date ("D:20240131120000+01'00'") as an ISO date, or null. */
export const pdfDate = (value: unknown): string | null => {
  if (typeof value !== "string") return null
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?/.exec(value.trim())
  if (m === null) return null
  const [, year, month = "01", day = "01"] = m
  const iso = `${year}-${month}-${day}`
  return Number.isNaN(Date.parse(iso)) ? null : iso
}

const STREAM = /stream\r?\n/g
const ENDSTREAM = "endstream"
// How far back from `stream` its dictionary is looked for.
const DICTIONARY_WINDOW = 4096

/** Bytes a zlib stream inflates to, counting no further than `budget` (then budget + 1); a corrupt stream counts what came out. */
const inflatedSize = async (data: Uint8Array, budget: number): Promise<number> => {
  const reader = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("deflate")).getReader()
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return total
      total += value.byteLength
      if (total > budget) return total
    }
  } catch {
    return total
  } finally {
    void reader.cancel().catch(() => undefined)
  }
}

/**
 * The size the PDF's Flate streams inflate to, together, counted up to `limit` (beyond it, the
 * count so far: more than the limit). Streams are found by their keywords, as pdf.js does when
 * a length is wrong; other filters (rare) are left to the job's deadline and memory bound.
 */
export const pdfDecodedSize = async (bytes: Uint8Array, limit: number): Promise<number> => {
  // Latin-1 maps each byte to one char: positions in the text are positions in the bytes.
  const text = new TextDecoder("latin1").decode(bytes)
  let total = 0
  STREAM.lastIndex = 0
  for (let match = STREAM.exec(text); match !== null; match = STREAM.exec(text)) {
    if (match.index > 0 && text.charCodeAt(match.index - 1) === 0x64 /* d: endstream */) continue
    const start = match.index + match[0].length
    const end = text.indexOf(ENDSTREAM, start)
    if (end === -1) break
    const from = Math.max(0, match.index - DICTIONARY_WINDOW)
    const dictionary = text.slice(Math.max(from, text.lastIndexOf("obj", match.index)), match.index)
    STREAM.lastIndex = end + ENDSTREAM.length
    if (!dictionary.includes("/FlateDecode")) continue
    total += await inflatedSize(bytes.subarray(start, end), limit - total)
    if (total > limit) return total
  }
  return total
}

export const pdfText = async (bytes: Uint8Array, limits?: PdfLimits): Promise<PdfContent> => {
  if (limits !== undefined) {
    const decoded = await pdfDecodedSize(bytes, limits.maxDecodedBytes)
    if (decoded > limits.maxDecodedBytes) throw new PageLimitError({ limit: "maxPdfDecodedBytes", max: limits.maxDecodedBytes })
  }
  // pdf.js takes ownership of (and detaches) the buffer it is given: hand it a copy.
  const pdf = await getDocumentProxy(new Uint8Array(bytes))
  try {
    if (limits !== undefined && pdf.numPages > limits.maxPages) {
      throw new PageLimitError({ limit: "maxPdfPages", max: limits.maxPages, found: pdf.numPages })
    }
    const meta = await getMeta(pdf).catch(() => ({ info: {} as Record<string, unknown> }))
    const { text, totalPages } = await extractText(pdf, { mergePages: false })
    const info = meta.info as Record<string, unknown>
    const title = typeof info.Title === "string" ? info.Title.trim() : ""
    return {
      title,
      text: text.map((page) => page.trim()).filter((page) => page !== "").join("\n\n"),
      pages: totalPages,
      date: pdfDate(info.ModDate) ?? pdfDate(info.CreationDate)
    }
  } finally {
    await pdf.loadingTask.destroy()
  }
}
