/**
 * An index's passages to embed, and the index with their vectors: the pure halves of the
 * embedding step of `periscope index` (core/backends/embeddings/EmbedIndex.ts sends the texts).
 * A passage whose exact text (prefix included) was embedded for the previous snapshot by the
 * same model is not sent again: its stored vector is reused, found by the text's hash.
 */
import { type PassageOptions, pagePassages } from "./Passages.ts"
import { PageField, SearchIndex } from "./SearchIndex.ts"
import { buildPassageVectors } from "./VectorSearch.ts"
import { contentHash, hashKey, type PassageVectors, quantize } from "./Vectors.ts"

export interface EmbeddingPlanOptions extends PassageOptions {
  readonly model: string
  /** The configured dimension, when there is one: stored vectors of another are not reused. */
  readonly dimensions?: number | undefined
  readonly documentPrefix: string
}

/** Every passage of every page, in page order, with the text to embed and where a vector may come from. */
export interface EmbeddingPlan {
  readonly options: EmbeddingPlanOptions
  readonly page: Int32Array
  readonly spans: Uint32Array
  readonly hashes: Uint32Array
  /** The text each passage sends (prefix included). */
  readonly texts: ReadonlyArray<string>
  /** The previous snapshot's slot holding each passage's vector, or -1. */
  readonly reuse: Int32Array
  /** The previous vectors, when their model (and dimension) is this run's. */
  readonly previous: PassageVectors | undefined
}

/** Whether `previous`'s vectors can stand for this run's. */
const reusable = (previous: PassageVectors | undefined, options: EmbeddingPlanOptions): PassageVectors | undefined =>
  previous !== undefined && previous.meta.model === options.model && (options.dimensions === undefined || previous.dimensions === options.dimensions)
    ? previous
    : undefined

/** The passages of `index` and which of them `previous` (the snapshot being replaced) already holds. */
export const planEmbedding = (index: SearchIndex, options: EmbeddingPlanOptions, previousVectors?: PassageVectors): EmbeddingPlan => {
  const previous = reusable(previousVectors, options)
  const known = new Map<number, number>()
  if (previous !== undefined) {
    const h = previous.arrays.hashes
    for (let slot = 0; slot < previous.count; slot++) known.set(hashKey(h[2 * slot]!, h[2 * slot + 1]!), slot)
  }
  const page: Array<number> = []
  const spans: Array<number> = []
  const hashes: Array<number> = []
  const texts: Array<string> = []
  const reuse: Array<number> = []
  const pages = index.parts.pages
  for (let doc = 0; doc < index.documentCount; doc++) {
    for (const passage of pagePassages(pages.get(doc, PageField.Title), pages.get(doc, PageField.Text), options)) {
      const text = options.documentPrefix + passage.text
      const [high, low] = contentHash(text)
      page.push(doc)
      spans.push(passage.start, passage.end)
      hashes.push(high, low)
      texts.push(text)
      reuse.push(known.get(hashKey(high, low)) ?? -1)
    }
  }
  return {
    options,
    page: Int32Array.from(page),
    spans: Uint32Array.from(spans),
    hashes: Uint32Array.from(hashes),
    texts,
    reuse: Int32Array.from(reuse),
    previous
  }
}

/** The passages that need the embedding server: one index per distinct text not reused. */
export const passagesToEmbed = (plan: EmbeddingPlan): Array<number> => {
  const seen = new Set<string>()
  const out: Array<number> = []
  plan.reuse.forEach((slot, i) => {
    if (slot >= 0 || seen.has(plan.texts[i]!)) return
    seen.add(plan.texts[i]!)
    out.push(i)
  })
  return out
}

/**
 * The index with its passages' vectors: `embedded` maps each text sent to its vector; the others
 * come from the previous snapshot. Throws when a vector has another dimension than the rest.
 */
export const indexWithVectors = (index: SearchIndex, plan: EmbeddingPlan, embedded: ReadonlyMap<string, Float32Array>): SearchIndex => {
  const count = plan.texts.length
  const previous = plan.previous
  const first = embedded.values().next().value
  const dimensions = first?.length ?? previous?.dimensions ?? plan.options.dimensions ?? 0
  if (count === 0 || dimensions === 0) return new SearchIndex({ ...index.parts, vectors: undefined })
  const values = new Int8Array(count * dimensions)
  const scales = new Float32Array(count)
  for (let i = 0; i < count; i++) {
    const slot = plan.reuse[i]!
    if (slot >= 0 && previous !== undefined && previous.dimensions === dimensions) {
      values.set(previous.arrays.values.subarray(slot * dimensions, (slot + 1) * dimensions), i * dimensions)
      scales[i] = previous.arrays.scales[slot]!
      continue
    }
    const vector = embedded.get(plan.texts[i]!)
    if (vector === undefined) throw new Error(`passage ${i} of page ${plan.page[i]} has no vector`)
    if (vector.length !== dimensions) throw new Error(`the embedding server answered vectors of ${vector.length} and of ${dimensions} dimensions`)
    scales[i] = quantize(vector, values, i * dimensions)
  }
  const vectors = buildPassageVectors({
    meta: {
      model: plan.options.model,
      dimensions,
      passageChars: plan.options.passageChars,
      maxPassages: plan.options.maxPassages,
      documentPrefix: plan.options.documentPrefix
    },
    values,
    scales,
    page: plan.page,
    spans: plan.spans,
    hashes: plan.hashes
  })
  return new SearchIndex({ ...index.parts, vectors })
}
