/**
 * A page handed over before extraction (its bytes, where it lives, dates to
 * fall back on), and the one function that turns it into an item. Extraction
 * (parse, main content, metadata) is the CPU-heavy part of indexing, so the
 * read loop may run it elsewhere: a PageExtractor (inline by default; worker
 * threads in the Node adapter, adapters/node/extractPool.ts). Every extractor
 * calls extractRawPage, so an item comes out the same wherever it ran.
 *
 * No runtime import of effect here: worker threads load this module.
 */
import type { Effect } from "effect"
import type { AnalyzedPage, PageToAnalyze } from "../index/PageLanguages.ts"
import { withFallbackDate } from "./FallbackDate.ts"
import { decodeHtml } from "./HtmlBytes.ts"
import { htmlToDocument } from "./HtmlDocument.ts"
import { documentItem, failed, type SourceItem } from "./SourceItem.ts"

export interface RawPage {
  /** The HTML as read (decoded by its BOM, Content-Type or meta charset). */
  readonly bytes: Uint8Array
  /** Where the page is published: the base of its links and its link when it names no canonical one. */
  readonly url: string
  readonly contentType?: string | undefined
  /** Dates for a page that states none, in order (core/ingest/FallbackDate.ts). */
  readonly fallbackDates?: ReadonlyArray<string | null | undefined> | undefined
}

/** The item for one page: its document, "no main text", or the error that stopped it. Never throws. */
export const extractRawPage = (origin: string, page: RawPage): SourceItem => {
  try {
    const document = htmlToDocument(decodeHtml(page.bytes, page.contentType), page.url)
    return documentItem(origin, page.fallbackDates === undefined ? document : withFallbackDate(document, page.fallbackDates))
  } catch (error) {
    return failed(origin, error)
  }
}

/**
 * Runs extractRawPage somewhere. The read loop keeps up to `concurrency` pages
 * in flight and takes the answers back in the order the pages came, so the
 * build sees exactly the sequence a one-thread run sees.
 */
export interface PageExtractor {
  readonly concurrency: number
  readonly extract: (origin: string, page: RawPage) => Effect.Effect<SourceItem>
  /**
   * Decides one page's language and records the tokens of its field texts in that language's
   * analysis (core/index/PageLanguages.ts) on the same threads, for the build, which then replays
   * them in page order: the same snapshot as analysing them in the build. Absent: the build
   * analyses its pages itself.
   */
  readonly analyze?: ((page: PageToAnalyze) => Effect.Effect<AnalyzedPage>) | undefined
}
