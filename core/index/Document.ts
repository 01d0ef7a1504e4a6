/**
 * What the engine indexes: one page with its text, optional date and images.
 * Ingestion (core/ingest) produces these; JSONL files carry them one per line.
 */

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
