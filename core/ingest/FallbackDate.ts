/**
 * The date a page gets when it states none itself: what the place it
 * came from knows about it, in the caller's order - the HTTP Last-Modified of
 * the answer, a sitemap's <lastmod>, an archive's WARC-Date. These are
 * "changed" or "seen" stamps, not publish dates, so they never override a date
 * the page states (PublishDate); they only keep dated searches (freshness) from
 * dropping every undated page of a crawl or archive. File modification times
 * are not used: a checkout, copy or docs build stamps every file with the same
 * "now", which would make a whole old site look new.
 */
import type { IndexDocument } from "../index/Document.ts"
import { toIsoDate } from "../index/IsoDate.ts"

/** `document` with the first readable fallback as its date when it has none; unchanged otherwise. */
export const withFallbackDate = (
  document: IndexDocument,
  fallbacks: ReadonlyArray<string | null | undefined>
): IndexDocument => {
  if (document.date !== undefined && document.date !== null && document.date !== "") return document
  for (const raw of fallbacks) {
    if (raw === undefined || raw === null) continue
    const date = toIsoDate(raw)
    if (date !== null) return { ...document, date }
  }
  return document
}
