/**
 * Whether highlights (core/search/Highlights.ts) give an agent the part of a relevant document
 * that matters, measured against the document's first characters on a judged collection.
 *
 * The collections judge whole documents, not sentences, so a document's "relevant sentence" is
 * defined from the judgments alone, never from the query's words (which highlights read, so
 * they must not decide): the sentence of a relevant document that shares the most topical
 * vocabulary with the query's OTHER relevant documents. A term's weight is the share of those
 * other documents holding it times its idf in the collection; a sentence scores the sum over its
 * distinct terms divided by the square root of their number (so length alone does not win); the
 * best-scoring sentence is the relevant one (the earliest on a tie). Queries with fewer than two
 * relevant documents have no other document to learn from and are left out. Sentences are the
 * highlights' own units (sentenceSpans); a passage holds a sentence when it holds all of it.
 * With `titleCounts` false, a sentence that only repeats the document's title (Cranfield's texts
 * open with their title) cannot be the relevant one: every search result already shows its title.
 *
 * Measures, for a budget of N characters:
 * - per query, the engine's highest-ranked relevant document in its first ten results: does its
 *   best highlight passage (one passage, at most N characters) hold the relevant sentence, and
 *   do its first N characters;
 * - the same over every relevant document in the first ten (pairs);
 * - grounding context recall: over the sources grounded chat gives the model (selectSources over
 *   the engine's ranking, medium size: 5 sources, the top 2 read, the others as snippets), the
 *   share of the relevant sources whose relevant sentence is in what the model reads, with the
 *   read pages given as their first N characters (before) or as their highlights within N (after).
 */
import { queryOf } from "../../../core/chat/GroundedAnswer.ts"
import { DEFAULT_FETCH_TOP_PAGES, DEFAULT_MAX_RESULTS, selectSources } from "../../../core/chat/GroundingSources.ts"
import { Analyzer } from "../../../core/index/analysis/Analyzer.ts"
import { IndexBuilder } from "../../../core/index/IndexBuilder.ts"
import { highlightPassages, highlightQuery, highlights, sentenceSpans } from "../../../core/search/Highlights.ts"
import type { Collection } from "./smart.ts"

export interface PassageScores {
  readonly budget: number
  /** Queries counted (at least two relevant documents, one of them in the engine's first ten). */
  readonly queries: number
  readonly highlight: number
  readonly firstChars: number
  readonly pairs: number
  readonly pairHighlight: number
  readonly pairFirstChars: number
}

export interface ContextRecall {
  readonly budget: number
  /** Queries with at least one relevant source given to the model. */
  readonly queries: number
  readonly before: number
  readonly after: number
}

export interface HighlightRelevance {
  readonly judgedQueries: number
  readonly passages: ReadonlyArray<PassageScores>
  readonly context: ReadonlyArray<ContextRecall>
}

const collapse = (text: string) => text.replace(/\s+/g, " ").trim()

export const measureHighlights = (
  c: Collection,
  docUrl: (id: string) => string,
  idOfUrl: (url: string) => string,
  plainQuery: (text: string) => string,
  passageBudgets: ReadonlyArray<number>,
  contextBudgets: ReadonlyArray<number>,
  titleCounts: boolean
): HighlightRelevance => {
  const analyzer = new Analyzer()
  const byId = new Map(c.documents.map((d) => [d.id, d]))
  const termSets = new Map<string, Set<string>>()
  const df = new Map<string, number>()
  for (const d of c.documents) {
    const terms = new Set<string>()
    analyzer.analyze(d.text, (term) => {
      terms.add(term)
    })
    termSets.set(d.id, terms)
    for (const t of terms) df.set(t, (df.get(t) ?? 0) + 1)
  }
  const n = c.documents.length
  const idf = (t: string) => Math.log(n / (df.get(t) ?? n))

  /** The relevant sentence of `doc` for a query whose relevant documents are `relevant` ([start, end) in its text). */
  const relevantSentence = (docId: string, relevant: ReadonlyArray<string>): readonly [number, number] | undefined => {
    const others = relevant.filter((id) => id !== docId)
    const title = collapse(byId.get(docId)!.title)
    const share = new Map<string, number>()
    for (const id of others) for (const t of termSets.get(id) ?? []) share.set(t, (share.get(t) ?? 0) + 1 / others.length)
    const text = byId.get(docId)!.text
    const spans = sentenceSpans(text)
    let best: readonly [number, number] | undefined
    let bestScore = 0
    for (let i = 0; i < spans.length; i += 2) {
      if (!titleCounts && title !== "" && collapse(text.slice(spans[i], spans[i + 1])) === title) continue
      const terms = new Set<string>()
      analyzer.analyze(text.slice(spans[i], spans[i + 1]), (term) => {
        terms.add(term)
      })
      if (terms.size === 0) continue
      let score = 0
      for (const t of terms) score += (share.get(t) ?? 0) * idf(t)
      score /= Math.sqrt(terms.size)
      if (score > bestScore) {
        bestScore = score
        best = [spans[i]!, spans[i + 1]!]
      }
    }
    return best
  }

  const builder = new IndexBuilder()
  builder.add(c.documents.map((d) => ({ url: docUrl(d.id), title: d.title, text: d.text })))
  const index = builder.build()

  interface Judged {
    readonly query: string
    readonly relevant: ReadonlyArray<string>
    /** Relevant documents in the engine's first ten, in rank order, each with its relevant sentence. */
    readonly found: ReadonlyArray<{ readonly id: string; readonly sentence: readonly [number, number] }>
  }
  const judged: Array<Judged> = []
  for (const q of c.queries) {
    const gains = c.judgments.get(q.id)
    if (gains === undefined) continue
    const relevant = [...gains.keys()].filter((id) => byId.has(id))
    if (relevant.length < 2) continue
    const query = plainQuery(q.text)
    const top = index.rank(query, 10).map((r) => idOfUrl(r.url))
    const found = top.filter((id) => gains.has(id)).flatMap((id) => {
      const sentence = relevantSentence(id, relevant)
      return sentence === undefined ? [] : [{ id, sentence }]
    })
    judged.push({ query, relevant, found })
  }

  const holds = (span: readonly [number, number], start: number, end: number) => span[0] >= start && span[1] <= end

  const passages = passageBudgets.map((budget): PassageScores => {
    let queries = 0
    let highlight = 0
    let firstChars = 0
    let pairs = 0
    let pairHighlight = 0
    let pairFirstChars = 0
    for (const j of judged) {
      if (j.found.length === 0) continue
      const hq = highlightQuery(j.query)
      j.found.forEach((f, k) => {
        const passage = highlightPassages(byId.get(f.id)!.text, hq, { maxChars: budget, passageChars: budget, maxPassages: 1 })[0]
        const byHighlight = passage !== undefined && holds(f.sentence, passage.start, passage.end)
        const byStart = holds(f.sentence, 0, budget)
        pairs++
        if (byHighlight) pairHighlight++
        if (byStart) pairFirstChars++
        if (k === 0) {
          queries++
          if (byHighlight) highlight++
          if (byStart) firstChars++
        }
      })
    }
    return {
      budget,
      queries,
      highlight: highlight / queries,
      firstChars: firstChars / queries,
      pairs,
      pairHighlight: pairHighlight / pairs,
      pairFirstChars: pairFirstChars / pairs
    }
  })

  const count = DEFAULT_MAX_RESULTS.medium
  const reads = DEFAULT_FETCH_TOP_PAGES.medium
  const context = contextBudgets.map((budget): ContextRecall => {
    let queries = 0
    let before = 0
    let after = 0
    for (const j of judged) {
      const query = queryOf([{ role: "user", content: j.query }])
      const hq = highlightQuery(query)
      const sources = selectSources(index.search(plainQuery(query), count * 2).hits, count)
      let relevantSources = 0
      let heldBefore = 0
      let heldAfter = 0
      sources.forEach((source, i) => {
        const id = idOfUrl(source.link)
        if (!j.relevant.includes(id)) return
        const span = relevantSentence(id, j.relevant)
        if (span === undefined) return
        const text = byId.get(id)!.text
        const sentence = collapse(text.slice(span[0], span[1]))
        relevantSources++
        const read = i < reads
        if (collapse(read ? text.slice(0, budget) : source.snippet).includes(sentence)) heldBefore++
        if (collapse(read ? highlights(text, hq, { maxChars: budget }) : source.snippet).includes(sentence)) heldAfter++
      })
      if (relevantSources === 0) continue
      queries++
      before += heldBefore / relevantSources
      after += heldAfter / relevantSources
    }
    return { budget, queries, before: before / queries, after: after / queries }
  })

  return { judgedQueries: judged.length, passages, context }
}
