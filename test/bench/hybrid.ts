/**
 * What hybrid retrieval adds to a search at 56,000 passages (the search bench's corpus:
 * test/bench/support/passageCorpus.ts), against a loopback embedding stand-in that returns
 * deterministic vectors (test/hybrid/support/modelServerStandIn.ts).
 *
 * The passages' vectors are the stand-in's function computed in this process (the same vectors
 * the server would send, without shipping gigabytes of JSON over loopback); each query is
 * embedded through the stand-in over HTTP, as a search does. Per bench query (AND-like and
 * OR-like sets), in rotating order within each round:
 *   - BM25F alone: SearchIndex.search, 10 hits with snippets;
 *   - the embedding call: TextEmbedder.embed over loopback;
 *   - hybrid ranking: BM25F candidates, nearest pages, fusion, 10 hits with snippets;
 *   - the search as the server runs it: HybridSearch's WebSearch (the embedding call in flight
 *     while BM25F ranks);
 *   - the vector search alone through the partition.
 * "Added" is hybrid ranking minus BM25F alone, paired per query: what hybrid costs beyond the
 * embedding call. Then, on the first 100 queries apart (it would weigh on the timings above), the
 * exact vector search (every vector scored) and the partition's recall of its ten nearest pages.
 *
 * Run: node test/bench/hybrid.ts [--dims 384] [--rounds 3] [--queries 300]
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { EmbeddingClient } from "../../core/backends/embeddings/EmbeddingClient.ts"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { HybridSearch, defaultHybridSearchSettings } from "../../core/backends/HybridSearch.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { defaultHybridSettings, hybridSearch, lexicalSide } from "../../core/index/HybridRank.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { indexWithVectors, passagesToEmbed, planEmbedding } from "../../core/index/IndexVectors.ts"
import { nearestPages } from "../../core/index/VectorSearch.ts"
import { normalized } from "../../core/index/Vectors.ts"
import { TextEmbedder } from "../../core/search/Embeddings.ts"
import { WebSearch } from "../../core/search/WebSearch.ts"
import { standInVector, startModelServerStandIn } from "../hybrid/support/modelServerStandIn.ts"
import { ensurePassageCorpus } from "./support/passageCorpus.ts"

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? Number(process.argv[at + 1]) : fallback
}
const dimensions = arg("dims", 384)
const rounds = arg("rounds", 3)
const maxQueries = arg("queries", 300)

const corpus = ensurePassageCorpus()
if (corpus._tag !== "Ready") {
  console.log("the search bench's corpus is missing (Debian documentation packages); see test/bench/search.ts")
  process.exit(0)
}
const documents: Array<IndexDocument> = readFileSync(corpus.path, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as IndexDocument)

const time = <A>(f: () => A): [A, number] => {
  const start = performance.now()
  const value = f()
  return [value, performance.now() - start]
}

const [lexicalIndex, buildMs] = time(() => {
  const builder = new IndexBuilder()
  builder.add(documents)
  return builder.build()
})
const plan = planEmbedding(lexicalIndex, { model: "stand-in", passageChars: 1000, maxPassages: 8, documentPrefix: "" })
const [embedded, embedMs] = time(() => new Map(passagesToEmbed(plan).map((i) => [plan.texts[i]!, Float32Array.from(standInVector(plan.texts[i]!, dimensions))])))
const [index, vectorBuildMs] = time(() => indexWithVectors(lexicalIndex, plan, embedded))
const vectors = index.parts.vectors!
console.log(
  `${index.documentCount} pages, ${vectors.count} passage vectors of ${dimensions} dimensions, ${vectors.meta.partitions} partitions; ` +
    `BM25F build ${(buildMs / 1000).toFixed(1)} s, vectors computed in process ${(embedMs / 1000).toFixed(1)} s, laid out and partitioned ${(vectorBuildMs / 1000).toFixed(1)} s`
)

const queriesFile = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../.cache/bench/queries.json"), "utf8")) as { andLike: Array<string>; orLike: Array<string> }
const queries = [...queriesFile.andLike, ...queriesFile.orLike].slice(0, maxQueries)

const standIn = await startModelServerStandIn({ dimensions })
const embedder = EmbeddingClient.layer({ baseUrl: standIn.baseUrl, model: "stand-in", batchSize: 32, concurrency: 1, timeoutMs: 10_000, queryTimeoutMs: 10_000, retries: 0 }).pipe(
  Layer.provide(FetchHttpClient.layer)
)
const services = await Effect.runPromise(Layer.build(Layer.merge(
  embedder,
  Layer.effect(WebSearch, HybridSearch.make({ ...defaultHybridSearchSettings, queryCacheEntries: 0 })).pipe(Layer.provideMerge(EngineSearch.layer(index)), Layer.provide(embedder))
)).pipe(Effect.scoped, Effect.map((context) => context)))
const embedClient = services.mapUnsafe.get(TextEmbedder.key) as TextEmbedder["Service"]
const webSearch = services.mapUnsafe.get(WebSearch.key) as WebSearch["Service"]

const queryVectors = new Map<string, Float32Array>()
const elapsedAsync = async (f: () => Promise<unknown>) => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

const samples = { plain: [] as Array<number>, embed: [] as Array<number>, hybrid: [] as Array<number>, added: [] as Array<number>, served: [] as Array<number>, exact: [] as Array<number>, partitioned: [] as Array<number> }
let recallHits = 0
let recallTotal = 0
for (let round = 0; round < rounds; round++) {
  for (let q = 0; q < queries.length; q++) {
    const query = queries[(q + round * 97) % queries.length]!
    const embedOnce = await elapsedAsync(async () => {
      const [vector] = await Effect.runPromise(embedClient.embed([query], "query"))
      queryVectors.set(query, vector!)
    })
    const vector = queryVectors.get(query)!
    // Alternate which runs first, so neither always finds the caches warm.
    const first = q % 2 === 0
    let plainMs = 0
    let hybridMs = 0
    const runPlain = () => (plainMs = time(() => index.search(query, 10))[1])
    const runHybrid = () => (hybridMs = time(() => hybridSearch(index, query, vector, 10, defaultHybridSettings, lexicalSide(index, query, 10)))[1])
    if (first) (runPlain(), runHybrid())
    else (runHybrid(), runPlain())
    const servedMs = await elapsedAsync(() => Effect.runPromise(webSearch.search({ keywords: query, num: 10 })))
    const [, partitionedMs] = time(() => nearestPages(vectors, normalized(vector), 10, { cluster: index.parts.pageCluster }))
    samples.plain.push(plainMs)
    samples.embed.push(embedOnce)
    samples.hybrid.push(hybridMs)
    samples.added.push(hybridMs - plainMs)
    samples.served.push(servedMs)
    samples.partitioned.push(partitionedMs)
  }
}
// Exact search apart: scoring every vector per query would weigh on the timings above.
for (const query of queries.slice(0, 100)) {
  const unit = normalized(queryVectors.get(query)!)
  const [exact, exactMs] = time(() => nearestPages(vectors, unit, 10, { probe: vectors.meta.partitions, cluster: index.parts.pageCluster }))
  const approximate = nearestPages(vectors, unit, 10, { cluster: index.parts.pageCluster })
  const truth = new Set(exact.docs)
  recallHits += Array.from(approximate.docs).filter((d) => truth.has(d)).length
  recallTotal += exact.docs.length
  samples.exact.push(exactMs)
}
await standIn.close()

const quantile = (values: ReadonlyArray<number>, q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const row = (name: string, values: ReadonlyArray<number>) =>
  console.log(`${name.padEnd(58)} p50 ${quantile(values, 0.5).toFixed(3).padStart(8)} ms   p99 ${quantile(values, 0.99).toFixed(3).padStart(8)} ms`)
console.log(`\n${queries.length} queries x ${rounds} rounds, node ${process.version}, ${dimensions} dimensions\n`)
row("BM25F alone (search, 10 hits with snippets)", samples.plain)
row("embedding call (loopback stand-in)", samples.embed)
row("hybrid ranking (BM25F + vectors + fusion + snippets)", samples.hybrid)
row("added by hybrid beyond the embedding call (paired)", samples.added)
row("served: HybridSearch's WebSearch, call included", samples.served)
row(`vector search, exact (${vectors.count} vectors scored)`, samples.exact)
row(`vector search, partitioned (${vectors.meta.partitions} partitions)`, samples.partitioned)
console.log(`partition's recall of the exact ten nearest pages: ${(recallHits / Math.max(1, recallTotal)).toFixed(3)}`)
const added = quantile(samples.added, 0.5)
console.log(`\nhybrid adds ${added.toFixed(3)} ms at the median beyond the embedding call: ${added <= 2 ? "within" : "OVER"} the 2 ms target`)
