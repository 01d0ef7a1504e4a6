/**
 * Checks one incoming document (from ingestion or a JSONL line, so possibly anything) and
 * brings it to the stored form: canonical URL, collapsed title, ISO date or null. A problem
 * is reported naming the field and the rule; a bad image drops that image, not the page.
 */
import type { ImageRecord, IndexDocument } from "./Document.ts"
import { normalizeUrl } from "./UrlNormalizer.ts"

export interface ValidDocument {
  /** The link shown in results. */
  readonly url: string
  /** Identity: documents with equal keys are one page (the latest wins). */
  readonly key: string
  readonly title: string
  readonly text: string
  readonly date: string | null
  readonly lang: string
  readonly images: ReadonlyArray<ValidImage>
}

export interface ValidImage {
  readonly url: string
  /** Identity of the image: one result per key. */
  readonly key: string
  readonly title: string
  readonly alt: string
  readonly caption: string
  readonly heading: string
  readonly width: number
  readonly height: number
}

export type Validation =
  | { readonly _tag: "Valid"; readonly document: ValidDocument; readonly problems: ReadonlyArray<string> }
  | { readonly _tag: "Invalid"; readonly url: string; readonly reason: string }

const isoDate = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/

const describeUrl = (value: unknown): string => (typeof value === "string" ? value : "")

const optionalString = (value: unknown): string | undefined =>
  value === undefined || value === null ? "" : typeof value === "string" ? value : undefined

const oneLine = (s: string) => s.replace(/\s+/g, " ").trim()

const validImage = (raw: unknown, at: string): ValidImage | string => {
  if (typeof raw !== "object" || raw === null) return `${at}: must be an object`
  const image = raw as Partial<Record<keyof ImageRecord, unknown>>
  if (typeof image.url !== "string") return `${at}.url: must be a string`
  const normalized = normalizeUrl(image.url)
  if (normalized === undefined) return `${at}.url: must be an absolute http(s) URL`
  const texts: Record<string, string> = {}
  for (const key of ["title", "alt", "caption", "heading"] as const) {
    const value = optionalString(image[key])
    if (value === undefined) return `${at}.${key}: must be a string when present`
    texts[key] = oneLine(value)
  }
  const size = (key: "width" | "height"): number | string => {
    const value = image[key]
    if (value === undefined || value === null) return -1
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 1_000_000) {
      return `${at}.${key}: must be a whole number of pixels`
    }
    return value
  }
  const width = size("width")
  const height = size("height")
  if (typeof width === "string") return width
  if (typeof height === "string") return height
  return {
    url: normalized.link,
    key: normalized.key,
    title: texts.title!,
    alt: texts.alt!,
    caption: texts.caption!,
    heading: texts.heading!,
    width,
    height
  }
}

export const validateDocument = (raw: unknown): Validation => {
  if (typeof raw !== "object" || raw === null) return { _tag: "Invalid", url: "", reason: "document: must be an object" }
  const doc = raw as Partial<Record<keyof IndexDocument, unknown>>
  const shownUrl = describeUrl(doc.url)
  if (typeof doc.url !== "string") return { _tag: "Invalid", url: shownUrl, reason: "url: must be a string" }
  const normalized = normalizeUrl(doc.url)
  if (normalized === undefined) return { _tag: "Invalid", url: shownUrl, reason: "url: must be an absolute http(s) URL" }
  const url = normalized.link
  if (typeof doc.title !== "string") return { _tag: "Invalid", url, reason: "title: must be a string" }
  if (typeof doc.text !== "string") return { _tag: "Invalid", url, reason: "text: must be a string" }
  const title = oneLine(doc.title)
  const text = doc.text.trim()
  if (title.length === 0 && text.length === 0) {
    return { _tag: "Invalid", url, reason: "title, text: at least one must be non-empty" }
  }
  let date: string | null = null
  if (doc.date !== undefined && doc.date !== null) {
    if (typeof doc.date !== "string" || !isoDate.test(doc.date.trim()) || Number.isNaN(Date.parse(doc.date.trim()))) {
      return { _tag: "Invalid", url, reason: "date: must be an ISO 8601 date (YYYY-MM-DD or a full timestamp) or null" }
    }
    date = doc.date.trim()
  }
  const lang = optionalString(doc.lang)
  if (lang === undefined) return { _tag: "Invalid", url, reason: "lang: must be a string when present" }
  const images: Array<ValidImage> = []
  const problems: Array<string> = []
  if (doc.images !== undefined && doc.images !== null) {
    if (!Array.isArray(doc.images)) return { _tag: "Invalid", url, reason: "images: must be an array when present" }
    doc.images.forEach((image, i) => {
      const checked = validImage(image, `images[${i}]`)
      if (typeof checked === "string") problems.push(checked)
      else images.push(checked)
    })
  }
  return { _tag: "Valid", document: { url, key: normalized.key, title, text, date, lang: lang.trim(), images }, problems }
}
