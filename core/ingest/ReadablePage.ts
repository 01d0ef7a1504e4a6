/**
 * A fetched body as a reader wants it: an HTML page's main content as Markdown (or plain text,
 * or the cleaned main-content HTML) with its title and date, through the same extractor the
 * index uses (boilerplate removal, declared containers, Readability); a PDF's text; plain text,
 * Markdown, CSV, XML and JSON passed through as they are. Text is decoded in the charset the
 * response or the page declares (HtmlBytes: BOM, Content-Type, `<meta charset>`).
 *
 * Reading is the CPU-heavy half of webFetch, so it is a job (`readPageJob`) that the job runner
 * runs off the answering thread; a page beyond the PageLimits is refused before the costly part.
 */
import { defineJob } from "../jobs/Job.ts"
import { decodeHtml } from "./HtmlBytes.ts"
import { extractPageWithContent } from "./HtmlDocument.ts"
import { htmlShape } from "./HtmlShape.ts"
import { contentContainer, markdownOf } from "./Markdown.ts"
import { DEFAULT_PAGE_LIMITS, type PageLimit, PageLimitError, type PageLimits } from "./PageLimits.ts"
import { pdfText } from "./PdfText.ts"

export type ReadableFormat = "markdown" | "text" | "html"

/** How a body is read: extracted (html), passed through (text), or its text pulled out (pdf). */
export type MediaKind = "html" | "text" | "pdf"

export interface ReadablePage {
  readonly title: string
  readonly content: string
  /** The plain main text, whatever the format (the same string as content for format text). */
  readonly text: string
  readonly date: string | null
  /** The media type the body was read as (text/html, application/pdf, ...). */
  readonly contentType: string
}

/** The media type of a Content-Type header, lower case, without parameters. */
export const mediaTypeOf = (contentType: string): string => contentType.split(";")[0]!.trim().toLowerCase()

const TEXT_TYPES = new Set([
  "text/plain", "text/markdown", "text/x-markdown", "text/csv", "text/xml", "application/xml", "application/json",
  "application/x-ndjson", "application/javascript", "text/javascript", "text/css", "application/yaml", "text/yaml"
])

/**
 * How a declared type is read: undefined when it cannot be (images, video, archives).
 * "unknown" when the header says nothing useful (missing, octet-stream): the body decides.
 */
export const mediaKindOf = (contentType: string): MediaKind | "unknown" | undefined => {
  const type = mediaTypeOf(contentType)
  if (type === "" || type === "application/octet-stream" || type === "binary/octet-stream") return "unknown"
  if (type === "text/html" || type === "application/xhtml+xml") return "html"
  if (type === "application/pdf" || type === "application/x-pdf") return "pdf"
  if (TEXT_TYPES.has(type) || type.endsWith("+json") || type.endsWith("+xml")) return "text"
  return undefined
}

/** The kind of a body whose header did not say: a PDF signature, markup, or text without NUL bytes. */
export const sniffKind = (bytes: Uint8Array): MediaKind | undefined => {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024))
  if (head.startsWith("%PDF-")) return "pdf"
  if (head.includes("\u0000")) return undefined
  if (/^\s*(?:<!doctype html|<html|<head|<body|<!--)/i.test(head.replace(/^\uFEFF|^\u00EF\u00BB\u00BF/, ""))) return "html"
  return "text"
}

/** The last path segment of `url`, readable ("sql-createtable"), or its host. */
const titleFromUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    const last = parsed.pathname.split("/").filter((s) => s !== "").pop()
    if (last === undefined) return parsed.hostname
    try {
      return decodeURIComponent(last)
    } catch {
      return last
    }
  } catch {
    return url
  }
}

const htmlPage = (bytes: Uint8Array, contentType: string, url: string, format: ReadableFormat, limits: PageLimits): ReadablePage => {
  const html = decodeHtml(bytes, contentType)
  const shape = htmlShape(html, { maxDepth: limits.maxHtmlDepth, maxElements: limits.maxHtmlElements })
  if (shape.over === "depth") throw new PageLimitError({ limit: "maxHtmlDepth", max: limits.maxHtmlDepth })
  if (shape.over === "elements") throw new PageLimitError({ limit: "maxHtmlElements", max: limits.maxHtmlElements })
  // Title, date and plain text exactly as the index would store the page.
  const { page: extracted, dom, content } = extractPageWithContent(html, url)
  const page = { title: extracted.document.title, date: extracted.document.date ?? null, contentType: "text/html" }
  const text = extracted.document.text
  if (format === "text") return { ...page, content: text, text }
  // Markdown and HTML render the same content elements the text came from (one parse).
  if (content === undefined) return { ...page, content: "", text }
  const container = contentContainer(dom, content.roots, url)
  return { ...page, content: format === "html" ? container.innerHTML.trim() : markdownOf(container), text }
}

/**
 * Reads a body of a kind `mediaKindOf` or `sniffKind` accepted; a broken PDF rejects with
 * pdf.js's reason, a page beyond a limit with PageLimitError.
 */
export const readablePage = async (
  bytes: Uint8Array,
  contentType: string,
  url: string,
  format: ReadableFormat,
  limits: PageLimits = DEFAULT_PAGE_LIMITS
): Promise<ReadablePage | undefined> => {
  const declared = mediaKindOf(contentType)
  const kind = declared === "unknown" ? sniffKind(bytes) : declared
  switch (kind) {
    case undefined:
      return undefined
    case "html":
      return htmlPage(bytes, contentType, url, format, limits)
    case "pdf": {
      const pdf = await pdfText(bytes, { maxDecodedBytes: limits.maxPdfDecodedBytes, maxPages: limits.maxPdfPages })
      return { title: pdf.title || titleFromUrl(url), content: pdf.text, text: pdf.text, date: pdf.date, contentType: "application/pdf" }
    }
    case "text": {
      const text = decodeHtml(bytes, contentType)
      return {
        title: titleFromUrl(url),
        content: text,
        text,
        date: null,
        contentType: declared === "unknown" ? "text/plain" : mediaTypeOf(contentType)
      }
    }
  }
}

export interface ReadRequest {
  readonly bytes: Uint8Array
  readonly contentType: string
  readonly url: string
  readonly format: ReadableFormat
  readonly limits: PageLimits
}

/** A page read, a body that is not a document, or a page beyond a limit (`found`: its own figure, when known). */
export type ReadOutcome =
  | { readonly _tag: "Read"; readonly page: ReadablePage }
  | { readonly _tag: "NotReadable" }
  | { readonly _tag: "Refused"; readonly limit: PageLimit; readonly max: number; readonly found: number | undefined }

/** readablePage as a job: its outcomes as data, since an error's class does not cross threads. */
export const readPageJob = defineJob<ReadRequest, ReadOutcome>(import.meta.url, "readPage", async (request) => {
  try {
    const page = await readablePage(request.bytes, request.contentType, request.url, request.format, request.limits)
    return page === undefined ? { _tag: "NotReadable" } : { _tag: "Read", page }
  } catch (error) {
    if (error instanceof PageLimitError) return { _tag: "Refused", limit: error.limit, max: error.max, found: error.found }
    throw error
  }
})
