/**
 * Bounds on the work one fetched page may cause besides its size in bytes: how deep and how
 * many its elements (HtmlShape.ts), how much its PDF streams inflate to and how many pages it
 * has (PdfText.ts). A page beyond one is refused with PageLimitError, before the costly part.
 *
 * No runtime import of effect here: worker threads load this module.
 */

export interface PageLimits {
  readonly maxHtmlDepth: number
  readonly maxHtmlElements: number
  readonly maxPdfDecodedBytes: number
  readonly maxPdfPages: number
}

/** Far above real pages (the deepest of thousands of documentation pages nests about 20, the largest has about 7,000 elements). */
export const DEFAULT_PAGE_LIMITS: PageLimits = {
  // As deep as browsers' HTML parsers build a tree.
  maxHtmlDepth: 512,
  maxHtmlElements: 100_000,
  maxPdfDecodedBytes: 64 * 1024 * 1024,
  maxPdfPages: 1000
}

export type PageLimit = keyof PageLimits

/** A page crosses `limit` (whose value is `max`); `found` is the page's own figure when it is known. */
export class PageLimitError extends Error {
  readonly limit: PageLimit
  readonly max: number
  readonly found: number | undefined
  constructor(options: { readonly limit: PageLimit; readonly max: number; readonly found?: number }) {
    super(`the page crosses ${options.limit} (${options.max})`)
    this.name = "PageLimitError"
    this.limit = options.limit
    this.max = options.max
    this.found = options.found
  }
}
