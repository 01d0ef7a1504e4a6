/**
 * `periscope index` with `search.embeddings` configured: the built index's passages embedded
 * (core/backends/embeddings/EmbedIndex.ts) before the snapshot is written, the previous
 * snapshot's vectors reused for every passage whose text did not change, progress on stderr.
 * A failure of the embedding server after its retries writes nothing: the run says why.
 */
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { textEmbedderLayer } from "../../core/app/EmbeddingStack.ts"
import { type EmbedReport, embedIndex } from "../../core/backends/embeddings/EmbedIndex.ts"
import type { EmbeddingsConfig } from "../../core/config/EmbeddingsConfig.ts"
import { defaultPassageOptions } from "../../core/index/Passages.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import type { PassageVectors } from "../../core/index/Vectors.ts"

export type { EmbedReport }

/** Where progress lines go: the terminal's stderr, or nowhere (--quiet). */
export type EmbedProgress = (line: string) => void

/** The index with its passages' vectors, or the reason it has none (the server failed, a key is missing). */
export const embedStep = (
  index: SearchIndex,
  config: EmbeddingsConfig,
  previous: PassageVectors | undefined,
  progress: EmbedProgress
): Effect.Effect<{ readonly index: SearchIndex; readonly report: EmbedReport }, { readonly setting: string; readonly message: string }> => {
  let lastLine = 0
  return embedIndex(index, {
    model: config.model,
    dimensions: config.dimensions,
    documentPrefix: config.documentPrefix ?? "",
    passageChars: config.passageChars ?? defaultPassageOptions.passageChars,
    maxPassages: config.maxPassagesPerPage ?? defaultPassageOptions.maxPassages,
    groupSize: Math.max(1, (config.batchSize ?? 32) * (config.concurrency ?? 2) * 4),
    onProgress: (done, total) => {
      const now = Date.now()
      if (done === total || now - lastLine >= 5_000) {
        lastLine = now
        progress(`embedding: ${done.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} passages sent to ${config.model}`)
      }
    }
  }, previous).pipe(
    Effect.provide(textEmbedderLayer(config)),
    Effect.provide(FetchHttpClient.layer),
    Effect.mapError((error) =>
      error._tag === "SettingsError"
        ? { setting: error.setting, message: error.message }
        : { setting: "search.embeddings", message: `the embedding server at ${config.baseUrl} failed: ${error.message}` }
    )
  )
}

/** The summary's line about the vectors. */
export const formatEmbedReport = (report: EmbedReport): string =>
  `Vectors: ${report.passages.toLocaleString("en-US")} passages of ${report.model} (${report.dimensions} dimensions): ` +
  `${report.embedded.toLocaleString("en-US")} embedded in ${(report.ms / 1000).toFixed(1)} s, ${report.reused.toLocaleString("en-US")} reused from the previous snapshot.`
