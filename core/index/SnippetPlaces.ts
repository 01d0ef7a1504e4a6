/**
 * Where in a long page its snippet lies, from the postings instead of the text: the query
 * words' positions in the page's body field give the window of positions where they gather
 * (scored as a snippet's window is), and the page's count of positions, stored at build time,
 * turns the window's position into an estimated place in the text, as a share of its bytes.
 * The snippet then reads and scans 4 KB there instead of decoding and scanning a text of up to
 * hundreds of thousands of characters; when that piece holds fewer of the words than the
 * postings put in the window (the estimate missed), it scans the whole text as before.
 */
import { type InvertedIndex, PostingCursor } from "./InvertedIndex.ts"
import { maxMatches, type SnippetPlace } from "./Snippet.ts"

/** Pages whose text has at least this many characters have their count of positions stored. */
export const longTextChars = 8192
/**
 * A place's piece of text: this many bytes either side of it, read and scanned instead of the
 * whole text: wide enough to hold the estimate's miss on nearly every long hit of the whole-page
 * queries (a narrower reach falls back to the whole text more often; reading a narrow piece first,
 * then this one, showed fewer words on more hits: test/bench/search.ts --pages).
 */
export const placeReach = 2048
/**
 * A window of the query's words spans fewer positions than this: about a snippet window's 180
 * characters of prose, stop words included (they hold positions). A narrower bound made the
 * snippet show fewer words than the whole text's scan on more hits of the whole-page queries.
 */
const windowPositions = 30
/** Occurrences are packed as position * 64 + the word's index: 48 query words at most, positions below 2^25. */
const wordBits = 6
const maxPosition = 2 ** (31 - wordBits)

let scratch: Int32Array = new Int32Array(1024)
const positions = new Int32Array(maxMatches << wordBits)
const occurrences = new Int32Array(maxMatches)
const wordEnds = new Int32Array(1 << wordBits)
const next = new Int32Array(1 << wordBits)
/** Per query word: its occurrences in the window being slid. */
const inWindow = new Int32Array(1 << wordBits)

/** The stored count of positions of `doc`'s text, 0 when its text is short; `counts` holds (doc, count) pairs by doc. */
export const positionCountOf = (counts: Int32Array, doc: number): number => {
  let low = 0
  let high = (counts.length >>> 1) - 1
  while (low <= high) {
    const mid = (low + high) >>> 1
    const at = counts[2 * mid]!
    if (at === doc) return counts[2 * mid + 1]!
    if (at < doc) low = mid + 1
    else high = mid - 1
  }
  return 0
}

/**
 * For each of `docs`, where its snippet lies (undefined for a short page or one whose text holds
 * none of the words); undefined when no page is long. `weights[i]` weighs `termIds[i]`.
 */
export const snippetPlaces = (
  index: InvertedIndex,
  termIds: ReadonlyArray<number>,
  weights: Float64Array,
  docs: Int32Array,
  field: number,
  counts: Int32Array
): Array<SnippetPlace | undefined> | undefined => {
  if (counts.length === 0 || termIds.length > 1 << wordBits) return undefined
  // Each page's count of positions, looked up once: 0 for a short page.
  const textPositions = new Int32Array(docs.length)
  const long: Array<number> = []
  for (let i = 0; i < docs.length; i++) {
    textPositions[i] = positionCountOf(counts, docs[i]!)
    if (textPositions[i]! > 0) long.push(i)
  }
  if (long.length === 0) return undefined
  // Postings are read forward only: visit the pages in increasing order.
  long.sort((a, b) => docs[a]! - docs[b]!)
  const cursors = termIds.map((id) => new PostingCursor(index, id, 1, docs[long[0]!]!))
  const places: Array<SnippetPlace | undefined> = new Array(docs.length).fill(undefined)
  try {
    for (const i of long) {
      const doc = docs[i]!
      // Each word's positions, one after another: word t's end at wordEnds[t].
      let count = 0
      for (let t = 0; t < cursors.length; t++) {
        const cursor = cursors[t]!
        cursor.advance(doc)
        if (cursor.doc === doc) {
          const found = cursor.positionsIn(field, scratch)
          scratch = found.positions
          const kept = Math.min(found.count, maxMatches)
          positions.set(found.positions.subarray(0, kept), count)
          count += kept
        }
        wordEnds[t] = count
      }
      if (count === 0) continue
      const windowAt = bestWindow(merge(cursors.length), weights)
      places[i] = { at: Math.min(1, windowAt / textPositions[i]!), words: bestWords }
    }
  } finally {
    for (const cursor of cursors) cursor.close()
  }
  return places
}

/**
 * The words' first `maxMatches` positions in order, merged into `occurrences` (their count is
 * returned), each packed with its word's index (positions past what the packing holds are left
 * out). A snippet's scan of the text stops after as many matches, so both look at the same ones;
 * it also bounds the work on a page where a query word occurs thousands of times.
 */
const merge = (words: number): number => {
  for (let t = 0; t < words; t++) next[t] = t === 0 ? 0 : wordEnds[t - 1]!
  let out = 0
  for (;;) {
    let word = -1
    let least = maxPosition
    for (let t = 0; t < words; t++) {
      if (next[t]! < wordEnds[t]! && positions[next[t]!]! < least) {
        least = positions[next[t]!]!
        word = t
      }
    }
    if (word < 0 || out === maxMatches) return out
    occurrences[out++] = (least << wordBits) | word
    next[word]!++
  }
}

/**
 * The first position of the window of `occurrences` whose distinct words weigh most (repeats a
 * tenth), as a snippet scores one, with their number in `bestWords`; slid over the occurrences
 * once (a common word may have thousands). Numbers out, not an object: a literal made after a
 * long loop deoptimised the loop's code at every call.
 */
let bestWords = 0
const bestWindow = (count: number, weights: Float64Array): number => {
  const sorted = occurrences
  const mask = (1 << wordBits) - 1
  inWindow.fill(0, 0, weights.length)
  let bestScore = -1
  let bestAt = 0
  bestWords = 0
  let score = 0
  let words = 0
  let right = 0
  for (let i = 0; i < count; i++) {
    const first = sorted[i]! >>> wordBits
    for (; right < count && (sorted[right]! >>> wordBits) - first < windowPositions; right++) {
      const word = sorted[right]! & mask
      if (inWindow[word]!++ === 0) {
        score += weights[word]!
        words++
      } else score += 0.1 * weights[word]!
    }
    if (score > bestScore + 1e-9) {
      bestScore = score
      bestAt = first
      bestWords = words
    }
    const word = sorted[i]! & mask
    if (--inWindow[word]! === 0) {
      score -= weights[word]!
      words--
    } else score -= 0.1 * weights[word]!
  }
  return bestAt
}
