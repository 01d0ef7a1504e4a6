/**
 * Term-at-a-time top-k, for the queries MaxScore serves worst: several common words, none of
 * them rare enough to lead. There MaxScore leaves one or two words essential, every one of their
 * documents becomes a candidate, and each candidate probes the other words' cursors one by one;
 * the 56k-passage bench's slowest queries spent about 190 ns per candidate that way. Here the
 * essential words' documents are marked in a bitmap, every word's postings are read straight
 * through once, in query order, adding each score into an accumulator per document (the other
 * words only where a mark is set), and the marked documents are offered to the heap.
 *
 * Exact: a document without an essential word scores at most what the other words can add
 * together, which is at most the primed threshold, below the final k-th score (as in MaxScore).
 * Each document's score is summed in query term order with the cursors' own arithmetic, so
 * scores are bit for bit MaxScore's and exhaustive scoring's.
 */
import { addScores, type InvertedIndex, markDocuments, type PostingCursor } from "./InvertedIndex.ts"
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
 * At a million passages term at a time took up to ten times MaxScore's time on queries of words
 * of a few hundred thousand postings each: it is kept to queries it reads whole in a millisecond
 * or two.
 */
const maxPostings = 64_000
/**
 * A word this many times rarer than the commonest one leads MaxScore to few candidates, and the
 * threshold climbs fast from the documents that hold it; there term at a time lost up to 4x
 * ("qcursor std java functions", "void public open api" at 100k passages).
 */
const maxDfSpread = 8

/** Whether term at a time is expected to be quicker than MaxScore for these cursors from this threshold. */
export const prefersTermAtATime = (cursors: ReadonlyArray<PostingCursor>, primed: number): boolean => {
  if (primed <= 0) return false
  let postings = 0
  let rarest = Infinity
  let commonest = 0
  for (const cursor of cursors) {
    postings += cursor.df
    rarest = Math.min(rarest, cursor.df)
    commonest = Math.max(commonest, cursor.df)
  }
  if (postings > maxPostings || commonest > maxDfSpread * rarest) return false
  const essential = essentialTerms(cursors, primed)
  let essentialPostings = 0
  let others = 0
  for (let i = 0; i < cursors.length; i++) {
    if (essential[i] === 1) essentialPostings += cursors[i]!.df
    else others++
  }
  const termAtATime = termAtATimeNs.essential * essentialPostings + termAtATimeNs.other * (postings - essentialPostings)
  const maxScore = maxScoreNs.essential * essentialPostings + maxScoreNs.probe * essentialPostings * others + maxScoreNs.fixed
  return termAtATime < maxScore
}

/**
 * 1 for each term a document must hold to beat `primed`: the weakest terms (by their best
 * score) whose bounds together stay at or below it are not essential, as in MaxScore. Of equal
 * bounds the later term counts as weaker, so that in a query ordered strongest first (as
 * SearchIndex orders it) the essential terms come first.
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

/** Offers the documents that can beat `primed` to `heap`, scored term at a time (see the module comment). */
export const rankTermAtATime = (index: InvertedIndex, cursors: ReadonlyArray<PostingCursor>, heap: TopK, primed: number): void => {
  const { scores, marks } = index.accumulators()
  const essential = essentialTerms(cursors, primed)
  // Essential terms first in query order (the usual case): each marks its documents as it adds
  // their scores. Otherwise their documents are marked in a pass of their own before any score.
  const firstOther = essential.indexOf(0)
  const essentialFirst = firstOther < 0 || essential.indexOf(1, firstOther) < 0
  let last = -1
  try {
    if (!essentialFirst) {
      for (let i = 0; i < cursors.length; i++) {
        if (essential[i] === 1) last = Math.max(last, markDocuments(index, cursors[i]!.termId, marks))
      }
    }
    for (let i = 0; i < cursors.length; i++) {
      const { termId, weight } = cursors[i]!
      if (essential[i] !== 1) addScores(index, termId, weight, scores, marks, "only")
      else if (essentialFirst) last = Math.max(last, addScores(index, termId, weight, scores, marks, "set"))
      else addScores(index, termId, weight, scores, marks, "ignore")
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
