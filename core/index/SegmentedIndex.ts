/**
 * A snapshot and a small segment of pages added since (webFetch's addToIndex), searched as one
 * index: what a build of both would answer, without rebuilding the snapshot.
 *
 * Both are scored with the statistics of the whole: BM25F's document count and each word's
 * document frequency are the snapshot's plus the segment's, so a page of the segment weighs a
 * word as it will once merged. The average field lengths are the snapshot's (the segment's own
 * when the snapshot is empty): the snapshot's pruning bounds are computed with them, and a
 * bounded segment moves them little; the next index run recomputes them. A segment page with a snapshot page's URL hides that page (one URL, one page, the
 * newer). Each side ranks its best by BM25F, the two lists are merged by score (ties in URL
 * order, as page ids are), the best 15 re-ranked for proximity as one index would, and each hit's
 * snippet comes from its own side. Near-duplicates are collapsed within a side only; a hidden
 * snapshot page still counts in the statistics until the next index run, as Lucene counts a
 * deleted document until its segment is merged.
 *
 * Linking a segment to a snapshot (`linkSegment`) looks every segment word up in the snapshot's
 * dictionary: a generator that yields between pieces of work, so that a server can answer
 * queries meanwhile.
 */
import type { ResolvedEngineOptions } from "./EngineOptions.ts"
import type { CollectionStatistics, InvertedIndex } from "./InvertedIndex.ts"
import { type IndexedPage, pageByUrl, pageIdOfKey } from "./PageByUrl.ts"
import { type QueryOptions, type QueryReading, readQuery } from "./QueryLanguage.ts"
import { type ParsedQuery, parseQuery } from "./QueryParser.ts"
import { proximityDepth, type RankedDocuments } from "./Ranker.ts"
import { type ImageHit, maxResults, PageField, type PageHit, type Plan, type SearchIndex, type WebSearchAnswer } from "./SearchIndex.ts"
import { normalizeUrl } from "./UrlNormalizer.ts"

/** What a server answers queries from: a snapshot's SearchIndex, or one with a segment beside it. */
export type ServingIndex = Pick<SearchIndex, "documentCount" | "imageCount" | "options" | "search" | "searchImages">

/** Dictionary look-ups or pages between two yields of linkSegment. */
const stepTerms = 2048
const stepPages = 16

/** One ranked document of either side. */
interface Entry {
  readonly side: 0 | 1
  readonly doc: number
  score: number
}

const clampLimit = (limit: number): number =>
  typeof limit === "number" && Number.isFinite(limit) ? Math.max(0, Math.min(maxResults, Math.floor(limit))) : 0

export class SegmentedIndex {
  /** The snapshot as it was loaded. */
  readonly base: SearchIndex
  /** The added pages' own index (built with the snapshot's options). */
  readonly segment: SearchIndex
  /** Pages served: the snapshot's not hidden, and the segment's. */
  readonly documentCount: number
  readonly imageCount: number
  /** The two, scored with the whole's statistics. */
  private readonly sides: readonly [SearchIndex, SearchIndex]
  /** Snapshot pages a segment page hides, by page id. */
  private readonly hiddenPages: Uint8Array
  private readonly hiddenCount: number

  constructor(base: SearchIndex, segment: SearchIndex, views: readonly [SearchIndex, SearchIndex], hiddenPages: Uint8Array, hiddenCount: number) {
    this.base = base
    this.segment = segment
    this.sides = views
    this.hiddenPages = hiddenPages
    this.hiddenCount = hiddenCount
    this.documentCount = base.documentCount - hiddenCount + segment.documentCount
    this.imageCount = base.imageCount + segment.imageCount
  }

  get options(): ResolvedEngineOptions {
    return this.base.options
  }

  /** Ranked pages with snippets, from both sides as one index ranks them. */
  search(query: string, limit: number, options?: QueryOptions): WebSearchAnswer {
    const keywords = typeof query === "string" ? query : ""
    const n = clampLimit(limit)
    if (n === 0) return { query: keywords, hits: [] }
    const { entries, plans, masks } = this.ranked(parseQuery(keywords), n, false, options)
    const hits = new Array<PageHit>(entries.length)
    for (const side of [0, 1] as const) {
      const at: Array<number> = []
      entries.forEach((e, i) => e.side === side && at.push(i))
      if (at.length === 0) continue
      const docs = Int32Array.from(at, (i) => entries[i]!.doc)
      // Masks of the words each page's text holds, when re-ranking found them for every page of this side.
      const known = at.every((i) => masks.has(key(entries[i]!)))
      const termsIn = known && masks.size > 0 ? { field: masks.field(side), masks: Uint32Array.from(at, (i) => masks.get(key(entries[i]!))!) } : undefined
      const sideHits = this.sides[side].pageHits(plans[side]!, docs, termsIn)
      at.forEach((i, j) => (hits[i] = sideHits[j]!))
    }
    return { query: keywords, hits }
  }

  /** Ranked images of both sides; one result per image URL. */
  searchImages(query: string, limit: number, options?: QueryOptions): ReadonlyArray<ImageHit> {
    const n = clampLimit(limit)
    if (n === 0) return []
    const { entries } = this.ranked(parseQuery(typeof query === "string" ? query : ""), n, true, options)
    const seen = new Set<string>()
    const hits: Array<ImageHit> = []
    for (const e of entries) {
      const hit = this.sides[e.side].imageHits(Int32Array.of(e.doc))[0]!
      if (seen.has(hit.url)) continue
      seen.add(hit.url)
      hits.push(hit)
    }
    return hits
  }

  /** Ranked pages' URLs and scores without snippets, as SearchIndex.rank gives them (tests, evaluation). */
  rank(query: string, limit: number, options?: QueryOptions): ReadonlyArray<{ readonly url: string; readonly score: number }> {
    const n = clampLimit(limit)
    if (n === 0) return []
    return this.ranked(parseQuery(typeof query === "string" ? query : ""), n, false, options).entries.map((e) => ({
      url: this.sides[e.side].parts.pages.get(e.doc, PageField.Url),
      score: e.score
    }))
  }

  /** The page stored under `url`'s key: the segment's version first. */
  page(url: string, maxChars: number): IndexedPage | undefined {
    const added = pageByUrl(this.segment, url, maxChars)
    if (added !== undefined) return added
    return pageByUrl(this.base, url, maxChars)
  }

  /** Whether a snapshot page is hidden by a segment page. */
  hides(doc: number): boolean {
    return this.hiddenPages[doc] === 1
  }

  /**
   * Both sides' best `n` by BM25F, merged; the best 15 re-ranked for proximity (each by its own
   * side, as their positions live there) and sorted again.
   */
  /** How both sides read a query: as one index of their pages would. */
  private reading(parsed: ParsedQuery, options: QueryOptions | undefined): QueryReading {
    const counts = new Map(this.base.analysisCounts)
    for (const [name, count] of this.segment.analysisCounts) counts.set(name, (counts.get(name) ?? 0) + count)
    return readQuery(parsed, options, counts, (language) => this.segment.languageAnalysis(language) ?? this.base.languageAnalysis(language))
  }

  private ranked(parsed: ParsedQuery, n: number, images: boolean, options: QueryOptions | undefined) {
    const collection = (index: SearchIndex): InvertedIndex => (images ? index.parts.images : index.parts.web)
    const known = (term: string) => collection(this.sides[0]).lookup(term) >= 0 || collection(this.sides[1]).lookup(term) >= 0
    const proximity = this.base.options.proximity
    const depth = proximity > 0 ? Math.max(n, proximityDepth) : n
    const reading = this.reading(parsed, options)
    const plans = this.sides.map((side) => side.planFor(parsed, images, known, reading)) as [Plan | undefined, Plan | undefined]
    const hidden = this.hiddenCount === 0
      ? undefined
      : images
      ? (image: number) => this.hiddenPages[this.base.parts.imagePage[image]!] === 1
      : (doc: number) => this.hiddenPages[doc] === 1
    const entries: Array<Entry> = []
    for (const side of [0, 1] as const) {
      const plan = plans[side]
      if (plan === undefined) continue
      let ranked = this.sides[side].rankPlanned(plan, depth, images)
      // Ranked again without the hidden pages only when one of them came up: the filter costs every query it is on.
      if (side === 0 && hidden !== undefined && ranked.docs.some((doc) => hidden(doc))) ranked = this.sides[0].rankPlanned(plan, depth, images, hidden)
      ranked.docs.forEach((doc, i) => entries.push({ side, doc, score: ranked.scores[i]! }))
    }
    const keys = new Map<string, string>()
    const urlKey = (e: Entry): string => {
      const k = key(e)
      let found = keys.get(k)
      if (found === undefined) {
        const index = this.sides[e.side]
        const url = images ? index.parts.imageFields.get(e.doc, 0) : index.parts.pages.get(e.doc, PageField.Url)
        found = normalizeUrl(url)?.key ?? url
        keys.set(k, found)
      }
      return found
    }
    // Ties as one index breaks them: in page id order, which is URL order.
    const order = (a: Entry, b: Entry) =>
      b.score - a.score || (a.side === b.side ? a.doc - b.doc : urlKey(a) < urlKey(b) ? -1 : urlKey(a) > urlKey(b) ? 1 : a.side - b.side)
    entries.sort(order)
    entries.length = Math.min(entries.length, depth)
    const masks = new TermMasks()
    const top = entries.slice(0, Math.min(proximityDepth, entries.length))
    if (proximity > 0 && top.length >= 2) {
      for (const side of [0, 1] as const) {
        const mine = top.filter((e) => e.side === side)
        if (mine.length === 0) continue
        const ranked: RankedDocuments = { docs: Int32Array.from(mine, (e) => e.doc), scores: Float64Array.from(mine, (e) => e.score), complete: true }
        const reranked = this.sides[side].rerankPlanned(plans[side]!, ranked, images)
        const score = new Map<number, number>()
        reranked.docs.forEach((doc, i) => score.set(doc, reranked.scores[i]!))
        for (const e of mine) e.score = score.get(e.doc)!
        if (reranked.termsIn !== undefined) masks.add(side, reranked.termsIn.field, reranked.docs, reranked.termsIn.masks)
      }
      top.sort(order)
      entries.splice(0, top.length, ...top)
    }
    entries.length = Math.min(entries.length, n)
    return { entries, plans, masks }
  }
}

const key = (e: Entry) => `${e.side} ${e.doc}`

/** The words each page holds in a field, as proximity re-ranking found them, by side and page. */
class TermMasks {
  private readonly masks = new Map<string, number>()
  private readonly fields: [number, number] = [-1, -1]

  get size(): number {
    return this.masks.size
  }

  add(side: 0 | 1, field: number, docs: Int32Array, masks: Uint32Array): void {
    this.fields[side] = field
    for (let i = 0; i < masks.length; i++) this.masks.set(`${side} ${docs[i]!}`, masks[i]!)
  }

  has(k: string): boolean {
    return this.masks.has(k)
  }

  get(k: string): number | undefined {
    return this.masks.get(k)
  }

  field(side: 0 | 1): number {
    return this.fields[side]
  }
}

/**
 * Links `segment` (built with `base.options`) to `base`: the collection's statistics for both,
 * and the snapshot pages the segment hides. A generator: it yields between pieces of work
 * (dictionary look-ups, URL look-ups) and returns the index; a caller runs it to the end,
 * answering queries between steps. Without segment pages the result is `base` itself.
 */
export function* linkSegment(base: SearchIndex, segment: SearchIndex): Generator<void, SearchIndex | SegmentedIndex> {
  if (segment.documentCount === 0) return base
  const web = yield* statisticsOf(base.parts.web, segment.parts.web)
  const images = yield* statisticsOf(base.parts.images, segment.parts.images)
  const hidden = new Uint8Array(base.documentCount)
  let hiddenCount = 0
  const urls = segment.parts.pages
  for (let doc = 0; doc < segment.documentCount; doc++) {
    if (doc > 0 && doc % stepPages === 0) yield
    const stored = urls.get(doc, PageField.Url)
    const at = pageIdOfKey(base, normalizeUrl(stored)?.key ?? stored)
    if (at >= 0 && hidden[at] === 0) {
      hidden[at] = 1
      hiddenCount++
    }
  }
  const views = [base.withStatistics(web.base, images.base), segment.withStatistics(web.segment, images.segment)] as const
  return new SegmentedIndex(base, segment, views, hidden, hiddenCount)
}

/** Statistics of the collection of two indexes of one kind (pages, or images), for each. */
function* statisticsOf(base: InvertedIndex, segment: InvertedIndex): Generator<void, { base: CollectionStatistics; segment: CollectionStatistics }> {
  const inBase = new Map<number, number>()
  const inSegment = new Map<number, number>()
  for (let t = 0; t < segment.termCount; t++) {
    if (t > 0 && t % stepTerms === 0) yield
    const at = base.lookup(segment.termText(t))
    if (at < 0) continue
    inSegment.set(t, base.arrays.termDf[at]!)
    inBase.set(at, segment.arrays.termDf[t]!)
  }
  const documentCount = base.documentCount + segment.documentCount
  const averageLengths = base.documentCount > 0 ? base.meta.averageLengths : segment.meta.averageLengths
  return {
    base: { documentCount, otherDf: inBase, averageLengths },
    segment: { documentCount, otherDf: inSegment, averageLengths }
  }
}

/** Runs a generator such as linkSegment to its end at once (tests, and callers with nothing else to answer). */
export const runToEnd = <A>(steps: Generator<void, A>): A => {
  for (;;) {
    const next = steps.next()
    if (next.done === true) return next.value
  }
}
