/**
 * Checks one incoming document (from ingestion or a JSONL line, so possibly anything) with
 * the document Schema (Document.ts) and brings it to the stored form: canonical URL,
 * collapsed title, ISO date or null, normalised language tag. A problem is reported naming
 * the field and the rule; a bad image drops that image, not the page.
 */
import { Result } from "effect"
import { decoderFor } from "../schema/Decode.ts"
import { DocumentInput, ImageInput, storedDate, storedLanguage } from "./Document.ts"
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

const decodeDocument = decoderFor(DocumentInput, "document")
const decodeImage = decoderFor(ImageInput, "image")

const shownUrl = (raw: unknown): string => {
  const url = typeof raw === "object" && raw !== null ? (raw as { url?: unknown }).url : undefined
  return typeof url === "string" ? normalizeUrl(url)?.link ?? url : ""
}

const oneLine = (s: string) => s.replace(/\s+/g, " ").trim()

const validImage = (raw: unknown, at: string): ValidImage | string => {
  const decoded = decodeImage(raw)
  if (Result.isFailure(decoded)) return `${decoded.failure.path === "" ? at : `${at}.${decoded.failure.path}`}: ${decoded.failure.rule}`
  const image = decoded.success
  const normalized = normalizeUrl(image.url)!
  return {
    url: normalized.link,
    key: normalized.key,
    title: oneLine(image.title ?? ""),
    alt: oneLine(image.alt ?? ""),
    caption: oneLine(image.caption ?? ""),
    heading: oneLine(image.heading ?? ""),
    width: image.width ?? -1,
    height: image.height ?? -1
  }
}

export const validateDocument = (raw: unknown): Validation => {
  const decoded = decodeDocument(raw)
  if (Result.isFailure(decoded)) {
    return { _tag: "Invalid", url: shownUrl(raw), reason: `${decoded.failure.path || "document"}: ${decoded.failure.rule}` }
  }
  const doc = decoded.success
  const normalized = normalizeUrl(doc.url)!
  const url = normalized.link
  const title = oneLine(doc.title)
  const text = doc.text.trim()
  if (title.length === 0 && text.length === 0) {
    return { _tag: "Invalid", url, reason: "title, text: at least one must be non-empty" }
  }
  const images: Array<ValidImage> = []
  const problems: Array<string> = []
  doc.images?.forEach((image, i) => {
    const checked = validImage(image, `images[${i}]`)
    if (typeof checked === "string") problems.push(checked)
    else images.push(checked)
  })
  const date = doc.date === undefined || doc.date === null ? null : storedDate(doc.date)
  return { _tag: "Valid", document: { url, key: normalized.key, title, text, date, lang: storedLanguage(doc.lang), images }, problems }
}
