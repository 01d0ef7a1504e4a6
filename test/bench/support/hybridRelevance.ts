/**
 * The relevance bench's hybrid rows: run only when an embedding server is named by environment
 * variables, since no embedding model runs on the machines this project is built on:
 *
 *   PERISCOPE_BENCH_EMBEDDINGS_URL     the OpenAI-compatible base URL (e.g. http://127.0.0.1:11434/v1)
 *   PERISCOPE_BENCH_EMBEDDINGS_MODEL   the model (e.g. nomic-embed-text)
 *   PERISCOPE_BENCH_EMBEDDINGS_KEY     its key, when it needs one
 *   PERISCOPE_BENCH_QUERY_PREFIX, PERISCOPE_BENCH_DOCUMENT_PREFIX   the model's prefixes (search_query: / search_document: for nomic)
 *   PERISCOPE_BENCH_RERANK_URL         a /rerank endpoint (Cohere's shape), for the reranked row
 *   PERISCOPE_BENCH_RERANK_MODEL       its model
 *
 * The collection is indexed as the engine rows index it, its passages embedded through the same
 * code `periscope index` runs, and each query ranked by hybridSearch (rrf and weighted).
 */
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { EmbeddingClient } from "../../../core/backends/embeddings/EmbeddingClient.ts"
import { embedIndex } from "../../../core/backends/embeddings/EmbedIndex.ts"
import { makeRerankClient } from "../../../core/backends/embeddings/RerankClient.ts"
import { defaultHybridSettings, hybridSearch } from "../../../core/index/HybridRank.ts"
import { IndexBuilder } from "../../../core/index/IndexBuilder.ts"
import { TextEmbedder } from "../../../core/search/Embeddings.ts"
import type { Collection } from "./smart.ts"

type Run = Map<string, Array<string>>

const env = (name: string) => {
  const value = process.env[name]
  return value === undefined || value.trim() === "" ? undefined : value.trim()
}

/** The hybrid rows of collection `c`, or none (with a line saying why) when no server is configured. */
export const hybridRuns = async (
  c: Collection,
  docUrl: (collection: string, id: string) => string,
  idOfUrl: (url: string) => string,
  queryText: (text: string) => string,
  depth: number
): Promise<Array<[string, Run]>> => {
  const baseUrl = env("PERISCOPE_BENCH_EMBEDDINGS_URL")
  const model = env("PERISCOPE_BENCH_EMBEDDINGS_MODEL")
  if (baseUrl === undefined || model === undefined) {
    console.log("[skip] hybrid rows: set PERISCOPE_BENCH_EMBEDDINGS_URL and PERISCOPE_BENCH_EMBEDDINGS_MODEL to an embedding server (docs/hybrid.md)")
    return []
  }
  const key = env("PERISCOPE_BENCH_EMBEDDINGS_KEY")
  const queryPrefix = process.env.PERISCOPE_BENCH_QUERY_PREFIX ?? ""
  const embedder = EmbeddingClient.layer({
    baseUrl,
    model,
    apiKey: key === undefined ? undefined : Redacted.make(key),
    batchSize: 32,
    concurrency: 2,
    timeoutMs: 120_000,
    queryTimeoutMs: 60_000,
    retries: 3
  }).pipe(Layer.provide(FetchHttpClient.layer))
  const builder = new IndexBuilder()
  builder.add(c.documents.map((d) => ({ url: docUrl(c.name, d.id), title: d.title, text: d.text })))
  const started = performance.now()
  const { index, report } = await Effect.runPromise(
    embedIndex(builder.build(), { model, documentPrefix: process.env.PERISCOPE_BENCH_DOCUMENT_PREFIX ?? "", passageChars: 1000, maxPassages: 8 }, undefined).pipe(Effect.provide(embedder))
  )
  const texts = c.queries.map((q) => queryPrefix + queryText(q.text))
  const vectors = await Effect.runPromise(Effect.flatMap(Effect.service(TextEmbedder), (e) => e.embed(texts, "index")).pipe(Effect.provide(embedder)))
  console.log(`hybrid: ${report.passages} passages of ${c.name} embedded with ${model} (${report.dimensions} dimensions) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const rank = (fusion: "rrf" | "weighted"): Run => {
    const run: Run = new Map()
    c.queries.forEach((q, i) => {
      const answer = hybridSearch(index, queryText(q.text), vectors[i]!, depth, { ...defaultHybridSettings, fusion, candidates: depth })
      run.set(q.id, answer.results.map((r) => idOfUrl(index.parts.pages.get(r.doc, 0))))
    })
    return run
  }
  const rows: Array<[string, Run]> = [
    [`Hybrid: BM25F + ${model}, rrf`, rank("rrf")],
    [`Hybrid: BM25F + ${model}, weighted 0.5`, rank("weighted")]
  ]
  const rerankUrl = env("PERISCOPE_BENCH_RERANK_URL")
  if (rerankUrl !== undefined) {
    const reranker = await Effect.runPromise(makeRerankClient({ url: rerankUrl, model: env("PERISCOPE_BENCH_RERANK_MODEL"), api: "cohere", timeoutMs: 60_000, retries: 2 }).pipe(Effect.provide(FetchHttpClient.layer)))
    const base = rows[0]![1]
    const reranked: Run = new Map()
    for (const q of c.queries) {
      const ids = base.get(q.id) ?? []
      const top = ids.slice(0, 20)
      const documents = top.map((id) => {
        const d = c.documents.find((doc) => doc.id === id)!
        return `${d.title}\n${d.text}`.slice(0, 2000)
      })
      const scores = await Effect.runPromise(reranker.rerank(queryText(q.text), documents))
      reranked.set(q.id, [...scores.map((s) => top[s.index]!), ...ids.slice(20)])
    }
    rows.push([`Hybrid rrf, top 20 reranked (${env("PERISCOPE_BENCH_RERANK_MODEL") ?? rerankUrl})`, reranked])
  }
  return rows
}
