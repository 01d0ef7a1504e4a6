/**
 * The passages' embedding vectors a snapshot carries: one int8 vector per passage with its own
 * scale (the vector normalised to length 1, then its largest component mapped to 127), the page
 * and the piece of its text it came from, and the hash of the exact text embedded, by which the
 * next `periscope index` run reuses it instead of asking the embedding server again.
 *
 * Passages are stored in scan order: with a partition (VectorSearch.ts) the passages of one
 * partition lie together, so a search reads each partition it probes straight through.
 *
 * The model's name and the vectors' dimension are stored beside them: a server configured for
 * another model refuses them (checkVectors), since distances between two models' vectors mean
 * nothing.
 */
import { xxhash32 } from "./XxHash32.ts"

/** What the snapshot's metadata says about its vectors. */
export interface VectorsMeta {
  readonly model: string
  readonly dimensions: number
  /** Passages with a vector. */
  readonly count: number
  /** Partitions of the approximate search; 0: every search scans every vector. */
  readonly partitions: number
  /** How pages were cut and what was put before each passage: a run with other settings embeds again. */
  readonly passageChars: number
  readonly maxPassages: number
  readonly documentPrefix: string
}

export interface PassageVectorsArrays {
  /** count * dimensions int8 components, in scan order. */
  readonly values: Int8Array
  /** Each vector's scale: component * scale is the normalised vector's component. */
  readonly scales: Float32Array
  /** Page id of each passage. */
  readonly page: Int32Array
  /** Start and end (characters) of each passage's piece of its page's text. */
  readonly spans: Uint32Array
  /** Two 32-bit hashes of each passage's embedded text. */
  readonly hashes: Uint32Array
  /** partitions * dimensions: each partition's centre. */
  readonly centroids: Float32Array
  /** partitions + 1 offsets: partition p holds scan slots offsets[p] .. offsets[p + 1] (without partitions: the count alone). */
  readonly offsets: Uint32Array
}

export class PassageVectors {
  readonly meta: VectorsMeta
  readonly arrays: PassageVectorsArrays

  constructor(meta: VectorsMeta, arrays: PassageVectorsArrays) {
    this.meta = meta
    this.arrays = arrays
  }

  get count(): number {
    return this.meta.count
  }

  get dimensions(): number {
    return this.meta.dimensions
  }
}

/** The hash pair of an embedded text (xxHash32 of its UTF-8 under two seeds): the reuse key. */
export const contentHash = (text: string): readonly [number, number] => {
  const bytes = new TextEncoder().encode(text)
  return [xxhash32(bytes, 0x5eed), xxhash32(bytes, 0x0b5e55ed)]
}

/** A hash pair as one Map key. */
export const hashKey = (high: number, low: number): number => high * 0x100000000 + low

/** The vector normalised and quantised: int8 components into `out` at `at`, the scale returned (0 for a zero vector). */
export const quantize = (vector: ArrayLike<number>, out: Int8Array, at: number): number => {
  let norm = 0
  let max = 0
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i]!
    norm += x * x
    const a = Math.abs(x)
    if (a > max) max = a
  }
  if (norm === 0 || max === 0) {
    out.fill(0, at, at + vector.length)
    return 0
  }
  const length = Math.sqrt(norm)
  const step = max / length / 127
  for (let i = 0; i < vector.length; i++) out[at + i] = Math.round(vector[i]! / length / step)
  return step
}

/** A query vector normalised to length 1 (a zero vector stays zero). */
export const normalized = (vector: ArrayLike<number>): Float32Array => {
  let norm = 0
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!
  const out = new Float32Array(vector.length)
  if (norm === 0) return out
  const length = Math.sqrt(norm)
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! / length
  return out
}

/** What a server expects of a snapshot's vectors: the configured model, and its dimension when configured. */
export interface ExpectedVectors {
  readonly model: string
  readonly dimensions?: number | undefined
}

/** Why `vectors` cannot serve a server configured for `expected` (and the setting at odds with them), or undefined when they can. */
export const vectorsMismatch = (vectors: PassageVectors, expected: ExpectedVectors): { readonly setting: string; readonly message: string } | undefined => {
  const { model, dimensions } = vectors.meta
  if (model !== expected.model) {
    return {
      setting: "search.embeddings.model",
      message: `the snapshot's vectors were made by the model ${JSON.stringify(model)}, but search.embeddings.model is ${JSON.stringify(expected.model)}; ` +
        "set the model they were made with, or run `periscope index` again to embed the pages with this one"
    }
  }
  if (expected.dimensions !== undefined && dimensions !== expected.dimensions) {
    return {
      setting: "search.embeddings.dimensions",
      message: `the snapshot's vectors have ${dimensions} dimensions, but search.embeddings.dimensions is ${expected.dimensions}; ` +
        "run `periscope index` again to embed the pages with these settings"
    }
  }
  return undefined
}

type Section = [name: string, array: Uint8Array | Float32Array | Int32Array | Uint32Array]

/** The vectors' snapshot sections (the int8 values as their bytes). */
export const vectorSections = (vectors: PassageVectors): Array<Section> => {
  const a = vectors.arrays
  return [
    ["vectors.values", new Uint8Array(a.values.buffer, a.values.byteOffset, a.values.byteLength)],
    ["vectors.scales", a.scales],
    ["vectors.page", a.page],
    ["vectors.spans", a.spans],
    ["vectors.hashes", a.hashes],
    ["vectors.centroids", a.centroids],
    ["vectors.offsets", a.offsets]
  ]
}

/** A section of the snapshot by name, of the given element type and (when given) length; throws when it is not there as said. */
export type SectionReader = {
  (name: string, type: "u8", length?: number): Uint8Array
  (name: string, type: "f32", length?: number): Float32Array
  (name: string, type: "i32", length?: number): Int32Array
  (name: string, type: "u32", length?: number): Uint32Array
}

/** The vectors back from their sections; `malformed(message)` throws the snapshot's error. */
export const readVectors = (meta: VectorsMeta, get: SectionReader, malformed: (message: string) => never): PassageVectors => {
  const { count, dimensions, partitions } = meta
  if (typeof meta.model !== "string" || !Number.isInteger(count) || count < 0 || !Number.isInteger(dimensions) || dimensions < 1 || !Number.isInteger(partitions) || partitions < 0) {
    return malformed("snapshot: the vectors' metadata is incomplete")
  }
  const bytes = get("vectors.values", "u8", count * dimensions)
  const offsets = get("vectors.offsets", "u32", partitions + 1)
  if (offsets[partitions] !== count) return malformed("snapshot: the vectors' partitions do not cover every passage")
  return new PassageVectors(meta, {
    values: new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length),
    scales: get("vectors.scales", "f32", count),
    page: get("vectors.page", "i32", count),
    spans: get("vectors.spans", "u32", count * 2),
    hashes: get("vectors.hashes", "u32", count * 2),
    centroids: get("vectors.centroids", "f32", partitions * dimensions),
    offsets
  })
}
