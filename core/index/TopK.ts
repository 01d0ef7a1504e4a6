/**
 * The k best (document, score) pairs seen so far, as a binary min-heap whose root is the
 * worst kept entry. Ties go to the smaller document id, so rankings are deterministic.
 */
export class TopK {
  readonly k: number
  size = 0
  private readonly docs: Int32Array
  private readonly scores: Float64Array

  constructor(k: number) {
    this.k = k
    this.docs = new Int32Array(k)
    this.scores = new Float64Array(k)
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
    if (this.size < this.k) {
      let i = this.size++
      this.docs[i] = doc
      this.scores[i] = score
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (!this.worse(i, parent)) break
        this.swap(i, parent)
        i = parent
      }
      return true
    }
    const rootScore = this.scores[0]!
    if (score < rootScore || (score === rootScore && doc > this.docs[0]!)) return false
    this.docs[0] = doc
    this.scores[0] = score
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= this.size) break
      const right = left + 1
      const child = right < this.size && this.worse(right, left) ? right : left
      if (!this.worse(child, i)) break
      this.swap(i, child)
      i = child
    }
    return true
  }

  /** The kept pairs, best first (score descending, then document id ascending). */
  sorted(): { readonly docs: Int32Array; readonly scores: Float64Array } {
    const order = Array.from({ length: this.size }, (_, i) => i)
    order.sort((a, b) => this.scores[b]! - this.scores[a]! || this.docs[a]! - this.docs[b]!)
    const docs = new Int32Array(this.size)
    const scores = new Float64Array(this.size)
    order.forEach((from, to) => {
      docs[to] = this.docs[from]!
      scores[to] = this.scores[from]!
    })
    return { docs, scores }
  }

  private worse(a: number, b: number): boolean {
    const sa = this.scores[a]!
    const sb = this.scores[b]!
    return sa < sb || (sa === sb && this.docs[a]! > this.docs[b]!)
  }

  private swap(a: number, b: number): void {
    const d = this.docs[a]!
    this.docs[a] = this.docs[b]!
    this.docs[b] = d
    const s = this.scores[a]!
    this.scores[a] = this.scores[b]!
    this.scores[b] = s
  }
}
