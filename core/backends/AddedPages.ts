/**
 * The pages added to the running index since its snapshot (webFetch's addToIndex), within their
 * bounds: how many pages one key may add a minute, and how many pages and bytes of text may wait
 * in all until a `periscope index` run takes them into the snapshot. A page added twice is one
 * page (its URL key, UrlNormalizer), the newer. Plain synchronous state: the engine
 * (EngineSearch.ts) builds the segment it searches from these pages.
 */
import { Context } from "effect"
import type { IndexDocument } from "../index/Document.ts"
import { validateDocument, type ValidDocument } from "../index/DocumentValidation.ts"
import { pageIdOfKey } from "../index/PageByUrl.ts"
import { PageField, type SearchIndex } from "../index/SearchIndex.ts"
import { formatBytes } from "../ingest/DocumentSource.ts"
import type { PageIndexing } from "../search/PageIndexing.ts"

export interface AddedPagesLimits {
  /** Pages one key may add in a minute. */
  readonly perKeyPerMinute: number
  /** Pages added since the snapshot, at most. */
  readonly maxPages: number
  /** Their titles and texts together, in UTF-8 bytes, at most. */
  readonly maxBytes: number
}

export const DEFAULT_ADDED_PAGES_LIMITS: AddedPagesLimits = { perKeyPerMinute: 30, maxPages: 1000, maxBytes: 16 * 1024 * 1024 }

/** The bounds of added pages (the config file's fetch section); the defaults unless provided. */
export const AddedPagesLimits = Context.Reference<AddedPagesLimits>("periscope/backends/AddedPagesLimits", {
  defaultValue: () => DEFAULT_ADDED_PAGES_LIMITS
})

interface AddedPage {
  readonly document: ValidDocument
  readonly bytes: number
}

/** UTF-8 bytes of a string, without encoding it. */
const utf8Length = (s: string): number => {
  let bytes = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    // Two bytes from U+0080, three from U+0800; a surrogate pair's four are two a half.
    if (c >= 0x80) bytes += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2
  }
  return bytes
}

const minuteMs = 60_000

/** An added page as the index stores it, for the journal and the segment's build. */
const asDocument = (d: ValidDocument): IndexDocument => ({ url: d.url, title: d.title, text: d.text, date: d.date })

export class AddedPages {
  readonly limits: AddedPagesLimits
  /** Bumped by every change: a segment built from version v holds exactly the pages of v. */
  version = 0
  private readonly pages = new Map<string, AddedPage>()
  private total = 0
  private readonly perKey = new Map<string, { readonly minute: number; count: number }>()

  constructor(limits: AddedPagesLimits) {
    this.limits = limits
  }

  get size(): number {
    return this.pages.size
  }

  /** UTF-8 bytes of the pages' titles and texts. */
  get bytes(): number {
    return this.total
  }

  /**
   * Adds `raw` for `caller` (a key's name) at `now` (ms), or says why not: the key's minute is
   * used up, the page has no text, or the bounds would be passed (a page replacing its own older
   * version counts only what it adds).
   */
  add(raw: IndexDocument, caller: string, now: number): PageIndexing {
    const checked = validateDocument(raw)
    if (checked._tag === "Invalid" || checked.document.text.length === 0) {
      return { added: false, reason: "empty", message: "the page has no text to index; it was fetched but not added to the index" }
    }
    const { perKeyPerMinute, maxPages, maxBytes } = this.limits
    const minute = Math.floor(now / minuteMs)
    const used = this.perKey.get(caller)
    if (used !== undefined && used.minute === minute && used.count >= perKeyPerMinute) {
      return {
        added: false,
        reason: "rate_limited",
        message: `this key added ${used.count} pages to the index this minute, the limit (fetch.addToIndexPerMinute); ` +
          `the page was fetched but not added; try again in ${Math.ceil(((minute + 1) * minuteMs - now) / 1000)} s`
      }
    }
    const document = checked.document
    const bytes = utf8Length(document.title) + utf8Length(document.text)
    if (bytes > maxBytes) {
      return {
        added: false,
        reason: "too_large",
        message: `the page's text is ${formatBytes(bytes)}, more than added pages may hold together (${formatBytes(maxBytes)}, fetch.addedBytesMax); it was fetched but not added`
      }
    }
    const previous = this.pages.get(document.key)
    const pages = this.pages.size + (previous === undefined ? 1 : 0)
    const total = this.total + bytes - (previous?.bytes ?? 0)
    if (pages > maxPages || total > maxBytes) {
      const which = pages > maxPages ? `${this.pages.size} pages, the limit (fetch.addedPagesMax)` : `${formatBytes(this.total)} of text; this page's ${formatBytes(bytes)} would pass the limit (${formatBytes(maxBytes)}, fetch.addedBytesMax)`
      return {
        added: false,
        reason: "full",
        message: `the pages added to the index since its snapshot hold ${which}; the page was fetched but not added. ` +
          "A `periscope index` run takes the added pages into the snapshot and makes room"
      }
    }
    if (used !== undefined && used.minute === minute) used.count++
    else this.perKey.set(caller, { minute, count: 1 })
    this.put(document, bytes)
    return { added: true }
  }

  /** A page kept from before (the journal): it was within the bounds when it was added. */
  restore(raw: IndexDocument): void {
    const checked = validateDocument(raw)
    if (checked._tag === "Invalid" || checked.document.text.length === 0) return
    this.put(checked.document, utf8Length(checked.document.title) + utf8Length(checked.document.text))
  }

  /** Drops the pages with these URL keys; how many there were. */
  remove(keys: Iterable<string>): number {
    let removed = 0
    for (const key of keys) {
      const page = this.pages.get(key)
      if (page === undefined) continue
      this.pages.delete(key)
      this.total -= page.bytes
      removed++
    }
    if (removed > 0) this.version++
    return removed
  }

  /** The pages, in the order they were added (a page added again counts as its last time). */
  documents(): Array<IndexDocument> {
    return Array.from(this.pages.values(), (p) => asDocument(p.document))
  }

  /**
   * The URL keys of the pages `snapshot` holds exactly as added (a `periscope index` run took
   * them in): a generator yielding between pages, as each comparison reads a stored text.
   */
  *takenInBy(snapshot: SearchIndex): Generator<void, Array<string>> {
    const taken: Array<string> = []
    const stored = snapshot.parts.pages
    let looked = 0
    for (const [key, { document }] of this.pages) {
      if (++looked % 16 === 0) yield
      const doc = pageIdOfKey(snapshot, key)
      if (doc < 0) continue
      const date = stored.get(doc, PageField.Date)
      if (stored.get(doc, PageField.Title) === document.title && (date.length > 0 ? date : null) === document.date && stored.get(doc, PageField.Text) === document.text) {
        taken.push(key)
      }
    }
    return taken
  }

  private put(document: ValidDocument, bytes: number): void {
    const previous = this.pages.get(document.key)
    if (previous !== undefined) {
      this.pages.delete(document.key)
      this.total -= previous.bytes
    }
    this.pages.set(document.key, { document, bytes })
    this.total += bytes
    this.version++
  }
}
