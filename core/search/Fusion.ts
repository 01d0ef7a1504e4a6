/**
 * Weighted Reciprocal Rank Fusion of ranked lists (Cormack, Clarke, Buettcher, SIGIR 2009):
 * score(d) = sum over lists of weight / (k + rank), k = 60, rank from 1. Scores of different
 * engines are not comparable, ranks are; RRF needs nothing else.
 *
 * Duplicates are one result by a normalised URL (SearXNG's rule, plus query order and
 * tracking parameters): the merged result keeps the best title, the longest snippet, an https
 * link when any source had one, and every source with its rank. Plain TypeScript, one Map
 * and one sort: the fusion adds microseconds to a request, not milliseconds.
 */
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

/** Query parameters that only track the visitor; they never change the page. */
const TRACKING = /^(utm_[a-z_]+|fbclid|gclid|gclsrc|dclid|msclkid|mc_cid|mc_eid|yclid|_ga|_gl|igshid|_hsenc|_hsmi|mkt_tok|ref_src|spm)$/i

/**
 * The identity of a URL for de-duplication: scheme ignored, host lower-cased without `www.`,
 * default ports, fragment, tracking parameters and a trailing slash dropped, query parameters
 * sorted. A string that is not a URL is its own key.
 */
export const fusionKey = (raw: string): string => {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    return raw.trim()
  }
  let host = url.hostname
  if (host.startsWith("www.")) host = host.slice(4)
  if (host.endsWith(".")) host = host.slice(0, -1)
  const port = url.port === "" || url.port === "80" || url.port === "443" ? "" : `:${url.port}`
  let path = url.pathname
  if (path.length > 1 && path.endsWith("/")) path = path.replace(/\/+$/, "")
  if (path === "/") path = ""
  let query = ""
  if (url.search.length > 1) {
    const kept: Array<[string, string]> = []
    for (const pair of url.searchParams) if (!TRACKING.test(pair[0])) kept.push(pair)
    if (kept.length > 0) {
      kept.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
      query = `?${new URLSearchParams(kept).toString()}`
    }
  }
  return `${host}${port}${path}${query}`
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

const betterLink = (a: string, b: string): string => (!a.startsWith("https:") && b.startsWith("https:") ? b : a)

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
  link: betterLink(a.link, b.link),
  snippet: b.snippet.length > a.snippet.length ? b.snippet : a.snippet,
  date: a.date === null ? b.date : b.date !== null && b.date.length > a.date.length && b.date.startsWith(a.date) ? b.date : a.date
})

const mergeImage = (a: ImageResult, b: ImageResult): ImageResult => {
  // The size travels with the URL that is kept: one source's width with the other's height would mislead.
  const sized = a.width !== undefined && a.height !== undefined ? a : b.width !== undefined && b.height !== undefined ? b : undefined
  return {
    url: betterLink(a.url, b.url),
    refUrl: a.refUrl === "" ? b.refUrl : betterLink(a.refUrl, b.refUrl),
    title: betterTitle(a.title, b.title),
    ...(sized === undefined ? {} : { width: sized.width!, height: sized.height! })
  }
}

/** Web hits of several sources fused into at most `limit` results. */
export const fuseWeb = (lists: ReadonlyArray<RankedList<WebHit>>, limit: number, k = RRF_K): Array<Fused<WebHit>> =>
  fuse(lists, limit, (hit) => fusionKey(hit.link), mergeWeb, k)

/** Images of several sources fused by the image URL. */
export const fuseImages = (lists: ReadonlyArray<RankedList<ImageResult>>, limit: number, k = RRF_K): Array<Fused<ImageResult>> =>
  fuse(lists, limit, (image) => fusionKey(image.url), mergeImage, k)
