import { describe, expect, it } from "vitest"
import { maxFieldLength } from "../../core/index/InvertedIndex.ts"
import { decodeSnapshot, encodeSnapshot, SnapshotError, snapshotFormatVersion } from "../../core/index/Snapshot.ts"
import { buildIndex, plainBm25 } from "./support.ts"

/** Lucene's BM25 of one term, written out: what the engine must give for any field length. */
const bm25 = (tf: number, length: number, average: number, df: number, n: number, k1 = 0.9, b = 0.4) =>
  Math.log(1 + (n - df + 0.5) / (df + 0.5)) * ((k1 + 1) * tf) / (tf + k1 * (1 - b + (b * length) / average))

describe("field lengths", () => {
  // Short fields are normalised through a table, long ones by the formula, the longest clamped.
  const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i % 997}`).join(" ")
  const lengths = [3, 255, 256, 300, 5_000, 70_000]
  const docs = lengths.map((n, i) => ({ url: `https://lengths.example/${i}`, title: "", text: `walrus ${words(n - 1, "w")}` }))
  const index = buildIndex(docs, plainBm25)

  it("score exactly as BM25 on the stored length, short or long (lengths over 65,535 count as 65,535)", () => {
    const stored = lengths.map((n) => Math.min(n, maxFieldLength))
    const average = lengths.reduce((a, n) => a + n, 0) / lengths.length
    const ranked = index.rank("walrus", 10, { collapse: false })
    expect(ranked).toHaveLength(lengths.length)
    for (const hit of ranked) {
      const i = Number(hit.url.slice(hit.url.lastIndexOf("/") + 1))
      expect(hit.score, `length ${lengths[i]}`).toBeCloseTo(bm25(1, stored[i]!, average, lengths.length, lengths.length), 12)
    }
    // Shorter fields rank first for the same term frequency.
    expect(ranked.map((h) => h.url)).toEqual(lengths.map((_, i) => `https://lengths.example/${i}`))
  })

  it("survive a snapshot", () => {
    const back = decodeSnapshot(encodeSnapshot(index))
    expect(back.rank("walrus", 10, { collapse: false })).toEqual(index.rank("walrus", 10, { collapse: false }))
  })
})

describe("snapshot format versions", () => {
  it("refuse a snapshot of an older format with a message saying to rebuild it", () => {
    const bytes = encodeSnapshot(buildIndex([{ url: "https://v.example/", title: "t", text: "some text here" }]))
    const old = bytes.slice()
    new DataView(old.buffer).setUint32(8, 1, true)
    expect(snapshotFormatVersion).toBeGreaterThan(1)
    let error: unknown
    try {
      decodeSnapshot(old)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(SnapshotError)
    expect((error as SnapshotError).reason).toBe("unsupported-version")
    expect((error as SnapshotError).message).toBe(
      `snapshot: format version 1; this engine reads version ${snapshotFormatVersion} only: build the snapshot again from its documents`
    )
  })
})
