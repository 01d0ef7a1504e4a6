/**
 * Top-k BM25F retrieval over an InvertedIndex, document at a time.
 *
 * Without required terms it runs MaxScore (Turtle & Flood 1995) with block-max bounds: terms
 * sorted by their best possible score; once the k-th best score exceeds what the weakest terms
 * could add together, those terms stop producing candidates and are only probed (with block
 * skipping) for documents the others found, and a candidate is dropped as soon as its bound
 * falls below the k-th score. Once a term is required by the k-th score (the others together
 * cannot beat it), a cursor of that term standing past a candidate lets ranking jump there.
 * With phrases, candidates come from the rarest required term (a leapfrog conjunction) and
 * optional terms are probed the same way. Exclusions and site filters reject a candidate
 * before it is scored.
 */
import { blockSize, endOfPostings, type InvertedIndex, PostingCursor } from "./InvertedIndex.ts"
import { prefersTermAtATime, rankTermAtATime, termAtATimePlan } from "./TermAtATime.ts"
import { maxMaskedTerms } from "./TermPresence.ts"
import { TopK } from "./TopK.ts"

export interface QueryTerm {
  readonly termId: number
  /** How often the term occurs in the query (BM25's query term frequency). */
  readonly weight: number
  /** A word's exact form beside its stem (TokenKind.Form): proximity pairs it with other forms, never with a stem. */
  readonly exactForm?: boolean
}

/** Terms that must appear at the given relative positions (offsets from the phrase's start). */
export interface Phrase {
  readonly termIds: ReadonlyArray<number>
  readonly offsets: ReadonlyArray<number>
}

export interface CompiledQuery {
  /** Distinct scoring terms. */
  readonly terms: ReadonlyArray<QueryTerm>
  /** Positive phrases: their terms are among `terms` and are required. */
  readonly phrases: ReadonlyArray<Phrase>
  /** Single terms (one-entry phrases) that must be present. */
  readonly requiredTermIds: ReadonlyArray<number>
  /** A document containing any of these (a one-term phrase is a word) is left out. */
  readonly excluded: ReadonlyArray<Phrase>
  /** Document filter (site:), called in increasing document order. */
  readonly accept?: ((doc: number) => boolean) | undefined
  /** The smallest document >= doc that `accept` may pass (endOfPostings when none): lets ranking jump. */
  readonly skipTo?: ((doc: number) => number) | undefined
}

export interface RankedDocuments {
  readonly docs: Int32Array
  readonly scores: Float64Array
  /** True when every matching document was seen (fewer than k matched). */
  readonly complete: boolean
  /**
   * Per document, a mask of the query's terms (bit i: terms[i]) present in field `field`,
   * when ranking read them anyway (proximity re-ranking of every document returned).
   */
  readonly termsIn?: { readonly field: number; readonly masks: Uint32Array } | undefined
}

const emptyRanking: RankedDocuments = { docs: new Int32Array(0), scores: new Float64Array(0), complete: true }

/**
 * How a query without required words is ranked: MaxScore, term at a time (TermAtATime.ts;
 * queries with exclusions or site: filters, with no primed threshold, or whose essential words
 * do not come first in their order, still use MaxScore), or whichever of the two the cost model
 * expects to be quicker. Both give the same results; tests and benches force one.
 */
export type RankStrategy = "auto" | "maxScore" | "termAtATime"

/**
 * With `cluster` (document -> near-duplicate cluster), the best document of each of the k best
 * clusters.
 */
export const rankTopK = (
  index: InvertedIndex,
  query: CompiledQuery,
  k: number,
  cluster?: Int32Array,
  strategy: RankStrategy = "auto"
): RankedDocuments => {
  const limit = Math.min(k, index.documentCount)
  if (limit <= 0 || query.terms.length === 0) return emptyRanking
  const heap = new TopK(limit, cluster)
  const cursors = query.terms.map((t) => new PostingCursor(index, t.termId, t.weight))
  try {
    const filter = makeFilter(index, query)
    const requiredIds = new Set<number>(query.requiredTermIds)
    for (const phrase of query.phrases) for (const id of phrase.termIds) requiredIds.add(id)
    if (requiredIds.size === 0) {
      // Without exclusions or site: filters, a query may be ranked term at a time.
      const unfiltered = filter === undefined && query.skipTo === undefined
      const primed = primedThreshold(index, query, cursors, limit, cluster)
      const plan = unfiltered && strategy !== "maxScore" ? termAtATimePlan(cursors, primed) : undefined
      if (plan !== undefined && (strategy === "termAtATime" || prefersTermAtATime(cursors, plan))) rankTermAtATime(index, cursors, plan, heap, primed)
      else maxScore(cursors, heap, filter, query.skipTo, primed)
    } else conjunctive(index, cursors, requiredIds, query.phrases, heap, filter, query.skipTo)
  } finally {
    closeAll(cursors)
  }
  const { docs, scores } = heap.sorted()
  return { docs, scores, complete: !heap.full }
}

const closeAll = (cursors: ReadonlyArray<PostingCursor>) => {
  for (const cursor of cursors) cursor.close()
}

type Filter = ((doc: number) => boolean) | undefined
type SkipTo = ((doc: number) => number) | undefined

const makeFilter = (index: InvertedIndex, query: CompiledQuery): Filter => {
  const accept = query.accept
  if (query.excluded.length === 0) return accept
  const exclusions = query.excluded.map((phrase) => ({
    cursors: phrase.termIds.map((id) => new PostingCursor(index, id, 0)),
    offsets: phrase.offsets
  }))
  const matcher = new PhraseMatcher(index)
  return (doc) => {
    if (accept !== undefined && !accept(doc)) return false
    for (const exclusion of exclusions) {
      let all = true
      for (const cursor of exclusion.cursors) {
        cursor.advance(doc)
        if (cursor.doc !== doc) all = false
      }
      if (all && (exclusion.cursors.length === 1 || matcher.matches(exclusion.cursors, exclusion.offsets))) return false
    }
    return true
  }
}

/**
 * Block-max MaxScore, window by window (as Lucene's MaxScoreBulkScorer): a window runs to the
 * end of the nearest skip block of the terms essential in the window before (longer windows
 * than cutting at every term's blocks, so more queries/s at a million passages:
 * test/bench/scale.ts), every term is bounded by the best score of the blocks it has there, and
 * the essential/non-essential split is made with those tighter bounds. A window whose bounds
 * cannot beat the k-th score is skipped without decoding a posting; inside a live window the
 * same is done again, stretch by stretch: a stretch ends where an essential term's run of 16
 * postings does, and every term is bounded there by the maxima of its runs in it, which passes
 * over more stretches and leaves more terms to be probed only (fewer postings scored and fewer
 * runs decoded than with the window's bounds alone).
 */
const maxScore = (
  cursors: Array<PostingCursor>,
  heap: TopK,
  filter: Filter,
  skipTo: SkipTo,
  primed: number
): void => {
  const m = cursors.length
  const maxes = new Float64Array(m)
  const order = new Int32Array(m)
  // bound[k]: the most the k + 1 weakest terms of the window can add together.
  const bound = new Float64Array(m)
  // stretch[k]: the same within a stretch of the window (below).
  const stretch = new Float64Array(m)
  // Terms essential in the previous window: their blocks bound this one.
  const leads = new Uint8Array(m).fill(1)
  // Scores per term (in query order), summed in that fixed order so equal documents tie exactly.
  const contributions = new Float64Array(m)
  // Terms a document of the window must hold to beat the threshold (the others together cannot).
  const required = new Int32Array(m)
  let requiredCount = 0
  let threshold = primed
  const last = endOfPostings - 1
  let lo = 0
  for (;;) {
    // The window: from lo to the nearest end of a lead term's block holding a posting >= lo. The
    // leads are the terms essential in the previous window (as Lucene's MaxScoreBulkScorer): a
    // dense term that is only probed would otherwise cut every window short at its own blocks.
    // Without a live lead (the leads have run out), every live term's blocks bound the window.
    let hi = endOfPostings
    let anyHi = endOfPostings
    let live = 0
    for (let i = 0; i < m; i++) {
      const cursor = cursors[i]!
      order[i] = i
      if (!cursor.shallowTo(Math.max(lo, cursor.doc))) continue
      live++
      const end = cursor.shallowEnd()
      if (end < anyHi) anyHi = end
      if (leads[i] === 1 && end < hi) hi = end
    }
    if (live === 0) return
    if (hi === endOfPostings) hi = anyHi
    if (hi > last) hi = last
    // Each term's bound over the window, from the maxima of the blocks it spans. A term whose cursor
    // already stands past the window has no posting in it (every document before lo has been dealt
    // with), so it adds nothing: a word of another manual otherwise inflates every window before its
    // next posting, and the words present there are pruned less (as in "public jdk java ghc" at a
    // million passages: test/bench/scale.ts).
    for (let i = 0; i < m; i++) {
      const cursor = cursors[i]!
      const target = Math.max(lo, cursor.doc)
      maxes[i] = target > hi || !cursor.shallowTo(target) ? 0 : cursor.blocksMaxScore(hi)
    }
    if (skipTo !== undefined && skipTo(lo) > hi) {
      // No document of this window is on an included site.
      if (hi === endOfPostings) return
      lo = skipTo(lo)
      if (lo === endOfPostings) return
      continue
    }
    // Insertion sort: queries have few terms.
    for (let i = 1; i < m; i++) {
      const x = order[i]!
      let j = i - 1
      while (j >= 0 && maxes[order[j]!]! > maxes[x]!) {
        order[j + 1] = order[j]!
        j--
      }
      order[j + 1] = x
    }
    let sum = 0
    for (let k = 0; k < m; k++) bound[k] = sum += maxes[order[k]!]!
    let firstEssential = 0
    while (firstEssential < m && bound[firstEssential]! <= threshold) firstEssential++
    // The next window ends where this one's essential terms' blocks do (the strongest term's when none is).
    for (let k = 0; k < m; k++) leads[order[k]!] = k >= firstEssential || (firstEssential === m && k === m - 1) ? 1 : 0
    if (firstEssential < m) {
      requiredCount = requiredTerms(maxes, bound[m - 1]!, threshold, required)
      // Run windows: the window again in stretches bounded by the essential terms' runs (16
      // postings) from the skip data, so that the runs of a stretch that cannot beat the
      // threshold are passed over undecoded. A term whose next posting lies past a stretch adds nothing.
      let runLo = lo
      runs: while (runLo <= hi) {
        let runHi = hi
        for (let k = firstEssential; k < m; k++) {
          const cursor = cursors[order[k]!]!
          // A window may span several blocks of a term that was not a lead: its shallow pointer
          // moves to the stretch's first (none: the term has no posting left).
          if (cursor.doc > hi || !cursor.shallowTo(Math.max(runLo, cursor.doc))) continue
          cursor.runTo(Math.max(runLo, cursor.doc))
          const end = cursor.runEnd()
          if (end < runHi) runHi = end
        }
        // stretch[k]: the most the k + 1 weakest terms can add in this stretch, by the maxima of
        // the runs each term has there (a non-essential term's runs may be shorter than the stretch).
        let sum = 0
        for (let k = 0; k < m; k++) {
          const cursor = cursors[order[k]!]!
          if (cursor.doc <= runHi) sum += k < firstEssential ? cursor.runsMaxScore(Math.max(runLo, cursor.doc), runHi) : cursor.runMaxScore()
          stretch[k] = sum
        }
        // The terms a document of this stretch must hold to beat the threshold: they produce the candidates.
        let essential = firstEssential
        while (essential < m && stretch[essential]! <= threshold) essential++
        if (essential === m) {
          runLo = runHi + 1
          continue
        }
        for (let k = essential; k < m; k++) cursors[order[k]!]!.advance(runLo)
        for (;;) {
          let doc = endOfPostings
          for (let k = essential; k < m; k++) {
            const d = cursors[order[k]!]!.doc
            if (d < doc) doc = d
          }
          if (doc > runHi) break
          // A required term whose cursor is already past doc is missing from doc and from every
          // document before its cursor: jump there (within the window) without scoring anything.
          let past = doc
          for (let r = 0; r < requiredCount; r++) {
            const d = cursors[required[r]!]!.doc
            if (d > past) past = d
          }
          if (past > doc) {
            const target = past > hi ? hi + 1 : past
            for (let k = essential; k < m; k++) cursors[order[k]!]!.advance(target)
            continue
          }
          if (skipTo !== undefined) {
            const next = skipTo(doc)
            if (next !== doc) {
              for (let k = essential; k < m; k++) cursors[order[k]!]!.advance(next)
              continue
            }
          }
          if (filter !== undefined && !filter(doc)) {
            for (let k = essential; k < m; k++) if (cursors[order[k]!]!.doc === doc) cursors[order[k]!]!.next()
            continue
          }
          // A loop, not fill(): for a handful of terms the builtin's call cost a tenth of ranking.
          for (let i = 0; i < m; i++) contributions[i] = 0
          let score = 0
          for (let k = essential; k < m; k++) {
            const i = order[k]!
            const cursor = cursors[i]!
            if (cursor.doc === doc) {
              const s = cursor.score()
              contributions[i] = s
              score += s
              cursor.next()
            }
          }
          let pruned = false
          for (let k = essential - 1; k >= 0; k--) {
            if (score + stretch[k]! <= threshold) {
              pruned = true
              break
            }
            const i = order[k]!
            const cursor = cursors[i]!
            cursor.advance(doc)
            if (cursor.doc === doc) {
              const s = cursor.score()
              contributions[i] = s
              score += s
            }
          }
          if (pruned) continue
          score = 0
          for (let i = 0; i < m; i++) score += contributions[i]!
          // Below the k-th score (or the primed bound under it) a document cannot enter: tested here,
          // not only in offer, because a double passed to a call is boxed (16 bytes per candidate).
          if (score < threshold) continue
          if (!heap.offer(doc, score) || !heap.full) continue
          threshold = Math.max(threshold, heap.threshold)
          while (firstEssential < m && bound[firstEssential]! <= threshold) firstEssential++
          if (firstEssential === m) break runs
          requiredCount = requiredTerms(maxes, bound[m - 1]!, threshold, required)
          if (essential < firstEssential) essential = firstEssential
          while (essential < m && stretch[essential]! <= threshold) essential++
          if (essential === m) break
        }
        runLo = runHi + 1
      }
    }
    if (hi >= last) return
    lo = hi + 1
  }
}

/** Writes the terms whose absence caps a document at `threshold` (all the others' bounds together) into `out`; returns their count. */
const requiredTerms = (maxes: Float64Array, total: number, threshold: number, out: Int32Array): number => {
  let count = 0
  for (let i = 0; i < maxes.length; i++) if (maxes[i]! > 0 && total - maxes[i]! <= threshold) out[count++] = i
  return count
}

const maxProbedTerms = 4

/**
 * A lower bound of the k-th best score, found before MaxScore starts: the full scores of the
 * documents in the best block of the strongest term (the block with its highest maximum).
 * They are real matching documents, so the final k-th score is at least their k-th; starting
 * from it, MaxScore demotes weak terms and passes over windows from the first document on,
 * instead of only once k documents have been seen (which, with posting lists of hundreds of
 * thousands, is where most of a query's time went). When that block is the term's last and
 * holds fewer than k documents, the block before it is read too (as for "vtk
 * vtksimple3dcirclesstrategy class reference", whose rare word otherwise leaves a threshold too
 * low to pass over the common words' candidates). When the strongest term gives fewer than k
 * results (a rare word), the next strongest terms' best blocks add to them ("vtklsdynareader
 * class reference getrigidbodyarraystatus" is such a query; test/bench/scale.ts at a million passages).
 * Lowered by a part in a billion so that a document scoring exactly that still enters; 0 when
 * fewer than k documents were found. With `cluster`, only each cluster's best score counts:
 * near-duplicates are one result.
 */
const primedThreshold = (
  index: InvertedIndex,
  query: CompiledQuery,
  cursors: ReadonlyArray<PostingCursor>,
  k: number,
  cluster: Int32Array | undefined
): number => {
  const byStrength = Array.from(cursors.keys()).sort((a, b) => cursors[b]!.maxScore - cursors[a]!.maxScore)
  const sample = new ProbeScores(cluster)
  // Each probe opens a cursor per term; past a few rare terms the ranking is quick without a primed threshold.
  for (const term of byStrength.slice(0, maxProbedTerms)) {
    probeBestBlock(index, query, term, k, sample)
    if (sample.count >= k) return sample.kth(k) * (1 - 1e-9)
  }
  return 0
}

/** Scores, into `sample`, the documents of the best skip block of one query term (its index in the query's terms). */
const probeBestBlock = (index: InvertedIndex, query: CompiledQuery, term: number, k: number, sample: ProbeScores): void => {
  const a = index.arrays
  const leadId = query.terms[term]!.termId
  const df = a.termDf[leadId]!
  const first = a.termFirstBlock[leadId]!
  let from = 0
  let to = endOfPostings - 1
  if (first >= 0) {
    const blocks = Math.ceil(df / blockSize)
    let best = 0
    for (let b = 1; b < blocks; b++) if (a.blockMaxTfn[first + b]! > a.blockMaxTfn[first + best]!) best = b
    // Only the last block can be short; its neighbour makes it up.
    const start = best > 0 && best === blocks - 1 && df - best * blockSize < k ? best - 1 : best
    from = start === 0 ? 0 : a.blockLastDoc[first + start - 1]! + 1
    to = a.blockLastDoc[first + best]!
  }
  // Fresh cursors and filter, from the block's first document: the ranking's own move forward only.
  const probes = query.terms.map((t) => new PostingCursor(index, t.termId, t.weight, from))
  try {
    const filter = makeFilter(index, query)
    const skipTo = query.skipTo
    const lead = probes[term]!
    for (; lead.doc <= to; lead.next()) {
      const doc = lead.doc
      if (skipTo !== undefined && skipTo(doc) !== doc) continue
      if (filter !== undefined && !filter(doc)) continue
      let score = 0
      for (let j = 0; j < probes.length; j++) {
        const cursor = probes[j]!
        cursor.advance(doc)
        if (cursor.doc === doc) score += cursor.score()
      }
      sample.add(doc, score)
    }
  } finally {
    closeAll(probes)
  }
}

/**
 * The best score of each cluster (or document, without clusters) probed: a document probed twice,
 * or a copy, counts once. An open-addressing table on typed arrays kept between queries (ranking
 * never runs inside itself): a Map here allocated afresh on every query.
 */
class ProbeScores {
  count = 0
  private readonly cluster: Int32Array | undefined

  constructor(cluster: Int32Array | undefined) {
    this.cluster = cluster
    probeSlots.fill(-1)
  }

  add(doc: number, score: number): void {
    const key = this.cluster === undefined ? doc : this.cluster[doc]!
    const mask = probeSlots.length - 1
    let slot = homeSlot(key)
    for (;;) {
      const entry = probeSlots[slot]!
      if (entry < 0) break
      if (probeKeys[entry] === key) {
        if (score > probeScores[entry]!) probeScores[entry] = score
        return
      }
      slot = (slot + 1) & mask
    }
    // Not reached (see probeCapacity); were it, leaving a document out only lowers the sample's k-th score, still a lower bound.
    if (this.count === probeCapacity) return
    probeSlots[slot] = this.count
    probeKeys[this.count] = key
    probeScores[this.count++] = score
  }

  /** The k-th best score (1 <= k <= count); sorts the scores, so it is the last call. */
  kth(k: number): number {
    // A typed array sorts numerically without a comparator (and without boxing each score).
    return probeScores.subarray(0, this.count).sort()[this.count - k]!
  }
}

// Entries (key, best score) and a table of twice as many slots pointing at them (-1: empty). A
// probe reads one term's best block, or that block and the one before it: 2 * blockSize documents.
const probeCapacity = maxProbedTerms * 2 * blockSize
const probeKeys = new Int32Array(probeCapacity)
const probeScores = new Float64Array(probeCapacity)
const probeSlots = new Int32Array(2 * probeCapacity)

/** Fibonacci hashing: the product's top bits pick the slot (its low bits depend on the key's low bits only). */
const homeSlot = (key: number): number => Math.imul(key, 0x9e3779b1) >>> (Math.clz32(probeSlots.length) + 1)

const conjunctive = (
  index: InvertedIndex,
  cursors: Array<PostingCursor>,
  requiredIds: ReadonlySet<number>,
  phrases: ReadonlyArray<Phrase>,
  heap: TopK,
  filter: Filter,
  skipTo: SkipTo
): void => {
  const byTerm = new Map(cursors.map((c) => [c.termId, c]))
  const required = cursors.filter((c) => requiredIds.has(c.termId)).sort((a, b) => a.df - b.df)
  const optional = cursors.filter((c) => !requiredIds.has(c.termId)).sort((a, b) => b.maxScore - a.maxScore)
  const phraseCursors = phrases.filter((p) => p.termIds.length > 1).map((p) => ({
    cursors: p.termIds.map((id) => byTerm.get(id)!),
    offsets: p.offsets
  }))
  // rest[i]: the most optional terms i.. can add together.
  const rest = new Float64Array(optional.length + 1)
  for (let i = optional.length - 1; i >= 0; i--) rest[i] = rest[i + 1]! + optional[i]!.maxScore
  const matcher = new PhraseMatcher(index)
  const lead = required[0]!
  outer: while (lead.doc !== endOfPostings) {
    const doc = lead.doc
    if (skipTo !== undefined) {
      const next = skipTo(doc)
      if (next !== doc) {
        lead.advance(next)
        continue
      }
    }
    for (let r = 1; r < required.length; r++) {
      const cursor = required[r]!
      cursor.advance(doc)
      if (cursor.doc !== doc) {
        lead.advance(cursor.doc)
        continue outer
      }
    }
    if (filter !== undefined && !filter(doc)) {
      lead.next()
      continue
    }
    let score = 0
    for (const cursor of required) score += cursor.score()
    const threshold = heap.threshold
    if (heap.full && score + rest[0]! <= threshold) {
      lead.next()
      continue
    }
    for (const phrase of phraseCursors) {
      if (!matcher.matches(phrase.cursors, phrase.offsets)) {
        lead.next()
        continue outer
      }
    }
    let pruned = false
    for (let i = 0; i < optional.length; i++) {
      if (heap.full && score + rest[i]! <= threshold) {
        pruned = true
        break
      }
      const cursor = optional[i]!
      cursor.advance(doc)
      if (cursor.doc === doc) score += cursor.score()
    }
    if (!pruned) heap.offer(doc, score)
    lead.next()
  }
}

/** Checks, for cursors all positioned on one document, whether their terms form the phrase in some field. */
class PhraseMatcher {
  private readonly index: InvertedIndex
  private scratch: Array<Int32Array> = []

  constructor(index: InvertedIndex) {
    this.index = index
  }

  matches(cursors: ReadonlyArray<PostingCursor>, offsets: ReadonlyArray<number>): boolean {
    const fields = this.index.meta.fields
    while (this.scratch.length < cursors.length) this.scratch.push(new Int32Array(16))
    const counts = new Int32Array(cursors.length)
    for (let f = 0; f < fields.length; f++) {
      if (!fields[f]!.positions) continue
      let anchor = -1
      let present = true
      for (let j = 0; j < cursors.length; j++) {
        const { positions, count } = cursors[j]!.positionsIn(f, this.scratch[j]!)
        this.scratch[j] = positions
        counts[j] = count
        if (count === 0) {
          present = false
          break
        }
        if (anchor < 0 || count < counts[anchor]!) anchor = j
      }
      if (!present) continue
      const anchorPositions = this.scratch[anchor]!
      for (let a = 0; a < counts[anchor]!; a++) {
        const start = anchorPositions[a]! - offsets[anchor]!
        let all = true
        for (let j = 0; j < cursors.length && all; j++) {
          if (j !== anchor) all = contains(this.scratch[j]!, counts[j]!, start + offsets[j]!)
        }
        if (all) return true
      }
    }
    return false
  }
}

const contains = (sorted: Int32Array, count: number, value: number): boolean => {
  let lo = 0
  let hi = count - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const v = sorted[mid]!
    if (v === value) return true
    if (v < value) lo = mid + 1
    else hi = mid - 1
  }
  return false
}

/**
 * Term-proximity re-ranking of the best `depth` documents (BM25TP, Rasolofo & Savoy 2003):
 * every pair of different query terms at most 5 positions apart in the document's main text
 * adds 1/distance² to both terms' proximity frequency, which is saturated like a BM25 term
 * frequency and weighted by idf. Documents below `depth` keep their BM25F order, so the
 * first results are the same whatever number of results is asked for. Exact forms pair only with
 * exact forms: stems and forms are read as two fields of one text.
 */
// 15, the smallest depth tried (10, 12, 15, 20) that keeps nDCG@10 at or above 20's on both
// test collections (test/bench/relevance.ts): ranking 15 deep prunes with a higher k-th score,
// so more queries/s than 20 (test/bench/search.ts). 10 and 12 lost nDCG on both.
export const proximityDepth = 15
const proximityWindow = 5
const maxOccurrences = 4096
/** Reused by every re-ranking (it runs to the end once started, never two at once): 32 KB is not worth allocating per query. */
const occurrenceScratch = new Float64Array(maxOccurrences)
/** An occurrence is position * occurrenceTerms + term: one number sorts by position, then term. */
const occurrenceTerms = 256
/** A document's query-term positions, term after term (term j's from termStarts[j] to termEnds[j]), before the merge. */
const positionScratch = new Int32Array(maxOccurrences)
const termStarts = new Int32Array(occurrenceTerms)
const termEnds = new Int32Array(occurrenceTerms)
/** Past this many terms a sort of the occurrences is quicker than a merge that looks at every term's next one. */
const maxMergedTerms = 8

/**
 * A document's occurrences as position * occurrenceTerms + term, ascending (ties: the smaller term first):
 * exactly what sorting them gives. Each term's positions come sorted, so for a query's few terms
 * a merge is cheaper than a typed array's sort, which the heaviest re-rankings feel
 * (test/bench/search.ts, Periscope with and without proximity). Term j's positions are
 * positions[starts[j], ends[j]); `starts` is used up. Returns how many were written to `out`.
 */
export const mergeOccurrences = (positions: Int32Array, starts: Int32Array, ends: Int32Array, terms: number, out: Float64Array): number => {
  let count = 0
  for (;;) {
    let best = -1
    let bestPosition = 0
    for (let j = 0; j < terms; j++) {
      const at = starts[j]!
      if (at < ends[j]! && (best < 0 || positions[at]! < bestPosition)) {
        best = j
        bestPosition = positions[at]!
      }
    }
    if (best < 0) return count
    out[count++] = bestPosition * occurrenceTerms + best
    starts[best]!++
  }
}

export const rerankByProximity = (
  index: InvertedIndex,
  query: CompiledQuery,
  ranked: RankedDocuments,
  weight: number,
  /** Score a lone document too: its score is compared with another index's (SegmentedIndex). */
  lone = false
): RankedDocuments => {
  const depth = Math.min(proximityDepth, ranked.docs.length)
  const terms = query.terms
  const field = index.meta.fields.findIndex((f) => f.positions)
  const forms = Uint8Array.from(terms, (t) => (t.exactForm === true ? 1 : 0))
  // Pairs are of two stems or two forms: a word and its own form make none.
  const formCount = forms.reduce((n, f) => n + f, 0)
  if (weight <= 0 || (terms.length - formCount < 2 && formCount < 2) || depth < (lone ? 1 : 2) || field < 0) return ranked
  const fieldWeight = index.meta.fields[field]!.weight
  const k1 = index.meta.k1
  const byDoc = Array.from({ length: depth }, (_, i) => i).sort((a, b) => ranked.docs[a]! - ranked.docs[b]!)
  const cursors = terms.map((t) => new PostingCursor(index, t.termId, 1, ranked.docs[byDoc[0]!]!))
  const idf = terms.map((t) => index.idf(t.termId))
  const scores = Float64Array.from(ranked.scores)
  let scratch: Int32Array = new Int32Array(16)
  const occurrences = occurrenceScratch
  const accumulated = new Float64Array(terms.length)
  const termBits = occurrenceTerms
  // Which terms each document holds in this field comes for free here; snippets use it.
  const masks = depth === ranked.docs.length && terms.length <= maxMaskedTerms ? new Uint32Array(depth) : undefined
  try {
    for (const i of byDoc) {
      const doc = ranked.docs[i]!
      let count = 0
      const m = Math.min(cursors.length, termBits)
      for (let j = 0; j < m; j++) {
        const cursor = cursors[j]!
        termStarts[j] = termEnds[j] = count
        cursor.advance(doc)
        if (cursor.doc !== doc) continue
        if (masks !== undefined && cursor.tf(field) > 0) masks[i]! |= 1 << j
        const { positions, count: n } = cursor.positionsIn(field, scratch)
        scratch = positions
        for (let p = 0; p < n && count < maxOccurrences; p++) positionScratch[count++] = positions[p]!
        termEnds[j] = count
      }
      if (count < 2) continue
      let sorted: Float64Array = occurrences
      if (m <= maxMergedTerms) mergeOccurrences(positionScratch, termStarts, termEnds, m, occurrences)
      else {
        for (let j = 0; j < m; j++) for (let p = termStarts[j]!; p < termEnds[j]!; p++) occurrences[p] = positionScratch[p]! * termBits + j
        sorted = occurrences.subarray(0, count).sort()
      }
      for (let t = 0; t < accumulated.length; t++) accumulated[t] = 0
      for (let a = 0; a < count; a++) {
        const positionA = Math.floor(sorted[a]! / termBits)
        const termA = sorted[a]! - positionA * termBits
        for (let b = a + 1; b < count; b++) {
          const positionB = Math.floor(sorted[b]! / termBits)
          const distance = positionB - positionA
          if (distance > proximityWindow) break
          const termB = sorted[b]! - positionB * termBits
          // Stems pair with stems and exact forms with forms, as two fields would: never a word with another's form.
          if (termA === termB || distance === 0 || forms[termA] !== forms[termB]) continue
          const w = 1 / (distance * distance)
          accumulated[termA]! += w
          accumulated[termB]! += w
        }
      }
      // K = k1 * (1 - b + b * length / average), recovered from the stored field norm.
      const norm = index.norm(doc, field)
      const K = k1 * (norm > 0 ? fieldWeight / norm : 1)
      let proximity = 0
      for (let j = 0; j < terms.length; j++) {
        const acc = accumulated[j]!
        if (acc > 0) proximity += (idf[j]! * (k1 + 1) * acc) / (K + acc)
      }
      scores[i] = scores[i]! + weight * proximity
    }
  } finally {
    closeAll(cursors)
  }
  const order = Array.from({ length: depth }, (_, i) => i)
  order.sort((a, b) => scores[b]! - scores[a]! || ranked.docs[a]! - ranked.docs[b]!)
  const docs = Int32Array.from(ranked.docs)
  const out = Float64Array.from(ranked.scores)
  const reordered = masks === undefined ? undefined : new Uint32Array(depth)
  order.forEach((from, to) => {
    docs[to] = ranked.docs[from]!
    out[to] = scores[from]!
    if (reordered !== undefined) reordered[to] = masks![from]!
  })
  return { docs, scores: out, complete: ranked.complete, termsIn: reordered === undefined ? undefined : { field, masks: reordered } }
}
