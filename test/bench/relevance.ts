/**
 * Ranking quality on Cranfield and MED (../shared/data/ir): nDCG@10, MAP@1000 and Recall@100
 * for Periscope, MiniSearch 7 and Orama 3 over the same fields (title and text, title weight
 * as Periscope's default), in one run. A plain BM25 written below with Periscope's analysis
 * checks that the engine's BM25 is BM25: both use k1 0.9, b 0.4 and the text field alone,
 * and must agree within 0.005 nDCG@10.
 *
 * Federation rows: each collection split in two halves (alternate documents), each half served by
 * its own Periscope instance on loopback, both fused by a third through the "iflow" provider
 * (weighted RRF), beside the full index served the same way; nDCG@10 ratio printed (target 0.95x).
 *
 * Retrieval for grounding: for each search_context_size, the sources grounded chat would give
 * the model (the query formed from the user message by queryOf, the engine's ranking asked for
 * twice the count as Grounding asks, then selectSources, the one source-selection rule), with
 * the share of them that are relevant (precision@N) and the share of the relevant documents
 * they cover (recall@N), averaged over judged queries.
 *
 * Xapian rows: Xapian 1.4's BM25 (C++, through python3-xapian) with the same k1, b, Porter
 * stemmer and stop words, title x2 and text only, so speed against it is never bought with quality.
 *
 * Highlights: whether the passage an agent is given from a relevant document (the best highlight
 * passage, core/search/Highlights.ts) holds its relevant sentence more often than the document's
 * first characters do, and grounding's context recall with read pages given as their first
 * characters (before) or as their highlights (after). The collections judge documents, not
 * sentences: support/highlightRelevance.ts says how a relevant sentence is defined from the
 * judgments alone, never from the query's words.
 *
 * Hybrid rows (BM25F fused with an embedding model's vectors, and reranked): only when an
 * embedding server is named by PERISCOPE_BENCH_EMBEDDINGS_URL and _MODEL (support/hybridRelevance.ts).
 *
 * Did you mean rows (support/spellingRelevance.ts): every query with one seeded typo, with and
 * without spelling, beside Xapian with and without its spelling correction; the clean queries
 * through spelling. Expansion rows (support/expansionRelevance.ts): RM3 beside Xapian's ESet, and
 * grounding's sources with expand; with what each costs a query.
 *
 * Run: node test/bench/relevance.ts
 */
import { create, insertMultiple, search as oramaSearch } from "@orama/orama"
import MiniSearch from "minisearch"
import { stemmer } from "stemmer"
import { Analyzer, TokenKind } from "../../core/index/analysis/Analyzer.ts"
import { englishStopWords } from "../../core/index/analysis/StopWords.ts"
import { defaultEngineOptions, type EngineOptions, IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { queryOf } from "../../core/chat/GroundedAnswer.ts"
import { DEFAULT_MAX_RESULTS, selectSources } from "../../core/chat/GroundingSources.ts"
import { expansionRows, rankedUrls } from "./support/expansionRelevance.ts"
import { postSearch, startLiveServer } from "../search/liveSearchServer.ts"
import { hybridRuns } from "./support/hybridRelevance.ts"
import { type HighlightRelevance, measureHighlights } from "./support/highlightRelevance.ts"
import { evaluateRun, type Scores } from "./support/metrics.ts"
import { type Collection, loadCollection } from "./support/smart.ts"
import { spellingRows } from "./support/spellingRelevance.ts"
import { xapianMissing, xapianRanking } from "./support/xapianPeer.ts"

const depth = 1000
const titleWeight = defaultEngineOptions.fieldWeights.title

/** Bag-of-words queries: quotes and leading hyphens would be operators in some engines. */
const plainQuery = (text: string) => text.replace(/["]/g, " ").replace(/(^|\s)[-+]+/g, " ").trim()

const docUrl = (collection: string, id: string) => `https://${collection.toLowerCase()}.ir.invalid/doc/${id.padStart(5, "0")}`
const idOfUrl = (url: string) => String(Number(url.slice(url.lastIndexOf("/") + 1)))

type Run = Map<string, Array<string>>

const periscopeRun = (c: Collection, options: EngineOptions, collapse: boolean): Run => {
  const builder = new IndexBuilder(options)
  builder.add(c.documents.map((d) => ({ url: docUrl(c.name, d.id), title: d.title, text: d.text })))
  const index = builder.build()
  const run: Run = new Map()
  for (const q of c.queries) run.set(q.id, index.rank(plainQuery(q.text), depth, { collapse }).map((r) => idOfUrl(r.url)))
  return run
}

/**
 * Reference BM25 (Lucene's formula: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf saturation
 * with k1, length normalisation with b) over the text field, exhaustive scoring, no pruning.
 * Analysis is Periscope's Analyzer; like the engine it looks a technical token up whole when
 * the collection has it, and counts document length in words (compound tokens excluded).
 */
const referenceRun = (c: Collection, k1: number, b: number): Run => {
  const analyzer = new Analyzer()
  const postings = new Map<string, Map<number, number>>()
  const lengths: Array<number> = []
  c.documents.forEach((d, doc) => {
    let length = 0
    analyzer.analyze(d.text, (term, _p, _s, _e, kind) => {
      let list = postings.get(term)
      if (list === undefined) postings.set(term, (list = new Map()))
      list.set(doc, (list.get(doc) ?? 0) + 1)
      if (kind !== TokenKind.Compound) length++
    })
    lengths.push(length)
  })
  const n = c.documents.length
  const avg = lengths.reduce((a, x) => a + x, 0) / n
  const urls = c.documents.map((d) => docUrl(c.name, d.id))
  const run: Run = new Map()
  for (const q of c.queries) {
    const tokens: Array<{ term: string; kind: number }> = []
    analyzer.analyze(plainQuery(q.text), (term, _p, _s, _e, kind) => void tokens.push({ term, kind }))
    const qtf = new Map<string, number>()
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!
      if (t.kind === TokenKind.Compound) {
        if (!postings.has(t.term)) continue
        while (i + 1 < tokens.length && tokens[i + 1]!.kind === TokenKind.Part) i++
      }
      if (postings.has(t.term)) qtf.set(t.term, (qtf.get(t.term) ?? 0) + 1)
    }
    const scores = new Map<number, number>()
    for (const [term, weight] of qtf) {
      const list = postings.get(term)!
      const idf = Math.log(1 + (n - list.size + 0.5) / (list.size + 0.5))
      for (const [doc, tf] of list) {
        const norm = k1 * (1 - b + (b * lengths[doc]!) / avg)
        scores.set(doc, (scores.get(doc) ?? 0) + weight * idf * ((k1 + 1) * tf) / (tf + norm))
      }
    }
    const ranked = [...scores].sort((x, y) => y[1] - x[1] || (urls[x[0]]! < urls[y[0]]! ? -1 : 1)).slice(0, depth)
    run.set(q.id, ranked.map(([doc]) => c.documents[doc]!.id))
  }
  return run
}

const processTerm = (term: string): string | null => {
  const lower = term.toLowerCase()
  return englishStopWords.has(lower) ? null : stemmer(lower)
}

const miniSearchRun = (c: Collection): Run => {
  const mini = new MiniSearch<{ id: string; title: string; text: string }>({ fields: ["title", "text"], processTerm })
  mini.addAll(c.documents)
  const run: Run = new Map()
  for (const q of c.queries) {
    const results = mini.search(plainQuery(q.text), { boost: { title: titleWeight }, combineWith: "OR" })
    run.set(q.id, results.slice(0, depth).map((r) => String(r.id)))
  }
  return run
}

const oramaRun = async (c: Collection): Promise<Run> => {
  const db = create({
    schema: { docId: "string", title: "string", text: "string" } as const,
    components: { tokenizer: { language: "english", stemming: true, stopWords: [...englishStopWords] } }
  })
  await insertMultiple(db, c.documents.map((d) => ({ docId: d.id, title: d.title, text: d.text })))
  const run: Run = new Map()
  for (const q of c.queries) {
    const results = await oramaSearch(db, {
      term: plainQuery(q.text),
      properties: ["title", "text"],
      boost: { title: titleWeight },
      limit: depth
    })
    run.set(q.id, results.hits.map((h) => String(h.document.docId)))
  }
  return run
}

/**
 * The same queries over HTTP: the full index on one Periscope, and two halves on two Periscopes
 * fused by a third through the iflow provider. 100 results per query, like any client asking num 100.
 */
const federationRuns = async (c: Collection): Promise<Array<[string, Run]>> => {
  const serve = (docs: Collection["documents"]) => {
    const builder = new IndexBuilder()
    builder.add(docs.map((d) => ({ url: docUrl(c.name, d.id), title: d.title, text: d.text })))
    return startLiveServer({}, { _tag: "Layer", layer: EngineSearch.layer(builder.build()) })
  }
  const full = await serve(c.documents)
  const halfA = await serve(c.documents.filter((_, i) => i % 2 === 0))
  const halfB = await serve(c.documents.filter((_, i) => i % 2 === 1))
  process.env.PERISCOPE_BENCH_PEER_KEY = (await import("../search/liveSearchServer.ts")).LIVE_KEY
  const fuser = await startLiveServer({
    providers: [
      { name: "half-a", kind: "iflow", baseUrl: halfA.url, apiKeyEnv: "PERISCOPE_BENCH_PEER_KEY", timeoutMs: 10_000 },
      { name: "half-b", kind: "iflow", baseUrl: halfB.url, apiKeyEnv: "PERISCOPE_BENCH_PEER_KEY", timeoutMs: 10_000 }
    ],
    deadlineMs: 10_000,
    cache: { maxEntries: 0 }
  }, { _tag: "Layer", layer: EngineSearch.layer(EngineSearch.emptyIndex()) })
  try {
    const fullRun: Run = new Map()
    const fusedRun: Run = new Map()
    for (const q of c.queries) {
      const keywords = plainQuery(q.text)
      const single = await postSearch(full.url, "webSearch", { keywords, num: 100 })
      fullRun.set(q.id, single.body.data.organic.map((r: { link: string }) => idOfUrl(r.link)))
      const fused = await postSearch(fuser.url, "webSearch", { keywords, num: 100, sources: ["half-a", "half-b"] })
      if (fused.status !== 200) throw new Error(`fused search failed: ${JSON.stringify(fused.body)}`)
      fusedRun.set(q.id, fused.body.data.organic.map((r: { link: string }) => idOfUrl(r.link)))
    }
    return [["Periscope full index over HTTP (num 100)", fullRun], ["Two halves on two Periscopes fused via iflow (RRF, num 100)", fusedRun]]
  } finally {
    for (const server of [fuser, full, halfA, halfB]) await server.close()
  }
}

/** Xapian's BM25 runs, or none (with the reason printed) where python3-xapian is missing. */
const xapianRuns = (c: Collection): Array<[string, Run]> => {
  const missing = xapianMissing()
  if (missing !== undefined) {
    if (process.env.CI === "true") throw new Error(`Xapian peer unavailable under CI=true: ${missing}`)
    console.log(`[skip] Xapian rows: ${missing}`)
    return []
  }
  const queries = c.queries.map((q) => ({ id: q.id, text: plainQuery(q.text) }))
  return [
    [`Xapian 1.4 BM25 (Porter, title x${titleWeight})`, xapianRanking(c.documents, queries, titleWeight, depth)],
    ["Xapian 1.4 BM25, text only", xapianRanking(c.documents, queries, 0, depth)]
  ]
}

const format = (x: number) => x.toFixed(4)

/** Precision@N and recall@N of the sources grounding selects, per search_context_size; `expand`: its search expanded. */
const groundingRetrieval = (c: Collection, expand = false): Array<{ size: string; n: number; precision: number; recall: number; queries: number }> => {
  const builder = new IndexBuilder()
  builder.add(c.documents.map((d) => ({ url: docUrl(c.name, d.id), title: d.title, text: d.text })))
  const index = builder.build()
  return (["low", "medium", "high"] as const).map((size) => {
    const n = DEFAULT_MAX_RESULTS[size]
    let precision = 0
    let recall = 0
    let queries = 0
    for (const q of c.queries) {
      const gains = c.judgments.get(q.id)
      if (gains === undefined) continue
      const relevant = [...gains.values()].filter((g) => g > 0).length
      if (relevant === 0) continue
      const query = queryOf([{ role: "user", content: q.text }])
      const hits = rankedUrls(index, plainQuery(query), n * 2, expand).map((link) => ({ title: "", link, snippet: "", date: null }))
      const sources = selectSources(hits, n)
      const found = sources.filter((s) => (gains.get(idOfUrl(s.link)) ?? 0) > 0).length
      precision += found / n
      recall += found / relevant
      queries++
    }
    return { size, n, precision: precision / queries, recall: recall / queries, queries }
  })
}

/** Passage budgets (characters) the highlight and the first characters are compared at. */
const PASSAGE_BUDGETS = [200, 300, 500]
/** Characters of a read page given to the model: grounding's default, and a tenth of it (these abstracts are a tenth of a web page's text). */
const CONTEXT_BUDGETS = [4000, 400]

const percent = (x: number) => `${(x * 100).toFixed(1)}%`

/** Prints the highlight tables; true when the highlight holds the relevant sentence more often than the first characters at every budget. */
const reportHighlights = (name: string, headline: HighlightRelevance, withTitle: HighlightRelevance): boolean => {
  console.log(`\nHighlights (${name}): the relevant document's best highlight passage against its first N characters, ${headline.judgedQueries} queries with two or more relevant documents`)
  console.log("| relevant sentence | N | queries | highlight holds it | first N characters hold it | pairs | highlight | first N |\n|---|---|---|---|---|---|---|---|")
  for (const [label, r] of [["not the title (headline)", headline], ["the title may be it", withTitle]] as const) {
    for (const p of r.passages) {
      console.log(`| ${label} | ${p.budget} | ${p.queries} | ${percent(p.highlight)} | ${percent(p.firstChars)} | ${p.pairs} | ${percent(p.pairHighlight)} | ${percent(p.pairFirstChars)} |`)
    }
  }
  console.log(`Grounding context recall (${name}): relevant sources whose relevant sentence the model reads (medium: ${DEFAULT_MAX_RESULTS.medium} sources, the top ones read)`)
  console.log("| relevant sentence | characters per read page | queries | before: first characters | after: highlights |\n|---|---|---|---|---|")
  for (const [label, r] of [["not the title (headline)", headline], ["the title may be it", withTitle]] as const) {
    for (const c of r.context) console.log(`| ${label} | ${c.budget} | ${c.queries} | ${percent(c.before)} | ${percent(c.after)} |`)
  }
  const beats = headline.passages.every((p) => p.highlight > p.firstChars)
  console.log(`Highlights vs first N characters (headline, per query): ${headline.passages.map((p) => `N ${p.budget}: ${percent(p.highlight)} vs ${percent(p.firstChars)}`).join("; ")} (${beats ? "highlights better at every N" : "FIRST CHARACTERS BETTER at some N"})`)
  return beats
}

const main = async () => {
  const { k1, b } = defaultEngineOptions
  const bm25Only: EngineOptions = { fieldWeights: { title: 0, body: 1, url: 0 }, proximity: 0, nearDuplicateBits: -1 }
  let failures = 0
  for (const key of ["cranfield", "med"] as const) {
    const loaded = loadCollection(key)
    if (loaded._tag === "Missing") {
      if (process.env.CI === "true") throw new Error(`relevance collection missing under CI=true: ${loaded.reason}`)
      console.log(`[skip] ${key}: ${loaded.reason}`)
      continue
    }
    const c = loaded.collection
    const rows: Array<[string, Scores]> = []
    const judge = (name: string, run: Run) => rows.push([name, evaluateRun(run, c.judgments)])
    judge("Periscope (defaults: BM25F title+text, proximity)", periscopeRun(c, {}, true))
    judge("Periscope BM25F title+text, no proximity", periscopeRun(c, { proximity: 0 }, true))
    judge("Periscope BM25, text only", periscopeRun(c, bm25Only, false))
    judge("Reference BM25, text only", referenceRun(c, k1, b))
    judge(`MiniSearch 7 (BM25+, Porter, title x${titleWeight})`, miniSearchRun(c))
    judge(`Orama 3 (BM25, stemming, title x${titleWeight})`, await oramaRun(c))
    for (const [name, run] of await federationRuns(c)) judge(name, run)
    for (const [name, run] of xapianRuns(c)) judge(name, run)
    for (const [name, run] of await hybridRuns(c, docUrl, idOfUrl, plainQuery, depth)) judge(name, run)
    const spelling = spellingRows(c, docUrl, idOfUrl, plainQuery, depth, titleWeight, 56)
    for (const [name, run] of spelling.rows) judge(name, run)
    const expansion = expansionRows(c, docUrl, idOfUrl, plainQuery, depth, titleWeight)
    for (const [name, run] of expansion.rows) judge(name, run)
    console.log(`\n${c.name}: ${c.documents.length} documents, ${rows[0]![1].queries} judged queries`)
    console.log(`| engine | nDCG@10 | MAP@1000 | Recall@100 |\n|---|---|---|---|`)
    for (const [name, s] of rows) console.log(`| ${name} | ${format(s.ndcg10)} | ${format(s.map)} | ${format(s.recall100)} |`)
    const engine = rows[2]![1].ndcg10
    const reference = rows[3]![1].ndcg10
    const agree = Math.abs(engine - reference) <= 0.005
    console.log(`BM25 check: |Periscope - reference| nDCG@10 = ${Math.abs(engine - reference).toFixed(4)} (${agree ? "within" : "OUTSIDE"} 0.005)`)
    const best = rows[0]![1].ndcg10
    const peersBest = Math.max(rows[4]![1].ndcg10, rows[5]![1].ndcg10)
    console.log(`Periscope vs best peer nDCG@10: ${format(best)} vs ${format(peersBest)} (${best > peersBest ? "Periscope best" : "PEER BETTER"})`)
    const federated = rows[7]![1].ndcg10 / rows[6]![1].ndcg10
    console.log(`Federation: fused halves vs full index nDCG@10 = ${format(rows[7]![1].ndcg10)} vs ${format(rows[6]![1].ndcg10)} (${federated.toFixed(3)}x, target >= 0.95x)`)
    const scores = (name: string) => rows.find(([n]) => n === name)![1]
    const typoOn = scores("Periscope, one typo per query, spelling on").ndcg10
    const typoOff = scores("Periscope, one typo per query, spelling off").ndcg10
    const cleanOn = scores("Periscope, clean queries, spelling on").ndcg10
    const recovered = typoOn / best
    const cleanKept = cleanOn >= best
    console.log(
      `Did you mean: one typo per query nDCG@10 ${format(typoOn)} with spelling, ${format(typoOff)} without: ${recovered.toFixed(3)}x the clean queries' ` +
        `(target >= 0.9x); clean queries through spelling ${format(cleanOn)} vs ${format(best)} (${cleanKept ? "nothing lost" : "LOST"}); ` +
        `typos corrected back ${spelling.fixed}/${spelling.queries}, a corrected query searched for ${spelling.searched}; ` +
        `spelling per query (median) ${spelling.cleanMicros.toFixed(1)} µs clean, ${spelling.typoMicros.toFixed(1)} µs misspelt`
    )
    const rm3 = rows.find(([n]) => n.startsWith("Periscope + RM3"))![1]
    const eset = rows.find(([n]) => n.startsWith("Xapian 1.4 BM25 + its ESet"))?.[1]
    const xapian = rows.find(([n]) => n.startsWith("Xapian 1.4 BM25 (Porter"))?.[1]
    const wins = rm3.ndcg10 > best && rm3.map > rows[0]![1].map
    console.log(
      `Expansion: nDCG@10 ${format(rm3.ndcg10)} vs ${format(best)}, MAP ${format(rm3.map)} vs ${format(rows[0]![1].map)} (${wins ? "wins on both" : "DOES NOT WIN on both"})` +
        (eset === undefined || xapian === undefined ? "" : `; Xapian's ESet nDCG@10 ${format(eset.ndcg10)} vs ${format(xapian.ndcg10)}, MAP ${format(eset.map)} vs ${format(xapian.map)}`) +
        `; a query served (10 results, snippets, median) ${expansion.expandedMs.toFixed(3)} ms expanded vs ${expansion.plainMs.toFixed(3)} ms (${(expansion.expandedMs / expansion.plainMs).toFixed(2)}x, target <= 3x)`
    )
    console.log(`\nRetrieval for grounding (${c.name}): sources given to the model per search_context_size, the search as typed and expanded`)
    console.log(`| search_context_size | sources N | precision@N | recall@N | precision@N expanded | recall@N expanded |\n|---|---|---|---|---|---|`)
    const groundingExpanded = groundingRetrieval(c, true)
    groundingRetrieval(c).forEach((r, i) => {
      const e = groundingExpanded[i]!
      console.log(`| ${r.size} | ${r.n} | ${format(r.precision)} | ${format(r.recall)} | ${format(e.precision)} | ${format(e.recall)} |`)
    })
    const highlightsOf = (titleCounts: boolean) =>
      measureHighlights(c, (id) => docUrl(c.name, id), idOfUrl, plainQuery, PASSAGE_BUDGETS, CONTEXT_BUDGETS, titleCounts)
    const highlightsBetter = reportHighlights(c.name, highlightsOf(false), highlightsOf(true))
    if (!agree || best <= peersBest || !highlightsBetter || recovered < 0.9 || !cleanKept) failures++
  }
  if (failures > 0) process.exitCode = 1
}

await main()
