/**
 * Passage vectors as the snapshot carries them: passages cut from pages, quantised vectors,
 * exact and partitioned nearest-page search, the snapshot round trip (decoded and opened in
 * place, the checksum covering the vectors), the model and dimension check, and fusion.
 */
import { describe, expect, it } from "vitest"
import { defaultHybridSettings, hybridSearch } from "../../core/index/HybridRank.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { indexWithVectors, passagesToEmbed, planEmbedding } from "../../core/index/IndexVectors.ts"
import { pagePassages } from "../../core/index/Passages.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { decodeSnapshot, encodeSnapshot, openSnapshot, SnapshotError } from "../../core/index/Snapshot.ts"
import { buildPassageVectors, exactLimit, nearestPages } from "../../core/index/VectorSearch.ts"
import { normalized, quantize, vectorsMismatch } from "../../core/index/Vectors.ts"
import { standInVector } from "./support/modelServerStandIn.ts"

/** A deterministic generator for test data. */
const seeded = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 4294967296
}

const planOptions = { model: "stand-in", passageChars: 1000, maxPassages: 8, documentPrefix: "" }

/** Every passage embedded by the stand-in's function, in process. */
const embedAll = (index: SearchIndex, dimensions = 64, concepts: Record<string, string> = {}) => {
  const plan = planEmbedding(index, planOptions)
  const embedded = new Map(passagesToEmbed(plan).map((i) => [plan.texts[i]!, Float32Array.from(standInVector(plan.texts[i]!, dimensions, concepts))]))
  return indexWithVectors(index, plan, embedded)
}

const pages = [
  { url: "https://cars.example/", title: "Cars", text: "A car has four wheels and an engine. Drivers park the car in a garage." },
  { url: "https://fruit.example/", title: "Fruit", text: "Apples and pears grow on trees in the orchard." },
  { url: "https://boats.example/", title: "Boats", text: "A boat floats on water; sailors steer it with a rudder." }
]

describe("passages", () => {
  it("cuts long text at paragraph or sentence ends, each passage with the title, at most maxPassages", () => {
    const text = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} says something about topic ${i}.`).join(" ") + "\n\nA last paragraph."
    const passages = pagePassages("Guide", text, { passageChars: 300, maxPassages: 4 })
    expect(passages).toHaveLength(4)
    for (const p of passages) {
      expect(p.text.startsWith("Guide\n")).toBe(true)
      expect(p.end - p.start).toBeLessThanOrEqual(300)
      expect(text.slice(p.start, p.end).trim().endsWith(".")).toBe(true)
    }
    expect(passages[1]!.start).toBe(passages[0]!.end + (text[passages[0]!.end] === " " ? 1 : 0))
  })

  it("gives a page without text its title as one passage, and a page with neither none", () => {
    expect(pagePassages("Only a title", "")).toEqual([{ text: "Only a title", start: 0, end: 0 }])
    expect(pagePassages("", "   ")).toEqual([])
  })
})

describe("quantised vectors", () => {
  it("keep the cosine of the float vectors within a hundredth", () => {
    const next = seeded(7)
    for (let trial = 0; trial < 50; trial++) {
      const a = Array.from({ length: 384 }, () => next() - 0.5)
      const b = Array.from({ length: 384 }, () => next() - 0.5)
      const out = new Int8Array(384)
      const scale = quantize(a, out, 0)
      const qb = normalized(b)
      const na = normalized(a)
      let exact = 0
      let approx = 0
      for (let i = 0; i < 384; i++) {
        exact += na[i]! * qb[i]!
        approx += out[i]! * scale * qb[i]!
      }
      expect(Math.abs(exact - approx)).toBeLessThan(0.01)
    }
  })
})

describe("nearest pages", () => {
  /** Clustered vectors: `clusters` directions with noise, one passage per page. */
  const clustered = (count: number, dimensions: number, clusters: number) => {
    const next = seeded(count)
    const centres = Array.from({ length: clusters }, () => Array.from({ length: dimensions }, () => next() - 0.5))
    const values = new Int8Array(count * dimensions)
    const scales = new Float32Array(count)
    const floats: Array<Array<number>> = []
    for (let i = 0; i < count; i++) {
      const centre = centres[i % clusters]!
      const v = centre.map((x) => x + (next() - 0.5) * 0.6)
      floats.push(v)
      scales[i] = quantize(v, values, i * dimensions)
    }
    const vectors = buildPassageVectors({
      meta: { model: "m", dimensions, passageChars: 1000, maxPassages: 8, documentPrefix: "" },
      values,
      scales,
      page: Int32Array.from({ length: count }, (_, i) => i),
      spans: new Uint32Array(count * 2),
      hashes: new Uint32Array(count * 2)
    })
    return { vectors, floats, next }
  }

  it("scores every vector up to the exact limit, and finds the page a query is nearest to", () => {
    const { vectors, floats } = clustered(500, 32, 10)
    expect(vectors.meta.partitions).toBe(0)
    const found = nearestPages(vectors, normalized(floats[123]!), 5)
    expect(found.docs[0]).toBe(123)
    expect(found.scanned).toBe(500)
    expect(found.scores[0]).toBeGreaterThan(0.99)
  })

  it("beyond the limit probes a few partitions and finds at least 90% of the exact ten nearest", () => {
    const count = exactLimit * 3
    const { vectors, floats, next } = clustered(count, 48, 40)
    expect(vectors.meta.partitions).toBeGreaterThan(0)
    let found = 0
    let scanned = 0
    const trials = 20
    for (let t = 0; t < trials; t++) {
      const query = normalized(floats[Math.floor(next() * count)]!.map((x) => x + (next() - 0.5) * 0.2))
      const approximate = nearestPages(vectors, query, 10)
      const full = nearestPages(vectors, query, 10, { probe: vectors.meta.partitions })
      expect(full.scanned).toBe(count)
      const truth = new Set(full.docs)
      found += Array.from(approximate.docs).filter((d) => truth.has(d)).length
      scanned += approximate.scanned
    }
    expect(found / (trials * 10)).toBeGreaterThanOrEqual(0.9)
    expect(scanned / trials).toBeLessThan(count / 2)
  })

  it("keeps one page per near-duplicate cluster and honours accept", () => {
    const { vectors, floats } = clustered(100, 16, 5)
    const cluster = Int32Array.from({ length: 100 }, (_, i) => (i < 50 ? 0 : i))
    const found = nearestPages(vectors, normalized(floats[10]!), 10, { cluster })
    expect(Array.from(found.docs).filter((d) => d < 50)).toHaveLength(1)
    const odd = nearestPages(vectors, normalized(floats[10]!), 5, { accept: (page) => page % 2 === 1 })
    expect(Array.from(odd.docs).every((d) => d % 2 === 1)).toBe(true)
  })
})

describe("vectors in the snapshot", () => {
  const base = () => {
    const builder = new IndexBuilder()
    builder.add(pages)
    return builder.build()
  }

  it("round-trip through encode/decode and an opened file, the same bytes, the checksum covering them", () => {
    const index = embedAll(base())
    const bytes = encodeSnapshot(index)
    const decoded = decodeSnapshot(bytes).parts.vectors!
    const original = index.parts.vectors!
    expect(decoded.meta).toEqual(original.meta)
    expect(Array.from(decoded.arrays.values)).toEqual(Array.from(original.arrays.values))
    expect(Array.from(decoded.arrays.hashes)).toEqual(Array.from(original.arrays.hashes))
    const opened = openSnapshot({ size: bytes.length, readInto: (target, offset, position, length) => target.set(bytes.subarray(position, position + length), offset) })
    expect(Array.from(opened.parts.vectors!.arrays.scales)).toEqual(Array.from(original.arrays.scales))
    // A flipped byte in the vectors fails the checksum.
    const at = bytes.length - 8
    const damaged = bytes.slice()
    damaged[at] = damaged[at]! ^ 0xff
    expect(() => decodeSnapshot(damaged)).toThrow(SnapshotError)
  })

  it("leaves a snapshot without vectors as it was", () => {
    const index = base()
    expect(encodeSnapshot(index)).toEqual(encodeSnapshot(decodeSnapshot(encodeSnapshot(index))))
    expect(decodeSnapshot(encodeSnapshot(index)).parts.vectors).toBeUndefined()
  })

  it("says why vectors of another model or dimension cannot serve", () => {
    const vectors = embedAll(base()).parts.vectors!
    expect(vectorsMismatch(vectors, { model: "stand-in" })).toBeUndefined()
    expect(vectorsMismatch(vectors, { model: "stand-in", dimensions: 64 })).toBeUndefined()
    expect(vectorsMismatch(vectors, { model: "other-model" })?.message).toMatch(/made by the model "stand-in", but search.embeddings.model is "other-model"/)
    expect(vectorsMismatch(vectors, { model: "stand-in", dimensions: 768 })?.message).toMatch(/have 64 dimensions, but search.embeddings.dimensions is 768/)
  })
})

describe("fusion", () => {
  const concepts = { automobile: "car", car: "car", vehicle: "car" }
  const index = (() => {
    const builder = new IndexBuilder()
    builder.add(pages)
    return embedAll(builder.build(), 64, concepts)
  })()
  const vectorOf = (text: string) => standInVector(text, 64, concepts)

  it("finds by its vector a page BM25 cannot (no shared word), with the page's opening as snippet", () => {
    expect(index.search("automobile", 5).hits).toEqual([])
    const answer = hybridSearch(index, "automobile", vectorOf("automobile"), 3)
    expect(answer.lexicalOnly).toBeUndefined()
    expect(answer.hits[0]!.link).toBe("https://cars.example/")
    expect(answer.hits[0]!.snippet).toMatch(/^A car has four wheels/)
    expect(answer.results[0]).toMatchObject({ lexicalRank: 0, vectorRank: 1 })
  })

  it("ranks a page both lists hold first (rrf and weighted), and BM25 alone for quoted phrases", () => {
    for (const fusion of ["rrf", "weighted"] as const) {
      const answer = hybridSearch(index, "boat water", vectorOf("boat water"), 3, { ...defaultHybridSettings, fusion })
      expect(answer.hits[0]!.link).toBe("https://boats.example/")
      expect(answer.results[0]).toMatchObject({ lexicalRank: 1, vectorRank: 1 })
    }
    const quoted = hybridSearch(index, "\"four wheels\"", vectorOf("four wheels"), 3)
    expect(quoted.lexicalOnly).toMatch(/quoted phrases/)
    expect(quoted.hits.map((h) => h.link)).toEqual(index.search("\"four wheels\"", 3).hits.map((h) => h.link))
  })

  it("without a query vector answers exactly as BM25 does", () => {
    const plain = index.search("car garage", 3)
    const answer = hybridSearch(index, "car garage", undefined, 3)
    expect(answer.hits).toEqual(plain.hits)
  })
})
