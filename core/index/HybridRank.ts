/**
 * BM25F and vector rankings of one snapshot fused into one list: reciprocal rank fusion
 * (Cormack, Clarke & Büttcher 2009: each list adds weight / (60 + rank)), or a weighted sum of
 * each list's scores scaled to 0..1 over its candidates (min-max, as Weaviate's relative score
 * fusion). Each side contributes its best `candidates` pages, one per near-duplicate cluster;
 * snippets are made only for the pages returned. `site:` filters apply to both sides; a query
 * with quoted phrases or exclusions asks for words as written and is ranked by BM25F alone.
 */
import type { QueryOptions } from "./QueryLanguage.ts"
import { parseQuery } from "./QueryParser.ts"
import { PageField, type PageHit, type Plan, type SearchIndex } from "./SearchIndex.ts"
import { nearestPages, type NearestPages } from "./VectorSearch.ts"
import { normalized } from "./Vectors.ts"

export type Fusion = "rrf" | "weighted"

export interface HybridSettings {
  readonly fusion: Fusion
  /** The vector list's share: rrf weights it w against BM25's 1 - w; weighted sums w * vector + (1 - w) * BM25. */
  readonly vectorWeight: number
  /** Pages taken from each side before fusion. */
  readonly candidates: number
}

export const defaultHybridSettings: HybridSettings = { fusion: "rrf", vectorWeight: 0.5, candidates: 50 }

/** RRF's constant: ranks past the first few matter less and less. */
const rrfK = 60

/** One fused page and where it came from. */
export interface HybridResult {
  readonly doc: number
  readonly score: number
  /** 1-based ranks in each list; 0 when absent from it. */
  readonly lexicalRank: number
  readonly vectorRank: number
  /** The scan slot of the page's best passage (its piece of text), or -1. */
  readonly slot: number
}

export interface HybridAnswer {
  readonly results: ReadonlyArray<HybridResult>
  /** The hits of `results`, in order, with snippets. */
  readonly hits: ReadonlyArray<PageHit>
  /** Why the vectors took no part, or undefined when they did. */
  readonly lexicalOnly: string | undefined
}

/** A plan that matches nothing, for the snippets of pages found by their vectors alone: a page's opening. */
export const openingPlan: Plan = {
  query: { terms: [], phrases: [], requiredTermIds: [], excluded: [] },
  snippet: () => ({ weights: new Map() })
}

/** Scores scaled to 0..1 over the list (all 1 when they are equal). */
const scaled = (scores: ArrayLike<number>): Float64Array => {
  let min = Infinity
  let max = -Infinity
  for (let i = 0; i < scores.length; i++) {
    min = Math.min(min, scores[i]!)
    max = Math.max(max, scores[i]!)
  }
  return Float64Array.from(scores as ArrayLike<number>, (s) => (max > min ? (s - min) / (max - min) : 1))
}

/** A query's BM25F side: ranked before the query's vector arrives (the embedding call runs meanwhile). */
export interface LexicalSide {
  readonly keywords: string
  readonly plan: Plan | undefined
  readonly ranked: ReadonlyArray<{ readonly doc: number; readonly score: number }>
  /** Why the vectors cannot take part whatever they are, or undefined. */
  readonly lexicalOnly: string | undefined
}

/** The BM25F candidates of `keywords` (at least `limit`), in the pages of `query.language` when it says one. */
export const lexicalSide = (
  index: SearchIndex,
  keywords: string,
  limit: number,
  settings: HybridSettings = defaultHybridSettings,
  query: QueryOptions = {}
): LexicalSide => {
  const parsed = parseQuery(keywords)
  const plan = index.planFor(parsed, false, () => false, index.reading(parsed, query))
  const ranked = plan === undefined ? [] : index.rank(keywords, Math.max(limit, settings.candidates), query)
  const lexicalOnly = index.parts.vectors === undefined
    ? "the index has no vectors"
    : parsed.phrases.length > 0 || parsed.excluded.length > 0
    ? "the query has quoted phrases or exclusions, which BM25 alone applies"
    : undefined
  return { keywords, plan, ranked, lexicalOnly }
}

/**
 * The best `limit` pages of `index` for `keywords` and its embedding `queryVector` (the
 * snapshot's vectors must be of the same model: the caller checks; undefined: BM25F alone),
 * with snippets. `lexical`: the BM25F side when it was ranked already.
 */
export const hybridSearch = (
  index: SearchIndex,
  keywords: string,
  queryVector: ArrayLike<number> | undefined,
  limit: number,
  settings: HybridSettings = defaultHybridSettings,
  lexical: LexicalSide = lexicalSide(index, keywords, limit, settings)
): HybridAnswer => {
  const { plan } = lexical
  const vectors = index.parts.vectors
  const depth = Math.max(limit, settings.candidates)
  const lexicalOnly = lexical.lexicalOnly ?? (
    queryVector === undefined
      ? "no query vector"
      : vectors !== undefined && queryVector.length !== vectors.dimensions
      ? `the query's vector has ${queryVector.length} dimensions, the index's ${vectors.dimensions}`
      : undefined
  )
  const nearest: NearestPages | undefined = lexicalOnly !== undefined || vectors === undefined || queryVector === undefined ? undefined : nearestPages(vectors, normalized(queryVector), depth, {
    cluster: index.parts.pageCluster,
    accept: plan?.query.accept
  })
  const fused = new Map<number, { score: number; lexicalRank: number; vectorRank: number; slot: number }>()
  const entry = (doc: number) => {
    let e = fused.get(doc)
    if (e === undefined) fused.set(doc, e = { score: 0, lexicalRank: 0, vectorRank: 0, slot: -1 })
    return e
  }
  const w = nearest === undefined ? 0 : settings.vectorWeight
  if (settings.fusion === "rrf") {
    lexical.ranked.forEach((hit, i) => {
      const e = entry(hit.doc)
      e.lexicalRank = i + 1
      e.score += (1 - w) / (rrfK + i + 1)
    })
    nearest?.docs.forEach((doc, i) => {
      const e = entry(doc)
      e.vectorRank = i + 1
      e.slot = nearest.slots[i]!
      e.score += w / (rrfK + i + 1)
    })
  } else {
    const lexicalScores = scaled(lexical.ranked.map((hit) => hit.score))
    lexical.ranked.forEach((hit, i) => {
      const e = entry(hit.doc)
      e.lexicalRank = i + 1
      e.score += (1 - w) * lexicalScores[i]!
    })
    if (nearest !== undefined) {
      const vectorScores = scaled(nearest.scores)
      nearest.docs.forEach((doc, i) => {
        const e = entry(doc)
        e.vectorRank = i + 1
        e.slot = nearest.slots[i]!
        e.score += w * vectorScores[i]!
      })
    }
  }
  // Ties go to the smaller page id, as in BM25F's own ranking.
  const results = [...fused].map(([doc, e]): HybridResult => ({ doc, ...e }))
    .sort((a, b) => b.score - a.score || a.doc - b.doc)
    .slice(0, limit)
  const hits = index.pageHits(plan ?? openingPlan, Int32Array.from(results, (r) => r.doc))
  return { results, hits, lexicalOnly }
}

/**
 * The text a reranker reads for a fused page: its title and the piece its best passage came
 * from (the opening of its text when only BM25 found it), at most `maxChars` characters.
 */
export const rerankText = (index: SearchIndex, result: HybridResult, maxChars: number): string => {
  const pages = index.parts.pages
  const title = pages.get(result.doc, PageField.Title)
  const text = pages.get(result.doc, PageField.Text)
  const spans = index.parts.vectors?.arrays.spans
  const start = result.slot >= 0 && spans !== undefined ? spans[2 * result.slot]! : 0
  const body = text.slice(start, start + maxChars)
  return (title.length > 0 ? `${title}\n${body}` : body).slice(0, maxChars)
}
