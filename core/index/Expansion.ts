/**
 * Query expansion by pseudo-relevance feedback, RM3 as Anserini runs it (Abdul-Jaleel et al.
 * 2004; Lin's Anserini defaults): the query's best pages are taken as relevant, the words they
 * use most (each page's term frequencies over its length, weighted by its score) form a
 * relevance model, its strongest words join the query, and the query's own words keep a share
 * of the weight. Words on more than a tenth of the pages are left out of the model (Anserini's
 * rule in place of a stop word list), as are words shorter than 2 or longer than 20 letters
 * and words with other characters than letters and digits.
 *
 * The pages' words come from analysing their stored title and text again (the index keeps no
 * term vectors): up to `feedbackChars` characters of each. The expanded query is ranked by
 * BM25F; proximity re-ranking and snippets use the query's own words, so what a result shows
 * is still about what was asked.
 */
import { Analyzer } from "./analysis/Analyzer.ts"
import { parseQuery } from "./QueryParser.ts"
import { type CompiledQuery, proximityDepth, type QueryTerm, type RankedDocuments, rankTopK, rerankByProximity } from "./Ranker.ts"
import { maxQueryTerms, maxResults, PageField, type PageHit, type Plan, type SearchIndex, type WebSearchAnswer } from "./SearchIndex.ts"

export interface ExpansionSettings {
  /** Best pages of the query as typed that the added words are drawn from (RM3's fbDocs). */
  readonly documents: number
  /** Words added to the query (fbTerms). */
  readonly terms: number
  /** The query's own words' share of the expanded query's weight, above 0 and at most 1 (originalQueryWeight). */
  readonly originalWeight: number
}

/** Anserini's RM3 defaults. */
export const defaultExpansionSettings: ExpansionSettings = { documents: 10, terms: 10, originalWeight: 0.5 }

/** Words on more than this share of the pages say nothing about a query (Anserini's df rule). */
const maxPageShare = 0.1
/** Characters of each feedback page analysed: a passage whole, the start of a long page. */
const feedbackChars = 10_000
const feedbackWord = /^[\p{L}\p{N}]{2,20}$/u

const analyzers = new WeakMap<SearchIndex, Analyzer>()
const analyzerOf = (index: SearchIndex): Analyzer => {
  let analyzer = analyzers.get(index)
  if (analyzer === undefined) {
    analyzer = new Analyzer({ stemming: index.options.stemming, cacheSize: 20_000 })
    analyzers.set(index, analyzer)
  }
  return analyzer
}

/** A query planned for expansion: its own plan and the expanded query ranked in its place. */
export interface ExpandedPlan {
  /** The query as typed (its words are the snippets' and proximity's). */
  readonly plan: Plan
  /** The query with the added words, for BM25F ranking. */
  readonly expanded: CompiledQuery
  /** The words added, with their weights, strongest first. */
  readonly added: ReadonlyArray<{ readonly term: string; readonly weight: number }>
}

/**
 * The expansion of `keywords` over `index`, or undefined when the query matches nothing. A query
 * with quoted phrases, required words or exclusions keeps them; only the scoring words grow.
 */
export const expandQuery = (index: SearchIndex, keywords: string, settings: ExpansionSettings = defaultExpansionSettings): ExpandedPlan | undefined => {
  const plan = index.planFor(parseQuery(typeof keywords === "string" ? keywords : ""), false, () => false)
  if (plan === undefined) return undefined
  const query = plan.query
  const alpha = Math.min(1, Math.max(0, settings.originalWeight))
  if (settings.documents <= 0 || settings.terms <= 0 || alpha >= 1) return { plan, expanded: query, added: [] }
  const web = index.parts.web
  const feedback = retrieve(index, query, Math.floor(settings.documents))
  if (feedback.docs.length === 0) return { plan, expanded: query, added: [] }

  // The relevance model: per word, the sum over feedback pages of (its count / page length) * page score.
  const model = new Map<string, number>()
  const analyzer = analyzerOf(index)
  const counts = new Map<string, number>()
  for (let i = 0; i < feedback.docs.length; i++) {
    const doc = feedback.docs[i]!
    const score = feedback.scores[i]!
    counts.clear()
    let length = 0
    const text = `${index.parts.pages.get(doc, PageField.Title)}\n${index.parts.pages.getPart(doc, PageField.Text, 0, feedbackChars * 3)}`
    analyzer.analyze(text.length > feedbackChars ? text.slice(0, feedbackChars) : text, (term) => {
      length++
      counts.set(term, (counts.get(term) ?? 0) + 1)
    })
    if (length === 0) continue
    for (const [term, count] of counts) {
      if (!feedbackWord.test(term)) continue
      model.set(term, (model.get(term) ?? 0) + (count / length) * score)
    }
  }

  // The strongest words on few enough pages; weights scaled to sum 1.
  const maxPages = Math.max(1, Math.floor(maxPageShare * web.documentCount))
  const chosen: Array<{ id: number; term: string; weight: number }> = []
  for (const [term, weight] of [...model].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
    if (chosen.length >= settings.terms) break
    const id = web.lookup(term)
    if (id < 0 || web.arrays.termDf[id]! > maxPages) continue
    chosen.push({ id, term, weight })
  }
  const total = chosen.reduce((sum, t) => sum + t.weight, 0)
  if (total <= 0) return { plan, expanded: query, added: [] }

  // RM3: alpha * P(w|query) + (1 - alpha) * P(w|feedback), scaled so that a query word keeps its count.
  const queryLength = query.terms.reduce((sum, t) => sum + t.weight, 0)
  const scale = ((1 - alpha) / alpha) * queryLength / total
  const weights = new Map<number, number>(query.terms.map((t) => [t.termId, t.weight]))
  for (const t of chosen) weights.set(t.id, (weights.get(t.id) ?? 0) + t.weight * scale)
  let terms: Array<QueryTerm> = [...weights].map(([termId, weight]) => ({ termId, weight }))
  if (terms.length > maxQueryTerms) {
    const own = new Set(query.terms.map((t) => t.termId))
    terms = terms.sort((a, b) => Number(own.has(b.termId)) - Number(own.has(a.termId)) || b.weight - a.weight).slice(0, maxQueryTerms)
  }
  // Strongest first, as planning orders a query's words: a page's score is summed in that order.
  terms.sort((a, b) => web.termMaxScore(b.termId, b.weight) - web.termMaxScore(a.termId, a.weight) || a.termId - b.termId)
  return {
    plan,
    expanded: { ...query, terms },
    added: chosen.map((t) => ({ term: t.term, weight: t.weight * scale }))
  }
}

/** The best `k` pages of a query as search ranks them: BM25F, then proximity on the best 15. */
const retrieve = (index: SearchIndex, query: CompiledQuery, k: number): RankedDocuments => {
  const proximity = index.options.proximity
  const web = index.parts.web
  const ranked = rankTopK(web, query, proximity > 0 ? Math.max(k, proximityDepth) : k, index.parts.pageCluster)
  const reranked = rerankByProximity(web, query, ranked, proximity)
  return reranked.docs.length <= k ? reranked : { ...reranked, docs: reranked.docs.subarray(0, k), scores: reranked.scores.subarray(0, k), termsIn: undefined }
}

/**
 * The expanded query's best `k` pages: BM25F over the expanded query, then proximity re-ranking
 * of the best 15 by the query's own words (whose presence in each page's text snippets then use).
 */
export const rankExpanded = (index: SearchIndex, expansion: ExpandedPlan, k: number): RankedDocuments => {
  const proximity = index.options.proximity
  const web = index.parts.web
  const ranked = rankTopK(web, expansion.expanded, proximity > 0 ? Math.max(k, proximityDepth) : k, index.parts.pageCluster)
  // Proximity and term masks by the query's own words, scores kept from the expanded ranking.
  const reranked = rerankByProximity(web, expansion.plan.query, ranked, proximity)
  if (reranked.docs.length <= k) return reranked
  const termsIn = reranked.termsIn === undefined ? undefined : { field: reranked.termsIn.field, masks: reranked.termsIn.masks.subarray(0, k) }
  return { docs: reranked.docs.subarray(0, k), scores: reranked.scores.subarray(0, k), complete: false, termsIn }
}

/** `search` with the query expanded: the same answer shape, snippets made for the words asked. */
export const searchExpanded = (index: SearchIndex, keywords: string, limit: number, settings: ExpansionSettings = defaultExpansionSettings): WebSearchAnswer => {
  const text = typeof keywords === "string" ? keywords : ""
  const n = typeof limit === "number" && Number.isFinite(limit) ? Math.max(0, Math.min(maxResults, Math.floor(limit))) : 0
  if (n === 0) return { query: text, hits: [] }
  const expansion = expandQuery(index, text, settings)
  if (expansion === undefined) return { query: text, hits: [] }
  const ranked = rankExpanded(index, expansion, n)
  const hits: Array<PageHit> = index.pageHits(expansion.plan, ranked.docs, ranked.termsIn)
  return { query: text, hits }
}
