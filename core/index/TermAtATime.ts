/**
 * Term-at-a-time top-k, for the queries MaxScore serves worst: several common words, none of
 * them rare enough to lead. There MaxScore leaves one or two words essential, every one of their
 * documents becomes a candidate, and each candidate probes the other words' cursors one by one,
 * where the search bench's slowest queries spend their time (test/bench/search.ts). Here every
 * word's postings are read straight through once, in query order, adding each score into an
 * accumulator per document: the essential words' (first in the order) marking their documents
 * in a bitmap, the other words' only where a mark is set; the marked documents go to the heap.
 *
 * Exact: a document without an essential word scores at most what the other words can add
 * together, which is at most the primed threshold, below the final k-th score (as in MaxScore).
 * Each document's score is summed in query term order with the cursors' own arithmetic, so
 * scores are MaxScore's bit for bit.
 */
import { addScores, type InvertedIndex, type PostingCursor } from "./InvertedIndex.ts"
import type { TopK } from "./TopK.ts"

/**
 * Costs in nanoseconds, fitted on the search bench's 500 queries (56k passages) by timing both
 * strategies on each: term at a time costs per essential posting (marked, scored, selected) and
 * per other posting (read, mostly skipped); MaxScore costs per essential posting, per essential
 * posting and other word (the probes), plus what it costs more than term at a time whatever the
 * postings (windows, stretches, its set-up).
 */
const termAtATimeNs = { essential: 34.3, other: 11.4 }
const maxScoreNs = { essential: 2.2, probe: 40.3, fixed: 87_000 }
/**
 * Term at a time reads every posting of every word, where MaxScore skips more of a long list the
 * higher its threshold climbs, which the primed threshold the model starts from does not show.
 * At a million passages term at a time fell far behind MaxScore on queries of words with long
 * posting lists (test/bench/scale.ts): it is kept to queries it reads whole quickly.
 */
const maxPostings = 64_000
/**
 * A word this many times rarer than the commonest one leads MaxScore to few candidates, and the
 * threshold climbs fast from the documents that hold it; there term at a time loses to MaxScore
 * ("qcursor std java functions", "void public open api" at 100k passages: test/bench/scale.ts).
 */
const maxDfSpread = 8

/**
 * The words a document must hold to beat `primed` (1 each), when term at a time can rank the
 * query: there is a primed threshold, and those words come first in the query's order (as
 * SearchIndex orders words, strongest first), so that each can mark its documents as it adds
 * their scores. Undefined otherwise.
 */
export const termAtATimePlan = (cursors: ReadonlyArray<PostingCursor>, primed: number): Uint8Array | undefined => {
  if (primed <= 0) return undefined
  const essential = essentialTerms(cursors, primed)
  const firstOther = essential.indexOf(0)
  return firstOther < 0 || essential.indexOf(1, firstOther) < 0 ? essential : undefined
}

/** Whether term at a time is expected to be quicker than MaxScore for these cursors and their essential words. */
export const prefersTermAtATime = (cursors: ReadonlyArray<PostingCursor>, essential: Uint8Array): boolean => {
  let postings = 0
  let rarest = Infinity
  let commonest = 0
  let essentialPostings = 0
  let others = 0
  for (let i = 0; i < cursors.length; i++) {
    const df = cursors[i]!.df
    postings += df
    rarest = Math.min(rarest, df)
    commonest = Math.max(commonest, df)
    if (essential[i] === 1) essentialPostings += df
    else others++
  }
  if (postings > maxPostings || commonest > maxDfSpread * rarest) return false
  const termAtATime = termAtATimeNs.essential * essentialPostings + termAtATimeNs.other * (postings - essentialPostings)
  const maxScore = maxScoreNs.essential * essentialPostings + maxScoreNs.probe * essentialPostings * others + maxScoreNs.fixed
  return termAtATime < maxScore
}

/**
 * 1 for each term a document must hold to beat `primed`: the weakest terms (by their best
 * score) whose bounds together stay at or below it are not essential, as in MaxScore. Of equal
 * bounds the later term counts as weaker, so that in a query ordered strongest first the
 * essential terms come first.
 */
const essentialTerms = (cursors: ReadonlyArray<PostingCursor>, primed: number): Uint8Array => {
  const byBound = Array.from(cursors.keys()).sort((a, b) => cursors[a]!.maxScore - cursors[b]!.maxScore || b - a)
  const essential = new Uint8Array(cursors.length)
  let bound = 0
  for (const i of byBound) {
    bound += cursors[i]!.maxScore
    if (bound > primed) essential[i] = 1
  }
  return essential
}

/**
 * Offers the documents that can beat `primed` to `heap`, scored term at a time (see the module
 * comment); `essential` from termAtATimePlan: the essential words, first in query order, mark
 * their documents as they add their scores, the others add only to marked documents.
 */
export const rankTermAtATime = (
  index: InvertedIndex,
  cursors: ReadonlyArray<PostingCursor>,
  essential: Uint8Array,
  heap: TopK,
  primed: number
): void => {
  const { scores, marks } = index.accumulators()
  let last = -1
  try {
    for (let i = 0; i < cursors.length; i++) {
      const { termId, weight } = cursors[i]!
      if (essential[i] === 1) last = Math.max(last, addScores(index, termId, weight, scores, marks, true))
      else addScores(index, termId, weight, scores, marks, false)
    }
  } catch (error) {
    // The accumulators are shared by every query: none may keep a half-done query's sums.
    scores.fill(0)
    marks.fill(0)
    throw error
  }
  // Every mark and every score added is cleared as it is read, ready for the next query.
  let threshold = primed
  for (let word = 0; word <= last >>> 5 && last >= 0; word++) {
    let bits = marks[word]!
    if (bits === 0) continue
    marks[word] = 0
    while (bits !== 0) {
      const lowest = bits & -bits
      bits ^= lowest
      const doc = (word << 5) + 31 - Math.clz32(lowest)
      const score = scores[doc]!
      scores[doc] = 0
      // Compared here, not only in offer: a double passed to a call is boxed.
      if (score < threshold) continue
      if (heap.offer(doc, score) && heap.full) threshold = Math.max(primed, heap.threshold)
    }
  }
}
