/**
 * Nearest pages to a query vector over a snapshot's passage vectors (Vectors.ts): exact up to
 * `exactLimit` passages, an inverted-file partition beyond (IVF, as FAISS's IndexIVFFlat): the
 * vectors are grouped around centres found by k-means when the snapshot is built, and a search
 * scores the centres, then only the vectors of the `probe` nearest groups. A page's score is
 * its best passage's cosine similarity.
 *
 * Plain typed-array loops, no library: the vector libraries that run on Node, Deno and in a
 * browser (hnswlib-wasm, edgevec) keep float32 copies in their own memory and their own file
 * formats, so a snapshot would be loaded twice and built by them at every start; here the
 * int8 vectors are read in place from the snapshot. test/bench/hybrid.ts times both ways.
 */
import { TopK } from "./TopK.ts"
import { PassageVectors, type VectorsMeta } from "./Vectors.ts"

/** Up to this many passages every vector is scored (no partition is built). */
export const exactLimit = 4096

/** Vectors a search aims to score beyond the exact limit (the probed groups' together). */
export const probeTarget = 2048

/** The k-means rounds a build runs, and the sample it runs them on (per centre). */
const kmeansRounds = 6
const samplePerCentre = 40

/** Passage vectors before they are laid out for search: in passage order, each with its page, span and hash. */
export interface VectorInput {
  readonly meta: Omit<VectorsMeta, "count" | "partitions">
  readonly values: Int8Array
  readonly scales: Float32Array
  readonly page: Int32Array
  readonly spans: Uint32Array
  readonly hashes: Uint32Array
}

/**
 * The query as integers, scaled so that no sum of products with int8 components can leave the
 * int32 range: integer arithmetic over each row's own view scans quicker than float products
 * over the whole array (test/bench/hybrid.ts, the vector search rows).
 */
const integerQuery = (query: Float32Array): { readonly values: Int32Array; readonly scale: number } => {
  let max = 0
  for (let d = 0; d < query.length; d++) max = Math.max(max, Math.abs(query[d]!))
  const scale = max === 0 ? 1 : Math.min(32767, Math.floor(2147483647 / (127 * Math.max(1, query.length)))) / max
  return { values: Int32Array.from(query, (x) => Math.round(x * scale)), scale }
}

/** Dot product of an integer query with an int8 row, in four running sums: quicker than one (test/bench/hybrid.ts). */
const dot = (query: Int32Array, row: Int8Array, dimensions: number): number => {
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  let d = 0
  for (; d + 3 < dimensions; d += 4) {
    s0 = (s0 + query[d]! * row[d]!) | 0
    s1 = (s1 + query[d + 1]! * row[d + 1]!) | 0
    s2 = (s2 + query[d + 2]! * row[d + 2]!) | 0
    s3 = (s3 + query[d + 3]! * row[d + 3]!) | 0
  }
  for (; d < dimensions; d++) s0 = (s0 + query[d]! * row[d]!) | 0
  return (s0 + s1 + s2 + s3) | 0
}

/** A small deterministic generator (mulberry32): the same snapshot bytes from the same vectors. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Index of the centre nearest to row `row` (largest dot product: the vectors have length 1). */
const nearestCentre = (centroids: Float32Array, partitions: number, values: Int8Array, scales: Float32Array, row: number, dimensions: number): number => {
  let best = 0
  let bestScore = -Infinity
  const base = row * dimensions
  for (let c = 0; c < partitions; c++) {
    const cb = c * dimensions
    let sum = 0
    for (let d = 0; d < dimensions; d++) sum += centroids[cb + d]! * values[base + d]!
    if (sum > bestScore) {
      bestScore = sum
      best = c
    }
  }
  return scales[row]! === 0 ? 0 : best
}

/** k-means (spherical: centres normalised) over a sample of the rows; the centres. */
const kmeans = (input: VectorInput, count: number, partitions: number): Float32Array => {
  const { values, scales } = input
  const dimensions = input.meta.dimensions
  const next = random(count * 31 + partitions)
  const sampleSize = Math.min(count, partitions * samplePerCentre)
  // A partial Fisher-Yates shuffle picks the sample; its first rows are the first centres.
  const order = Int32Array.from({ length: count }, (_, i) => i)
  for (let i = 0; i < sampleSize; i++) {
    const j = i + Math.floor(next() * (count - i))
    const t = order[i]!
    order[i] = order[j]!
    order[j] = t
  }
  const centroids = new Float32Array(partitions * dimensions)
  for (let c = 0; c < partitions; c++) {
    const row = order[c]!
    for (let d = 0; d < dimensions; d++) centroids[c * dimensions + d] = values[row * dimensions + d]! * scales[row]!
  }
  const sums = new Float64Array(partitions * dimensions)
  const sizes = new Int32Array(partitions)
  for (let round = 0; round < kmeansRounds; round++) {
    sums.fill(0)
    sizes.fill(0)
    for (let i = 0; i < sampleSize; i++) {
      const row = order[i]!
      const c = nearestCentre(centroids, partitions, values, scales, row, dimensions)
      sizes[c]!++
      const scale = scales[row]!
      for (let d = 0; d < dimensions; d++) sums[c * dimensions + d]! += values[row * dimensions + d]! * scale
    }
    for (let c = 0; c < partitions; c++) {
      // An empty centre keeps its place (a sample row), rather than collapsing onto another.
      if (sizes[c] === 0) continue
      let norm = 0
      for (let d = 0; d < dimensions; d++) norm += sums[c * dimensions + d]! ** 2
      const length = Math.sqrt(norm) || 1
      for (let d = 0; d < dimensions; d++) centroids[c * dimensions + d] = sums[c * dimensions + d]! / length
    }
  }
  return centroids
}

/** Partitions for `count` passages: none up to the exact limit, about the square root beyond. */
export const partitionsFor = (count: number): number => (count <= exactLimit ? 0 : Math.min(65_536, Math.round(Math.sqrt(count))))

/** The vectors laid out for search: exact below the limit, grouped by their nearest k-means centre above it. */
export const buildPassageVectors = (input: VectorInput): PassageVectors => {
  const count = input.scales.length
  const dimensions = input.meta.dimensions
  const partitions = partitionsFor(count)
  if (partitions === 0) {
    return new PassageVectors({ ...input.meta, count, partitions: 0 }, {
      values: input.values,
      scales: input.scales,
      page: input.page,
      spans: input.spans,
      hashes: input.hashes,
      centroids: new Float32Array(0),
      offsets: Uint32Array.of(count)
    })
  }
  const centroids = kmeans(input, count, partitions)
  const group = new Int32Array(count)
  const offsets = new Uint32Array(partitions + 1)
  for (let row = 0; row < count; row++) {
    group[row] = nearestCentre(centroids, partitions, input.values, input.scales, row, dimensions)
    offsets[group[row]! + 1]!++
  }
  for (let c = 0; c < partitions; c++) offsets[c + 1]! += offsets[c]!
  const fill = offsets.slice(0, partitions)
  const values = new Int8Array(count * dimensions)
  const scales = new Float32Array(count)
  const page = new Int32Array(count)
  const spans = new Uint32Array(count * 2)
  const hashes = new Uint32Array(count * 2)
  // Stable: within a group, passages keep their page order.
  for (let row = 0; row < count; row++) {
    const slot = fill[group[row]!]!++
    values.set(input.values.subarray(row * dimensions, (row + 1) * dimensions), slot * dimensions)
    scales[slot] = input.scales[row]!
    page[slot] = input.page[row]!
    spans[2 * slot] = input.spans[2 * row]!
    spans[2 * slot + 1] = input.spans[2 * row + 1]!
    hashes[2 * slot] = input.hashes[2 * row]!
    hashes[2 * slot + 1] = input.hashes[2 * row + 1]!
  }
  return new PassageVectors({ ...input.meta, count, partitions }, { values, scales, page, spans, hashes, centroids, offsets })
}

/** The nearest pages: page ids best first, their scores (cosine of their best passage) and that passage's scan slot. */
export interface NearestPages {
  readonly docs: Int32Array
  readonly scores: Float64Array
  readonly slots: Int32Array
  /** Vectors scored. */
  readonly scanned: number
}

export interface NearestOptions {
  /** Near-duplicate cluster of each page: one page per cluster is kept. */
  readonly cluster?: Int32Array | undefined
  /** Groups probed beyond the exact limit; default: enough to score about probeTarget vectors. */
  readonly probe?: number | undefined
  /** Pages left out (shadowed by newer versions elsewhere, or filtered). */
  readonly accept?: ((page: number) => boolean) | undefined
}

/** The groups to scan: every vector below the limit, else the `probe` groups whose centres are nearest to the query. */
const groupsToScan = (vectors: PassageVectors, query: Float32Array, probe: number | undefined): Array<number> => {
  const { partitions, dimensions, count } = vectors.meta
  if (partitions === 0) return [0]
  const centroids = vectors.arrays.centroids
  const wanted = Math.max(1, Math.min(partitions, probe ?? Math.ceil(probeTarget / Math.max(1, count / partitions))))
  const best = new TopK(wanted)
  for (let c = 0; c < partitions; c++) {
    let sum = 0
    const base = c * dimensions
    for (let d = 0; d < dimensions; d++) sum += centroids[base + d]! * query[d]!
    best.offer(c, sum)
  }
  return Array.from(best.sorted().docs)
}

const identities = new WeakMap<PassageVectors, Int32Array>()

/** Each page its own cluster, for a caller that gives none. */
const ownClusters = (vectors: PassageVectors): Int32Array => {
  let found = identities.get(vectors)
  if (found === undefined) {
    let pages = 0
    for (const p of vectors.arrays.page) pages = Math.max(pages, p + 1)
    identities.set(vectors, found = Int32Array.from({ length: pages }, (_, i) => i))
  }
  return found
}

/** The `k` pages nearest to `query` (normalised, of the vectors' dimension). */
export const nearestPages = (vectors: PassageVectors, query: Float32Array, k: number, options: NearestOptions = {}): NearestPages => {
  const { dimensions, partitions } = vectors.meta
  const { values, scales, page, offsets } = vectors.arrays
  // One entry per cluster (a page is in its own at least), so the heap keeps each page's best passage.
  const top = new TopK(k, options.cluster ?? ownClusters(vectors))
  // The slot that put each kept page in the heap.
  const slotOf = new Map<number, number>()
  let scanned = 0
  if (query.length !== dimensions || k <= 0) return { docs: new Int32Array(0), scores: new Float64Array(0), slots: new Int32Array(0), scanned }
  const integer = integerQuery(query)
  const unscale = 1 / integer.scale
  const scan = (from: number, to: number) => {
    for (let slot = from; slot < to; slot++) {
      const p = page[slot]!
      if (options.accept !== undefined && !options.accept(p)) continue
      const score = dot(integer.values, values.subarray(slot * dimensions, (slot + 1) * dimensions), dimensions) * scales[slot]! * unscale
      if (top.offer(p, score)) slotOf.set(p, slot)
    }
    scanned += to - from
  }
  if (partitions === 0) scan(0, vectors.meta.count)
  else for (const group of groupsToScan(vectors, query, options.probe)) scan(offsets[group]!, offsets[group + 1]!)
  const sorted = top.sorted()
  return { docs: sorted.docs, scores: sorted.scores, slots: Int32Array.from(sorted.docs, (doc) => slotOf.get(doc)!), scanned }
}
