/**
 * Weighted Reciprocal Rank Fusion of ranked lists (Cormack, Clarke, Buettcher, SIGIR 2009):
 * score(d) = sum over lists of weight / (k + rank), k = 60, rank from 1. Scores of different
 * engines are not comparable, ranks are; RRF needs nothing else.
 *
 * Duplicates are one result by the page key of UrlNormalizer (SearXNG's rule, plus query order
 * and tracking parameters): the merged result keeps the best title, the longest snippet, the
 * cleanest link any source gave (https, then without tracking parameters), and every source with
 * its rank. Plain TypeScript, one Map and one sort: the fusion adds microseconds to a request.
 */
import { cleanerUrl, pageKey } from "../index/UrlNormalizer.ts"
import type { ImageResult, WebHit } from "./SearchResult.ts"

export const RRF_K = 60

/** One source's answer: hits in its ranking order (rank = index + 1). */
export interface RankedList<H> {
  readonly source: string
  readonly weight: number
  readonly hits: ReadonlyArray<H>
}

/** Where a fused result came from: the source and its rank there (from 1). */
export interface SourceRank {
  readonly source: string
  readonly rank: number
}

export interface Fused<H> {
  readonly hit: H
  readonly score: number
  readonly sources: ReadonlyArray<SourceRank>
}

const truncated = (title: string): boolean => title.endsWith("...") || title.endsWith("…")

/** The better of two titles: a whole one over a cut one, then the longer. */
export const betterTitle = (a: string, b: string): string => {
  if (a === "") return b
  if (b === "") return a
  const ta = truncated(a), tb = truncated(b)
  if (ta !== tb) return ta ? b : a
  return b.length > a.length ? b : a
}

interface Entry<H> {
  hit: H
  score: number
  sources: Array<SourceRank>
  /** Best rank over all sources, then the order first seen: stable tie-breaks. */
  bestRank: number
  order: number
}

const fuse = <H>(
  lists: ReadonlyArray<RankedList<H>>,
  limit: number,
  keyOf: (hit: H) => string,
  merge: (kept: H, other: H) => H,
  k: number
): Array<Fused<H>> => {
  const entries = new Map<string, Entry<H>>()
  let order = 0
  for (let l = 0; l < lists.length; l++) {
    const list = lists[l]!
    const seen = new Set<string>()
    for (let i = 0; i < list.hits.length; i++) {
      const hit = list.hits[i]!
      const key = keyOf(hit)
      // A source listing one page twice counts once, at its better rank.
      if (seen.has(key)) continue
      seen.add(key)
      const rank = i + 1
      const gain = list.weight / (k + rank)
      const entry = entries.get(key)
      if (entry === undefined) {
        entries.set(key, { hit, score: gain, sources: [{ source: list.source, rank }], bestRank: rank, order: order++ })
      } else {
        entry.hit = merge(entry.hit, hit)
        entry.score += gain
        entry.sources.push({ source: list.source, rank })
        if (rank < entry.bestRank) entry.bestRank = rank
      }
    }
  }
  const sorted = [...entries.values()].sort((a, b) => b.score - a.score || a.bestRank - b.bestRank || a.order - b.order)
  const out: Array<Fused<H>> = new Array(Math.min(limit, sorted.length))
  for (let i = 0; i < out.length; i++) {
    const e = sorted[i]!
    out[i] = { hit: e.hit, score: e.score, sources: e.sources }
  }
  return out
}

const mergeWeb = (a: WebHit, b: WebHit): WebHit => ({
  title: betterTitle(a.title, b.title),
  link: cleanerUrl(a.link, b.link),
  snippet: b.snippet.length > a.snippet.length ? b.snippet : a.snippet,
  date: a.date === null ? b.date : b.date !== null && b.date.length > a.date.length && b.date.startsWith(a.date) ? b.date : a.date
})

const mergeImage = (a: ImageResult, b: ImageResult): ImageResult => {
  // The size travels with the URL that is kept: one source's width with the other's height would mislead.
  const sized = a.width !== undefined && a.height !== undefined ? a : b.width !== undefined && b.height !== undefined ? b : undefined
  return {
    url: cleanerUrl(a.url, b.url),
    refUrl: a.refUrl === "" ? b.refUrl : cleanerUrl(a.refUrl, b.refUrl),
    title: betterTitle(a.title, b.title),
    ...(sized === undefined ? {} : { width: sized.width!, height: sized.height! })
  }
}

/** Web hits of several sources fused into at most `limit` results. */
export const fuseWeb = (lists: ReadonlyArray<RankedList<WebHit>>, limit: number, k = RRF_K): Array<Fused<WebHit>> =>
  fuse(lists, limit, (hit) => pageKey(hit.link), mergeWeb, k)

/** Images of several sources fused by the image URL. */
export const fuseImages = (lists: ReadonlyArray<RankedList<ImageResult>>, limit: number, k = RRF_K): Array<Fused<ImageResult>> =>
  fuse(lists, limit, (image) => pageKey(image.url), mergeImage, k)
