/**
 * A fetched body as a reader wants it: an HTML page's main content as Markdown (or plain text,
 * or the cleaned main-content HTML) with its title and date, through the same extractor the
 * index uses (boilerplate removal, declared containers, Readability); a PDF's text; plain text,
 * Markdown, CSV, XML and JSON passed through as they are. Text is decoded in the charset the
 * response or the page declares (HtmlBytes: BOM, Content-Type, `<meta charset>`).
 */
import { decodeHtml } from "./HtmlBytes.ts"
import { extractPageWithContent } from "./HtmlDocument.ts"
import { contentContainer, markdownOf } from "./Markdown.ts"
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

const htmlPage = (bytes: Uint8Array, contentType: string, url: string, format: ReadableFormat): ReadablePage => {
  const html = decodeHtml(bytes, contentType)
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

/** Reads a body of a kind `mediaKindOf` or `sniffKind` accepted; a broken PDF rejects with pdf.js's reason. */
export const readablePage = async (
  bytes: Uint8Array,
  contentType: string,
  url: string,
  format: ReadableFormat
): Promise<ReadablePage | undefined> => {
  const declared = mediaKindOf(contentType)
  const kind = declared === "unknown" ? sniffKind(bytes) : declared
  switch (kind) {
    case undefined:
      return undefined
    case "html":
      return htmlPage(bytes, contentType, url, format)
    case "pdf": {
      const pdf = await pdfText(bytes)
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
