/**
 * What the engine indexes: one page with its text, optional date and images.
 * Ingestion (core/ingest) produces these; JSONL files carry them one per line.
 */
import { Schema } from "effect"
import { ruledNumber, ruledString } from "../schema/Rules.ts"
import { toIsoDate } from "./IsoDate.ts"
import { normalizeLanguageTag } from "./LanguageTag.ts"
import { normalizeUrl } from "./UrlNormalizer.ts"

/** An image found on a page, with the text around it that makes it findable. */
export interface ImageRecord {
  /** Absolute image URL. */
  readonly url: string
  readonly alt?: string | undefined
  readonly title?: string | undefined
  readonly caption?: string | undefined
  /** Text of the nearest heading above the image. */
  readonly heading?: string | undefined
  readonly width?: number | undefined
  readonly height?: number | undefined
}

export interface IndexDocument {
  /** Canonical absolute URL of the page; becomes `link` and the image `refUrl`. */
  readonly url: string
  readonly title: string
  /** Main text, boilerplate removed, paragraphs separated by blank lines. */
  readonly text: string
  /** ISO 8601 publish date or null/undefined when unknown. */
  readonly date?: string | null | undefined
  /** BCP 47 language tag when known (e.g. "en"). */
  readonly lang?: string | undefined
  readonly images?: ReadonlyArray<ImageRecord> | undefined
}

const STRING = "must be a string"
const STRING_WHEN_PRESENT = "must be a string when present"
const PIXELS = "must be a whole number of pixels"
export const DATE_RULE = "must be an ISO 8601 date (YYYY-MM-DD or a full timestamp) or null"
const LANGUAGE_RULE = "must be a BCP 47 language tag such as en or pt-BR"

const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/

/** The stored form of a date: ISO 8601 as given, or a looser spelling ("March 5, 2021") in ISO; null when it is no date. */
export const storedDate = (raw: string): string | null => {
  const text = raw.trim()
  return ISO_8601.test(text) && !Number.isNaN(Date.parse(text)) ? text : toIsoDate(text)
}

/** The stored form of a language tag ("en_gb" -> "en-GB"), "" when there is none. */
export const storedLanguage = (raw: string | null | undefined): string => normalizeLanguageTag(raw) ?? ""

/** Absent, undefined, null or a value of `schema`; `message` is the rule when it is none of them. */
const optionalOrNull = <S extends Schema.Top>(schema: S, message: string) =>
  Schema.optionalKey(Schema.UndefinedOr(Schema.NullOr(schema)).annotate({ message }))

const required = <S extends Schema.Top>(schema: S) => schema.pipe(Schema.annotateKey({ messageMissingKey: STRING }))

const HttpUrl = ruledString(STRING).check(
  Schema.makeFilter((s: string) => normalizeUrl(s) !== undefined || "must be an absolute http(s) URL")
)
const OptionalText = optionalOrNull(ruledString(STRING_WHEN_PRESENT), STRING_WHEN_PRESENT)
const Pixels = optionalOrNull(ruledNumber(PIXELS, { integer: true, min: 0, max: 1_000_000 }), PIXELS)

/** One image of a document; checked image by image, so a bad image is dropped and its page kept. */
export const ImageInput = Schema.Struct({
  url: required(HttpUrl),
  title: OptionalText,
  alt: OptionalText,
  caption: OptionalText,
  heading: OptionalText,
  width: Pixels,
  height: Pixels
}).annotate({ message: "must be an object" })

/**
 * An indexed document as it arrives from anywhere: a JSONL line, the fixture
 * backend's documents, ingestion. The one Schema for it: every reader decodes
 * with it (through core/schema), and the IndexBuilder checks with it before
 * bringing a document to its stored form (DocumentValidation.ts).
 */
export const DocumentInput = Schema.Struct({
  url: required(HttpUrl),
  title: required(ruledString(STRING)),
  text: required(ruledString(STRING)),
  date: optionalOrNull(ruledString(DATE_RULE).check(Schema.makeFilter((s: string) => storedDate(s) !== null || DATE_RULE)), DATE_RULE),
  lang: optionalOrNull(
    ruledString(STRING_WHEN_PRESENT).check(
      Schema.makeFilter((s: string) => s.trim() === "" || normalizeLanguageTag(s) !== undefined || LANGUAGE_RULE)
    ),
    STRING_WHEN_PRESENT
  ),
  // Images are checked one by one (ImageInput): here only that they come as a list.
  images: optionalOrNull(Schema.Array(Schema.Unknown), "must be an array when present")
}).annotate({ message: "must be an object" })
