/**
 * A page of the index found by its address, with its stored text: what grounded chat reads
 * in place of fetching a page the index already holds. Pages are numbered in the order of
 * their URL keys (IndexBuilder sorts them so), so the lookup is a binary search that reads a
 * few stored URLs, never the whole list.
 */
import { PageField, type SearchIndex } from "./SearchIndex.ts"
import { normalizeUrl } from "./UrlNormalizer.ts"

export interface IndexedPage {
  /** The address as the index stores it. */
  readonly url: string
  readonly title: string
  /** The page's text from its start, at most the characters asked for. */
  readonly text: string
  readonly date: string | null
}

/** The page whose URL key is `url`'s, or undefined when the index has none (or `url` is no http(s) URL). */
export const pageByUrl = (index: SearchIndex, url: string, maxChars: number): IndexedPage | undefined => {
  const key = normalizeUrl(url)?.key
  const doc = key === undefined ? -1 : pageIdOfKey(index, key)
  if (doc < 0) return undefined
  const pages = index.parts.pages
  const stored = pages.get(doc, PageField.Url)
  // A character is at most 3 UTF-8 bytes: this many bytes hold maxChars characters.
  const text = pages.getPart(doc, PageField.Text, 0, Math.max(0, maxChars) * 3).slice(0, Math.max(0, maxChars))
  const date = pages.get(doc, PageField.Date)
  return { url: stored, title: pages.get(doc, PageField.Title), text, date: date.length > 0 ? date : null }
}

/** The id of the page whose URL key (UrlNormalizer) is `key`, or -1. */
export const pageIdOfKey = (index: SearchIndex, key: string): number => {
  const pages = index.parts.pages
  let low = 0
  let high = index.documentCount - 1
  while (low <= high) {
    const mid = (low + high) >>> 1
    const stored = pages.get(mid, PageField.Url)
    const at = normalizeUrl(stored)?.key ?? stored
    if (at === key) return mid
    if (at < key) low = mid + 1
    else high = mid - 1
  }
  return -1
}
