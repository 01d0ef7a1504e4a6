/**
 * TopK against a plain sort: the k best (document, score) pairs, best first, ties to the smaller
 * document id, whatever order they are offered in and however many tie.
 */
import { describe, expect, it } from "vitest"
import { TopK } from "../../core/index/TopK.ts"
import { seeded } from "./support.ts"

const reference = (pairs: ReadonlyArray<readonly [number, number]>, k: number) =>
  [...pairs].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k)

describe("TopK", () => {
  it("keeps the k best, best first, ties to the smaller document", () => {
    const random = seeded(7)
    for (const [n, k, distinct] of [[0, 5, 10], [3, 5, 10], [50, 1, 10], [200, 10, 4], [1000, 20, 1000], [1000, 200, 7], [64, 64, 3]] as const) {
      // Few distinct scores make many ties; documents are offered in a random order.
      const docs = Array.from({ length: n }, (_, i) => i).sort(() => random() - 0.5)
      const pairs = docs.map((doc) => [doc, Math.floor(random() * distinct) / 4] as const)
      const heap = new TopK(k)
      for (const [doc, score] of pairs) heap.offer(doc, score)
      const { docs: keptDocs, scores: keptScores } = heap.sorted()
      const expected = reference(pairs, k)
      expect([...keptDocs], `n ${n}, k ${k}`).toEqual(expected.map((p) => p[0]))
      expect([...keptScores], `n ${n}, k ${k}`).toEqual(expected.map((p) => p[1]))
      expect(heap.full).toBe(n >= k)
    }
  })

  it("keeps one document per cluster, the best, when given clusters", () => {
    const random = seeded(11)
    for (const [n, k, distinct, clusters] of [[200, 10, 6, 30], [500, 20, 1000, 8], [64, 5, 3, 64], [300, 15, 50, 400]] as const) {
      const docs = Array.from({ length: n }, (_, i) => i).sort(() => random() - 0.5)
      const cluster = Int32Array.from({ length: n }, () => Math.floor(random() * clusters))
      const pairs = docs.map((doc) => [doc, Math.floor(random() * distinct) / 4] as const)
      const heap = new TopK(k, cluster)
      for (const [doc, score] of pairs) heap.offer(doc, score)
      const seen = new Set<number>()
      const expected = reference(pairs, n).filter(([doc]) => !seen.has(cluster[doc]!) && seen.add(cluster[doc]!)).slice(0, k)
      const kept = heap.sorted()
      expect([...kept.docs], `n ${n}, k ${k}`).toEqual(expected.map((p) => p[0]))
      expect([...kept.scores], `n ${n}, k ${k}`).toEqual(expected.map((p) => p[1]))
      expect(heap.full).toBe(expected.length === k)
    }
  })

  it("reports the score to beat once full, and refuses what does not beat it", () => {
    const heap = new TopK(2)
    expect(heap.threshold).toBe(0)
    heap.offer(5, 1)
    heap.offer(3, 2)
    expect(heap.threshold).toBe(1)
    expect(heap.offer(9, 1)).toBe(false) // same score, larger document: ranks below
    expect(heap.offer(4, 1)).toBe(true) // same score, smaller document: ranks above
    expect([...heap.sorted().docs]).toEqual([3, 4])
  })
})
