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
 * term vectors): up to `feedbackChars` characters of each (the start of a page says what it is
 * about: on the bench's collections a 1,000-character start fed back as well as whole texts),
 * kept as term ids for the pages that come up again (least recently used dropped first,
 * `maxVectorWords` words in all). The expanded query is
 * ranked by BM25F; proximity re-ranking and snippets use the query's own words, so what a
 * result shows is still about what was asked.
 */
import { Analyzers } from "./analysis/Analyzers.ts"
import { parseQuery } from "./QueryParser.ts"
import { type CompiledQuery, proximityDepth, type QueryTerm, type RankedDocuments, rankTopK, rerankByProximity } from "./Ranker.ts"
import { maxQueryTerms, maxResults, PageField, type PageHit, type Plan, type QueryOptions, type SearchIndex, type WebSearchAnswer } from "./SearchIndex.ts"

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
const feedbackChars = 1_000
const feedbackWord = /^[\p{L}\p{N}]{2,20}$/u

/** Words of term vectors kept per index (6 bytes each): pages that come up again as feedback are not analysed again. */
const maxVectorWords = 1 << 20
/** Term ids remembered by term, so that analysing a page looks few of its words up in the dictionary. */
const maxKnownTerms = 100_000

/** One page's feedback words (those that may join a query: term ids) with their counts, and how many words it has in all. */
interface TermVector {
  readonly ids: Int32Array
  readonly counts: Uint16Array
  readonly length: number
}

/** The pages' term vectors of one index, least recently used dropped first. */
class TermVectors {
  private readonly index: SearchIndex
  /** Each page's words are read as they were indexed, or a German page's stems would miss the dictionary. */
  private readonly analyzers: Analyzers
  private readonly vectors = new Map<number, TermVector>()
  /** Term id by term, -1 for a word that may not join a query. */
  private readonly ids = new Map<string, number>()
  private words = 0

  constructor(index: SearchIndex) {
    this.index = index
    this.analyzers = new Analyzers({ stemming: index.options.stemming, cacheSize: 100_000 })
  }

  private idOf(term: string): number {
    let id = this.ids.get(term)
    if (id === undefined) {
      id = feedbackWord.test(term) ? this.index.parts.web.lookup(term) : -1
      if (this.ids.size >= maxKnownTerms) this.ids.clear()
      this.ids.set(term, id)
    }
    return id
  }

  of(doc: number): TermVector {
    const kept = this.vectors.get(doc)
    if (kept !== undefined) {
      this.vectors.delete(doc)
      this.vectors.set(doc, kept)
      return kept
    }
    const pages = this.index.parts.pages
    const text = `${pages.get(doc, PageField.Title)}\n${pages.getPart(doc, PageField.Text, 0, feedbackChars * 3)}`
    const counts = new Map<string, number>()
    let length = 0
    this.analyzers.of(this.index.pageAnalysis(doc)).analyze(text.length > feedbackChars ? text.slice(0, feedbackChars) : text, (term) => {
      length++
      counts.set(term, (counts.get(term) ?? 0) + 1)
    })
    const ids: Array<number> = []
    const values: Array<number> = []
    for (const [term, count] of counts) {
      const id = this.idOf(term)
      if (id < 0) continue
      ids.push(id)
      values.push(Math.min(count, 0xffff))
    }
    const vector = { ids: Int32Array.from(ids), counts: Uint16Array.from(values), length }
    this.vectors.set(doc, vector)
    this.words += ids.length
    while (this.words > maxVectorWords && this.vectors.size > 1) {
      const [oldest, dropped] = this.vectors.entries().next().value!
      this.vectors.delete(oldest)
      this.words -= dropped.ids.length
    }
    return vector
  }

  /** Forgets the vectors (the term ids by term stay: a dictionary's, not a page's). */
  clear(): void {
    this.vectors.clear()
    this.words = 0
  }
}

const termVectors = new WeakMap<SearchIndex, TermVectors>()
const vectorsOf = (index: SearchIndex): TermVectors => {
  let vectors = termVectors.get(index)
  if (vectors === undefined) {
    vectors = new TermVectors(index)
    termVectors.set(index, vectors)
  }
  return vectors
}

/** Forgets the pages' term vectors kept for `index` (benches time expansion from a cold start with it). */
export const forgetTermVectors = (index: SearchIndex): void => termVectors.get(index)?.clear()

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
 * with quoted phrases, required words or exclusions keeps them; only the scoring words grow. The
 * query is read, and its pages kept to a language, as `search` does with the same options.
 */
export const expandQuery = (
  index: SearchIndex,
  keywords: string,
  settings: ExpansionSettings = defaultExpansionSettings,
  options?: QueryOptions
): ExpandedPlan | undefined => {
  const parsed = parseQuery(typeof keywords === "string" ? keywords : "")
  const plan = index.planFor(parsed, false, () => false, index.reading(parsed, options))
  if (plan === undefined) return undefined
  const query = plan.query
  const alpha = Math.min(1, Math.max(0, settings.originalWeight))
  if (settings.documents <= 0 || settings.terms <= 0 || alpha >= 1) return { plan, expanded: query, added: [] }
  const web = index.parts.web
  const feedback = retrieve(index, query, Math.floor(settings.documents))
  if (feedback.docs.length === 0) return { plan, expanded: query, added: [] }

  // The relevance model: per word, the sum over feedback pages of (its count / page length) * page score.
  const model = new Map<number, { weight: number }>()
  const vectors = vectorsOf(index)
  for (let i = 0; i < feedback.docs.length; i++) {
    const { ids, counts, length } = vectors.of(feedback.docs[i]!)
    if (length === 0) continue
    const share = feedback.scores[i]! / length
    for (let t = 0; t < ids.length; t++) {
      const entry = model.get(ids[t]!)
      if (entry === undefined) model.set(ids[t]!, { weight: counts[t]! * share })
      else entry.weight += counts[t]! * share
    }
  }

  // The strongest words on few enough pages; weights scaled to sum 1.
  const maxPages = Math.max(1, Math.floor(maxPageShare * web.documentCount))
  const chosen: Array<{ id: number; weight: number }> = []
  for (const [id, weight] of strongest(model, settings.terms + candidateMargin)) {
    if (chosen.length >= settings.terms) break
    if (web.arrays.termDf[id]! > maxPages) continue
    chosen.push({ id, weight })
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
    added: chosen.map((t) => ({ term: web.termText(t.id), weight: t.weight * scale }))
  }
}

/** Words looked at beyond the number added, for those the df rule leaves out. */
const candidateMargin = 54

/**
 * The `n` heaviest words of the model, heaviest first (ties by term id, that is in word order): a bounded heap over
 * the model rather than a sort of all of it.
 */
const strongest = (model: ReadonlyMap<number, { readonly weight: number }>, n: number): Array<[number, number]> => {
  const before = (a: [number, number], b: [number, number]) => a[1] > b[1] || (a[1] === b[1] && a[0] < b[0])
  // A min-heap by that order: its root is the lightest word kept.
  const heap: Array<[number, number]> = []
  const down = (i: number) => {
    for (;;) {
      let least = i
      const l = 2 * i + 1
      const r = l + 1
      if (l < heap.length && before(heap[least]!, heap[l]!)) least = l
      if (r < heap.length && before(heap[least]!, heap[r]!)) least = r
      if (least === i) return
      ;[heap[i], heap[least]] = [heap[least]!, heap[i]!]
      i = least
    }
  }
  for (const [term, { weight }] of model) {
    const entry: [number, number] = [term, weight]
    if (heap.length < n) {
      heap.push(entry)
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1
        if (!before(heap[parent]!, heap[i]!)) break
        ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
        i = parent
      }
    } else if (before(entry, heap[0]!)) {
      heap[0] = entry
      down(0)
    }
  }
  return heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
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
  // Term at a time where the query allows it: the added words are many and light, and MaxScore,
  // whose choice is fitted to queries as typed, takes longer over them (same pages, same scores).
  const ranked = rankTopK(web, expansion.expanded, proximity > 0 ? Math.max(k, proximityDepth) : k, index.parts.pageCluster, "termAtATime")
  // Proximity and term masks by the query's own words, scores kept from the expanded ranking.
  const reranked = rerankByProximity(web, expansion.plan.query, ranked, proximity)
  if (reranked.docs.length <= k) return reranked
  const termsIn = reranked.termsIn === undefined ? undefined : { field: reranked.termsIn.field, masks: reranked.termsIn.masks.subarray(0, k) }
  return { docs: reranked.docs.subarray(0, k), scores: reranked.scores.subarray(0, k), complete: false, termsIn }
}

/** `search` with the query expanded: the same answer shape, snippets made for the words asked. */
export const searchExpanded = (
  index: SearchIndex,
  keywords: string,
  limit: number,
  settings: ExpansionSettings = defaultExpansionSettings,
  options?: QueryOptions
): WebSearchAnswer => {
  const text = typeof keywords === "string" ? keywords : ""
  const n = typeof limit === "number" && Number.isFinite(limit) ? Math.max(0, Math.min(maxResults, Math.floor(limit))) : 0
  if (n === 0) return { query: text, hits: [] }
  const expansion = expandQuery(index, text, settings, options)
  if (expansion === undefined) return { query: text, hits: [] }
  const ranked = rankExpanded(index, expansion, n)
  const hits: Array<PageHit> = index.pageHits(expansion.plan, ranked.docs, ranked.termsIn)
  return { query: text, hits }
}
