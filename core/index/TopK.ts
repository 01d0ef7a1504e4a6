/**
 * The k best (document, score) pairs seen so far, as a binary min-heap whose root is the
 * worst kept entry. Ties go to the smaller document id, so rankings are deterministic.
 *
 * With `cluster` (document -> its near-duplicate cluster) it keeps at most one document per
 * cluster, the best, so the k kept are the k best clusters. Collapsing while ranking keeps the
 * threshold that of k distinct results: collapsing afterwards had to rank again, deeper, when
 * duplicates crowded the top (at 1M passages, queries over boilerplate ran twice, at 60 deep).
 */
export class TopK {
  readonly k: number
  size = 0
  private readonly docs: Int32Array
  private readonly scores: Float64Array
  private readonly cluster: Int32Array | undefined

  constructor(k: number, cluster?: Int32Array) {
    this.k = k
    this.docs = new Int32Array(k)
    this.scores = new Float64Array(k)
    this.cluster = cluster
  }

  get full(): boolean {
    return this.size === this.k
  }

  /** Score a document must beat to enter once the heap is full. */
  get threshold(): number {
    return this.size === this.k ? this.scores[0]! : 0
  }

  /** Keeps the pair if it ranks among the k best; returns whether it was kept. */
  offer(doc: number, score: number): boolean {
    if (this.k === 0) return false
    if (this.size === this.k) {
      const rootScore = this.scores[0]!
      if (score < rootScore || (score === rootScore && doc > this.docs[0]!)) return false
    }
    if (this.cluster !== undefined) {
      // Only documents that would enter get here; a scan of k entries is cheaper than a map kept in step with the heap.
      const c = this.cluster[doc]!
      for (let i = 0; i < this.size; i++) {
        if (this.cluster[this.docs[i]!] !== c) continue
        const kept = this.scores[i]!
        if (score < kept || (score === kept && doc > this.docs[i]!)) return false
        // A better member of a kept cluster takes its place: a higher score moves down the min-heap.
        this.docs[i] = doc
        this.scores[i] = score
        siftDown(this.docs, this.scores, i, this.size)
        return true
      }
    }
    if (this.size < this.k) {
      let i = this.size++
      this.docs[i] = doc
      this.scores[i] = score
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (!worsePair(this.docs, this.scores, i, parent)) break
        swapPair(this.docs, this.scores, i, parent)
        i = parent
      }
      return true
    }
    this.docs[0] = doc
    this.scores[0] = score
    siftDown(this.docs, this.scores, 0, this.size)
    return true
  }

  /** The kept pairs, best first (score descending, then document id ascending). */
  sorted(): { readonly docs: Int32Array; readonly scores: Float64Array } {
    // Heapsort on a copy of the heap: the worst entry (the root) goes to the end, again and again.
    const docs = this.docs.slice(0, this.size)
    const scores = this.scores.slice(0, this.size)
    for (let end = this.size - 1; end > 0; end--) {
      swapPair(docs, scores, 0, end)
      siftDown(docs, scores, 0, end)
    }
    return { docs, scores }
  }
}

/** True when entry a ranks below entry b: a lower score, or the same score and a larger document id. */
const worsePair = (docs: Int32Array, scores: Float64Array, a: number, b: number): boolean => {
  const sa = scores[a]!
  const sb = scores[b]!
  return sa < sb || (sa === sb && docs[a]! > docs[b]!)
}

const swapPair = (docs: Int32Array, scores: Float64Array, a: number, b: number): void => {
  const d = docs[a]!
  docs[a] = docs[b]!
  docs[b] = d
  const s = scores[a]!
  scores[a] = scores[b]!
  scores[b] = s
}

/** Restores the min-heap (worst at the root) below `i` within the first `size` entries. */
const siftDown = (docs: Int32Array, scores: Float64Array, i: number, size: number): void => {
  for (;;) {
    const left = 2 * i + 1
    if (left >= size) return
    const right = left + 1
    const child = right < size && worsePair(docs, scores, right, left) ? right : left
    if (!worsePair(docs, scores, child, i)) return
    swapPair(docs, scores, i, child)
    i = child
  }
}
