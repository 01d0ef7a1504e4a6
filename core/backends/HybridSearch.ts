/**
 * WebSearch with hybrid retrieval: the query is embedded by the configured server while BM25F
 * ranks it, then the snapshot's passage vectors are searched and both rankings fused
 * (core/index/HybridRank.ts); a reranker, when configured, reorders the best results.
 *
 * Nothing here fails a search: without vectors, with vectors of another model, with the
 * embedding server down, slow or answering nonsense, the answer is BM25F's and a note says
 * why (RetrievalNotes: `extra` shows it when the request asks); a failing reranker leaves
 * the fused order. Pages added since the snapshot (a segment) have no vectors: they are
 * found by BM25F and fused by rank with the snapshot's nearest pages.
 */
import { Effect, Fiber, Layer, Option } from "effect"
import { type HybridSettings, hybridSearch, lexicalSide, openingPlan, rerankText } from "../index/HybridRank.ts"
import type { PageHit, SearchIndex } from "../index/SearchIndex.ts"
import { parseQuery } from "../index/QueryParser.ts"
import { nearestPages } from "../index/VectorSearch.ts"
import { normalized, vectorsMismatch } from "../index/Vectors.ts"
import { ModelServerError, Reranker, TextEmbedder } from "../search/Embeddings.ts"
import { noteRetrieval } from "../search/RetrievalNotes.ts"
import { SearchBackendError } from "../search/SearchError.ts"
import type { SearchQuery } from "../search/SearchQuery.ts"
import { toWebSearchData } from "../search/SearchResult.ts"
import { WebSearch } from "../search/WebSearch.ts"
import { spanned } from "../store/Spans.ts"
import { SearchEngine, type ServingIndex } from "./EngineSearch.ts"

export interface HybridSearchSettings extends HybridSettings {
  /** Put before the query text (e.g. "search_query: "). */
  readonly queryPrefix: string
  /** The best results the reranker reorders, and the characters of each it reads. */
  readonly rerankTopK: number
  readonly rerankMaxChars: number
  /** Query vectors kept by query text, so a repeated query is not embedded again. */
  readonly queryCacheEntries: number
}

export const defaultHybridSearchSettings: HybridSearchSettings = {
  fusion: "rrf",
  vectorWeight: 0.5,
  candidates: 50,
  queryPrefix: "",
  rerankTopK: 20,
  rerankMaxChars: 2000,
  queryCacheEntries: 1000
}

const engineFailure = () => new SearchBackendError({ reason: "internal", message: "the search engine failed to answer this query" })

/** A reason as the note says it. */
const prefixed = (problem: string | undefined) => (problem === undefined ? undefined : `hybrid retrieval skipped, BM25 results only: ${problem}`)

/** The note for an embedding failure: what the server did, and that BM25 answered. */
const embeddingNote = (error: ModelServerError) => `hybrid retrieval skipped, BM25 results only: ${error.message}`

/** Least recently used query vectors. */
class QueryVectors {
  private readonly entries = new Map<string, Float32Array>()
  private readonly capacity: number
  constructor(capacity: number) {
    this.capacity = capacity
  }
  get(text: string): Float32Array | undefined {
    const found = this.entries.get(text)
    if (found !== undefined) {
      this.entries.delete(text)
      this.entries.set(text, found)
    }
    return found
  }
  set(text: string, vector: Float32Array): void {
    if (this.capacity <= 0) return
    this.entries.delete(text)
    this.entries.set(text, vector)
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!)
  }
}

/** Hits of two lists fused by rank (RRF), identified by link: the segmented path, whose pages have no common ids. */
const fuseHits = (lexical: ReadonlyArray<PageHit>, vector: ReadonlyArray<PageHit>, weight: number, limit: number): Array<PageHit> => {
  const byLink = new Map<string, { hit: PageHit; score: number; first: number }>()
  const add = (hits: ReadonlyArray<PageHit>, w: number, offset: number) =>
    hits.forEach((hit, i) => {
      const e = byLink.get(hit.link)
      if (e === undefined) byLink.set(hit.link, { hit, score: w / (61 + i), first: offset + i })
      else e.score += w / (61 + i)
    })
  add(lexical, 1 - weight, 0)
  add(vector, weight, lexical.length)
  return [...byLink.values()].sort((a, b) => b.score - a.score || a.first - b.first).slice(0, limit).map((e) => e.hit)
}

/** WebSearch over the SearchEngine's index and the TextEmbedder (and a Reranker when one is provided). */
const make = (settings: HybridSearchSettings): Effect.Effect<WebSearch["Service"], never, SearchEngine | TextEmbedder> =>
  Effect.gen(function*() {
    const engine = yield* SearchEngine
    const embedder = yield* TextEmbedder
    const reranker = Option.getOrUndefined(yield* Effect.serviceOption(Reranker))
    const cache = new QueryVectors(settings.queryCacheEntries)
    const expected = { model: embedder.model, dimensions: embedder.dimensions }
    // One check per snapshot: a reload brings new vectors.
    let checked: { readonly index: SearchIndex; readonly problem: string | undefined } | undefined
    const problemOf = (snapshot: SearchIndex): string | undefined => {
      if (checked?.index !== snapshot) {
        const vectors = snapshot.parts.vectors
        checked = {
          index: snapshot,
          problem: vectors === undefined
            ? "hybrid retrieval skipped, BM25 results only: the index has no vectors; run `periscope index` with search.embeddings configured"
            : prefixed(vectorsMismatch(vectors, expected)?.message)
        }
      }
      return checked.problem
    }

    // The snapshot served at start was reported when the server started (EmbeddingStack.ts).
    problemOf(yield* engine.snapshot)

    const queryVector = (keywords: string): Effect.Effect<Float32Array | undefined> => {
      const text = settings.queryPrefix + keywords
      const cached = cache.get(text)
      if (cached !== undefined) return Effect.succeed(cached)
      return embedder.embed([text], "query").pipe(
        Effect.map((vectors) => {
          cache.set(text, vectors[0]!)
          return vectors[0]
        }),
        Effect.catch((error) => Effect.as(noteRetrieval(embeddingNote(error)), undefined))
      )
    }

    /** Reorders the first `rerankTopK` hits by the reranker's scores; on failure they keep their order. */
    const reranked = (keywords: string, hits: ReadonlyArray<PageHit>, texts: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<PageHit>> => {
      if (reranker === undefined || hits.length < 2) return Effect.succeed(hits)
      const top = Math.min(settings.rerankTopK, hits.length)
      return reranker.rerank(keywords, texts.slice(0, top)).pipe(
        Effect.tap(() => noteRetrieval(`reranked: the best ${top} by ${reranker.model ?? "the reranker"}`)),
        Effect.map((scores) => {
          const seen = new Set(scores.map((s) => s.index))
          const order = [...scores.map((s) => s.index), ...Array.from({ length: top }, (_, i) => i).filter((i) => !seen.has(i))]
          return [...order.map((i) => hits[i]!), ...hits.slice(top)]
        }),
        Effect.catch((error) => Effect.as(noteRetrieval(`reranking skipped, fused order kept: ${error.message}`), hits))
      )
    }

    const search = (query: SearchQuery): Effect.Effect<ReturnType<typeof toWebSearchData>, SearchBackendError> =>
      Effect.gen(function*() {
        const serving: ServingIndex = yield* engine.current
        const snapshot = yield* engine.snapshot
        const { keywords, num } = query
        const language = { language: query.language }
        const known = checked?.index === snapshot
        const problem = problemOf(snapshot)
        if (problem !== undefined) {
          // Said once per snapshot in the log (a reload that brought vectors of another model), and in every answer's notes.
          if (!known) yield* Effect.logWarning(`search: ${problem}`)
          yield* noteRetrieval(problem)
          const answer = yield* Effect.try({ try: () => serving.search(keywords, num, language), catch: engineFailure })
          return toWebSearchData(answer.query, answer.hits)
        }
        if (serving === snapshot) {
          // The query's vector is asked for first; BM25F ranks while it is on its way.
          const vector = yield* Effect.forkChild(queryVector(keywords))
          const depth = Math.max(num, reranker === undefined ? 0 : settings.rerankTopK)
          const lexical = yield* Effect.try({ try: () => lexicalSide(snapshot, keywords, depth, settings, language), catch: engineFailure })
          const queryVec = lexical.lexicalOnly === undefined ? yield* Fiber.join(vector) : undefined
          if (lexical.lexicalOnly !== undefined) yield* Fiber.interrupt(vector)
          const answer = yield* Effect.try({ try: () => hybridSearch(snapshot, keywords, queryVec, depth, settings, lexical), catch: engineFailure })
          if (answer.lexicalOnly !== undefined && queryVec !== undefined) yield* noteRetrieval(`hybrid retrieval skipped, BM25 results only: ${answer.lexicalOnly}`)
          else if (answer.lexicalOnly === undefined) yield* noteRetrieval(`hybrid: BM25F fused with the nearest passages of ${embedder.model} (${settings.fusion})`)
          const texts = reranker === undefined ? [] : answer.results.slice(0, settings.rerankTopK).map((r) => rerankText(snapshot, r, settings.rerankMaxChars))
          const hits = yield* reranked(keywords, answer.hits, texts)
          return toWebSearchData(keywords, hits.slice(0, num))
        }
        // Pages added since the snapshot: BM25F over both, vectors over the snapshot, fused by link.
        // Each side's hits carry snippets, so each gives twice what is shown rather than `candidates`.
        const vector = yield* queryVector(keywords)
        const shown = Math.max(num, reranker === undefined ? 0 : settings.rerankTopK)
        const fused = yield* Effect.try({
          try: () => {
            const lexical = serving.search(keywords, 2 * shown, language).hits
            const vectors = snapshot.parts.vectors
            const parsed = parseQuery(keywords)
            if (vector === undefined || vectors === undefined || vector.length !== vectors.dimensions || parsed.phrases.length > 0 || parsed.excluded.length > 0) {
              return { hits: lexical, hybrid: false }
            }
            const plan = snapshot.planFor(parsed, false, () => false, snapshot.reading(parsed, language))
            const nearest = nearestPages(vectors, normalized(vector), 2 * shown, { cluster: snapshot.parts.pageCluster, accept: plan?.query.accept })
            const vectorHits = snapshot.pageHits(plan ?? openingPlan, nearest.docs)
            return { hits: fuseHits(lexical, vectorHits, settings.vectorWeight, shown), hybrid: true }
          },
          catch: engineFailure
        })
        if (fused.hybrid) yield* noteRetrieval(`hybrid: BM25F fused with the nearest passages of ${embedder.model} (by rank, beside pages added since the snapshot)`)
        const hits = fused.hits
        const rerankedHits = yield* reranked(keywords, hits, hits.map((h) => `${h.title}\n${h.snippet}`.slice(0, settings.rerankMaxChars)))
        return toWebSearchData(keywords, rerankedHits.slice(0, num))
      })

    return WebSearch.of({ search: (query) => spanned(search(query), "WebSearch.search") })
  })

export const HybridSearch = {
  make,
  layer: (settings: HybridSearchSettings = defaultHybridSearchSettings): Layer.Layer<WebSearch, never, SearchEngine | TextEmbedder> =>
    Layer.effect(WebSearch, make(settings))
} as const
