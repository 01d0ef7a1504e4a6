/**
 * The embedding step of an index run: every passage of the new index gets a vector, from the
 * previous snapshot when the same model embedded the same text (by its hash), else from the
 * embedding server in batches. Progress is reported after each group of batches.
 */
import { Clock, Effect } from "effect"
import { type EmbeddingPlanOptions, indexWithVectors, passagesToEmbed, planEmbedding } from "../../index/IndexVectors.ts"
import type { SearchIndex } from "../../index/SearchIndex.ts"
import type { PassageVectors } from "../../index/Vectors.ts"
import { ModelServerError, TextEmbedder } from "../../search/Embeddings.ts"

export interface EmbedReport {
  readonly model: string
  readonly dimensions: number
  readonly passages: number
  /** Texts sent to the server. */
  readonly embedded: number
  /** Passages whose vector came from the previous snapshot. */
  readonly reused: number
  readonly ms: number
}

export interface EmbedIndexOptions extends EmbeddingPlanOptions {
  /** Texts sent between two progress reports. */
  readonly groupSize?: number | undefined
  readonly onProgress?: ((done: number, total: number) => void) | undefined
}

/** `index` with its passages' vectors; fails with the server's error when a batch fails after its retries. */
export const embedIndex = Effect.fn("embedIndex")(function*(index: SearchIndex, options: EmbedIndexOptions, previous: PassageVectors | undefined) {
  const embedder = yield* TextEmbedder
  const start = yield* Clock.currentTimeMillis
  const plan = planEmbedding(index, options, previous)
  const wanted = passagesToEmbed(plan)
  const embedded = new Map<string, Float32Array>()
  const group = Math.max(1, options.groupSize ?? 512)
  for (let at = 0; at < wanted.length; at += group) {
    const texts = wanted.slice(at, at + group).map((i) => plan.texts[i]!)
    const vectors = yield* embedder.embed(texts, "index")
    texts.forEach((text, i) => embedded.set(text, vectors[i]!))
    options.onProgress?.(Math.min(wanted.length, at + group), wanted.length)
  }
  const withVectors = yield* Effect.try({
    try: () => indexWithVectors(index, plan, embedded),
    catch: (error) => new ModelServerError({ server: "embeddings", reason: "bad_response", message: error instanceof Error ? error.message : String(error) })
  })
  const report: EmbedReport = {
    model: options.model,
    dimensions: withVectors.parts.vectors?.dimensions ?? 0,
    passages: plan.texts.length,
    embedded: wanted.length,
    reused: plan.reuse.reduce((n, slot) => n + (slot >= 0 ? 1 : 0), 0),
    ms: (yield* Clock.currentTimeMillis) - start
  }
  return { index: withVectors, report }
})
