/**
 * A built, immutable search index over pages and their images: what `search` and
 * `searchImages` answer from. Build one with IndexBuilder or read one from a snapshot.
 * Every method is synchronous and never throws on any query string.
 */
import { type Analyzer, TokenKind } from "./analysis/Analyzer.ts"
import { Analyzers } from "./analysis/Analyzers.ts"
import { analysisNamed, englishAnalysis, type LanguageAnalysis } from "./analysis/LanguageAnalysis.ts"
import type { ImageRecord, IndexDocument } from "./Document.ts"
import type { ResolvedEngineOptions } from "./EngineOptions.ts"
import { type CollectionStatistics, endOfPostings, type InvertedIndex } from "./InvertedIndex.ts"
import { primaryLanguage } from "./LanguageTag.ts"
import { type PageLanguages, PageLanguagesWriter } from "./PageLanguages.ts"
import { type AnalysisCounts, type QueryOptions, type QueryReading, readQuery, sharedAnalyses } from "./QueryLanguage.ts"
import { type ParsedQuery, parseQuery, type SiteFilter } from "./QueryParser.ts"
import {
  type CompiledQuery,
  type Phrase,
  proximityDepth,
  type RankedDocuments,
  type RankStrategy,
  rankTopK,
  rerankByProximity
} from "./Ranker.ts"
import { makeSnippet, type SnippetPlace, snippetIn, type SnippetTerms } from "./Snippet.ts"
import { placeReach, snippetPlaces } from "./SnippetPlaces.ts"
import type { StoredFields } from "./StoredFields.ts"
import { termsInField } from "./TermPresence.ts"
import { reversedHost } from "./UrlNormalizer.ts"
import type { PassageVectors } from "./Vectors.ts"

export type { QueryOptions, QueryReading } from "./QueryLanguage.ts"

/** Stored page fields, in record order. */
export const PageField = { Url: 0, Title: 1, Text: 2, Date: 3, Lang: 4 } as const
/** Stored image fields, in record order. */
export const ImageField = { Url: 0, Title: 1, Alt: 2, Caption: 3, Heading: 4 } as const

/** Everything an index is made of; snapshots write and read exactly this. */
export interface SearchIndexParts {
  readonly options: ResolvedEngineOptions
  readonly web: InvertedIndex
  readonly pages: StoredFields
  /** Host id of each page: index into `hosts` (reversed host names, sorted). */
  readonly pageHost: Int32Array
  readonly hosts: StoredFields
  /** Near-duplicate cluster of each page (the smallest page id in it). */
  readonly pageCluster: Int32Array
  /**
   * (page, positions its text took) pairs by page, for the pages whose text is long (see
   * SnippetPlaces); empty in a snapshot written before them, whose snippets scan whole texts.
   */
  readonly textPositions: Int32Array
  /** Images of page p are pageImages[p] .. pageImages[p + 1]. */
  readonly pageImages: Uint32Array
  readonly images: InvertedIndex
  readonly imageFields: StoredFields
  readonly imagePage: Int32Array
  /** Same-URL images share a cluster (the smallest image id with that URL). */
  readonly imageCluster: Int32Array
  /** Width and height of each image; -1 when unknown. */
  readonly imageSize: Int32Array
  /** The passages' embedding vectors (hybrid retrieval, HybridRank.ts); none in a snapshot built without an embedding server. */
  readonly vectors?: PassageVectors | undefined
  /**
   * Each page's language and the analysis its words got; none in a snapshot written before
   * languages, whose pages all got English's and are in the language they declare.
   */
  readonly pageLanguages?: PageLanguages | undefined
}

/** One ranked page, for benchmarks and tools that need ids and scores rather than hits. */
export interface RankedPage {
  readonly doc: number
  readonly url: string
  readonly score: number
}

/** A ranked page as the engine finds it; backends map it to their wire shape. */
export interface PageHit {
  readonly title: string
  readonly link: string
  readonly snippet: string
  /** ISO 8601 or null when the page states no date. */
  readonly date: string | null
}

/** A ranked image: its URL, the page it is on, a title, and its size in pixels when the page said. */
export interface ImageHit {
  readonly url: string
  readonly refUrl: string
  readonly title: string
  readonly width: number | undefined
  readonly height: number | undefined
}

export interface WebSearchAnswer {
  readonly query: string
  readonly hits: ReadonlyArray<PageHit>
}

/** Sizes are stored as -1 when the page did not say. */
const knownSize = (pixels: number): number | undefined => (pixels >= 0 ? pixels : undefined)

/** The most results one call returns; the wire allows 100. */
export const maxResults = 1000

/**
 * Distinct words scored per query. Natural-language questions stay well below it (Cranfield's
 * longest has 28, MED's 35); a pasted page keeps its 48 most telling words.
 */
export const maxQueryTerms = 48

/** A query's stems in its order, without the exact forms after them: the words snippets look for. */
const stemIds = (query: CompiledQuery): Array<number> => {
  const ids: Array<number> = []
  for (const t of query.terms) if (t.exactForm !== true) ids.push(t.termId)
  return ids
}

/** A query planned against one of an index's collections (pages or images). */
export interface Plan {
  readonly query: CompiledQuery
  /** Snippet words and weights; made only when a caller shows snippets. */
  readonly snippet: () => SnippetTerms
}

const noSnippetTerms: SnippetTerms = { weights: new Map() }

const clampLimit = (limit: number): number =>
  typeof limit === "number" && Number.isFinite(limit) ? Math.max(0, Math.min(maxResults, Math.floor(limit))) : 0

export class SearchIndex {
  readonly parts: SearchIndexParts
  readonly documentCount: number
  readonly imageCount: number
  private readonly analyzer: Analyzer
  /** The analyzers of the analyses the pages got: snippets read each page in its own. */
  private readonly analyzers: Analyzers
  /** Pages per analysis. */
  readonly analysisCounts: AnalysisCounts
  /** Pages per entry of the languages table. */
  private readonly entryCounts: Int32Array
  /** The pages' field that indexes their text (-1 when its weight is 0 and it is not indexed). */
  private readonly bodyField: number
  private hostKeys: Array<string> | undefined
  /** A snapshot written before languages: its pages' languages, read from what they declare when a query filters by one. */
  private declaredLanguages: PageLanguages | undefined
  /** Whether a real share of the pages (minorShare) was analysed in another language than English, and so holds exact forms. */
  private readonly holdsForms: boolean
  /** The analyzers queries are read with: with exact forms (queryAnalyzerOf). */
  private readonly queryAnalyzers: Analyzers

  constructor(parts: SearchIndexParts) {
    this.parts = parts
    this.documentCount = parts.web.documentCount
    this.imageCount = parts.images.documentCount
    this.analyzers = new Analyzers({ stemming: parts.options.stemming, cacheSize: 20_000 })
    this.queryAnalyzers = new Analyzers({ stemming: parts.options.stemming, cacheSize: 20_000, exactForms: true })
    this.analyzer = this.analyzers.of(englishAnalysis)
    this.bodyField = parts.web.meta.fields.findIndex((f) => f.name === "body")
    const counts = new Map<string, number>()
    const languages = parts.pageLanguages
    const perEntry = new Int32Array(languages?.table.length ?? 0)
    if (languages === undefined) {
      if (this.documentCount > 0) counts.set(englishAnalysis.name, this.documentCount)
    } else {
      for (const id of languages.ids) perEntry[id]!++
      languages.table.forEach((entry, i) => perEntry[i]! > 0 && counts.set(entry.analysis, (counts.get(entry.analysis) ?? 0) + perEntry[i]!))
    }
    this.analysisCounts = counts
    // A few pages detected in another language (names, formulas) do not make a query read in English look for forms.
    this.holdsForms = [...sharedAnalyses(counts)].some((name) => name !== englishAnalysis.name)
    this.entryCounts = perEntry
  }

  /** The analysis most of the pages in `language` got; undefined when no page is in it. */
  languageAnalysis(language: string): string | undefined {
    const languages = this.parts.pageLanguages
    // Before languages every page got English's.
    if (languages === undefined) return this.documentCount > 0 ? englishAnalysis.name : undefined
    let best = -1
    for (let i = 0; i < languages.table.length; i++) {
      if (languages.table[i]!.language === language && this.entryCounts[i]! > 0 && (best < 0 || this.entryCounts[i]! > this.entryCounts[best]!)) best = i
    }
    return best < 0 ? undefined : languages.table[best]!.analysis
  }

  /**
   * The analyzer a query is read with in an analysis: with the words' exact forms, which pages of
   * another language than English hold beside their stems (none in a snapshot written before them).
   */
  private queryAnalyzerOf(analysis: LanguageAnalysis): Analyzer {
    return analysis.name === englishAnalysis.name ? this.analyzer : this.queryAnalyzers.of(analysis)
  }

  /** The analysis page `doc`'s words were indexed with. */
  pageAnalysis(doc: number): LanguageAnalysis {
    const languages = this.parts.pageLanguages
    if (languages === undefined) return englishAnalysis
    return analysisNamed(languages.table[languages.ids[doc]!]!.analysis) ?? englishAnalysis
  }

  /** The analyzer page `doc`'s words were indexed with. */
  private pageAnalyzer(doc: number): Analyzer {
    // A snapshot names only analyses this engine has: Snapshot.ts checks.
    return this.parts.pageLanguages === undefined ? this.analyzer : this.analyzers.of(this.pageAnalysis(doc))
  }

  /** Each page's language: as built, or (a snapshot written before languages) as declared. */
  private pageLanguages(): PageLanguages {
    if (this.parts.pageLanguages !== undefined) return this.parts.pageLanguages
    if (this.declaredLanguages === undefined) {
      const writer = new PageLanguagesWriter()
      for (let doc = 0; doc < this.documentCount; doc++) writer.add(primaryLanguage(this.parts.pages.get(doc, PageField.Lang)) ?? "", englishAnalysis.name)
      this.declaredLanguages = writer.finish()
    }
    return this.declaredLanguages
  }

  /** How `parsed` is read here (QueryLanguage.ts). */
  reading(parsed: ParsedQuery, options?: QueryOptions): QueryReading {
    return readQuery(parsed, options, this.analysisCounts, (language) => this.languageAnalysis(language))
  }

  /** Accepts the pages (with `images`, the images of pages) in `language`; null when no page is in it. */
  private languageFilter(language: string, images: boolean): ((doc: number) => boolean) | null {
    const { table, ids } = this.pageLanguages()
    const wanted = new Uint8Array(table.length)
    let any = false
    for (let i = 0; i < table.length; i++) {
      if (table[i]!.language !== language) continue
      wanted[i] = 1
      any = true
    }
    if (!any) return null
    const imagePage = this.parts.imagePage
    return images ? (image: number) => wanted[ids[imagePage[image]!]!] === 1 : (doc: number) => wanted[ids[doc]!] === 1
  }

  get options(): ResolvedEngineOptions {
    return this.parts.options
  }

  /** Ranked pages with query-dependent snippets; near-duplicates collapsed to the best one. */
  search(query: string, limit: number, options?: QueryOptions): WebSearchAnswer {
    const keywords = typeof query === "string" ? query : ""
    const n = clampLimit(limit)
    const parsed = parseQuery(keywords)
    const plan = n === 0 ? undefined : this.plan(this.parts.web, parsed, false, this.reading(parsed, options))
    if (plan === undefined) return { query: keywords, hits: [] }
    const { docs, termsIn } = this.retrieve(this.parts.web, plan.query, n, this.parts.pageCluster)
    return { query: keywords, hits: this.pageHits(plan, docs, termsIn) }
  }

  /**
   * The hits of ranked pages `docs` of a planned query, with snippets; `termsIn`: the words each
   * holds in a field, when ranking found them (proximity re-ranking does).
   */
  pageHits(plan: Plan, docs: Int32Array, termsIn?: RankedDocuments["termsIn"]): Array<PageHit> {
    const pages = this.parts.pages
    const snippetTerms = docs.length > 0 ? plan.snippet() : noSnippetTerms
    // The words each page's text holds (the body field is its text): a snippet need not look for the others.
    const inText = docs.length === 0 || this.bodyField < 0
      ? undefined
      : termsIn?.field === this.bodyField
      ? termsIn.masks
      : termsInField(this.parts.web, stemIds(plan.query), docs, this.bodyField)
    const places = docs.length === 0 || this.bodyField < 0 ? undefined : this.snippetPlaces(plan.query, docs)
    return Array.from(docs, (doc, i): PageHit => {
      const link = pages.get(doc, PageField.Url)
      const date = pages.get(doc, PageField.Date)
      return {
        title: pages.get(doc, PageField.Title) || link,
        link,
        // Bit i of a mask: the i-th query word, in the order of the snippet words' map.
        snippet: this.snippet(doc, snippetTerms, inText === undefined ? -1 : inText[i]!, places?.[i]),
        date: date.length > 0 ? date : null
      }
    })
  }

  /**
   * A page's snippet: from the piece of its text around `place` (given for long pages) when the
   * words found there are as many as the postings put there, else from its whole text.
   */
  private snippet(doc: number, terms: SnippetTerms, present: number, place: SnippetPlace | undefined): string {
    const pages = this.parts.pages
    if (place !== undefined) {
      const length = pages.byteLength(doc, PageField.Text)
      const at = Math.floor(place.at * length)
      const from = Math.max(0, at - placeReach)
      const to = Math.min(length, at + placeReach)
      const part = pages.getPart(doc, PageField.Text, from, to)
      const found = snippetIn(this.pageAnalyzer(doc), part, { before: from > 0, after: to < length }, terms, present, place.words)
      if (found !== undefined) return found
    }
    return makeSnippet(this.pageAnalyzer(doc), pages.get(doc, PageField.Text), terms, present)
  }

  /** Where the long pages among `docs` have their snippets, from the query words' positions in their text. */
  private snippetPlaces(query: CompiledQuery, docs: Int32Array) {
    const web = this.parts.web
    const stems = stemIds(query)
    const weights = Float64Array.from(stems, (id) => web.idf(id))
    return snippetPlaces(web, stems, weights, docs, this.bodyField, this.parts.textPositions)
  }

  /** Ranked images; one result per image URL. */
  searchImages(query: string, limit: number, options?: QueryOptions): ReadonlyArray<ImageHit> {
    const keywords = typeof query === "string" ? query : ""
    const n = clampLimit(limit)
    const parsed = parseQuery(keywords)
    const plan = n === 0 ? undefined : this.plan(this.parts.images, parsed, true, this.reading(parsed, options))
    if (plan === undefined) return []
    return this.imageHits(this.retrieve(this.parts.images, plan.query, n, this.parts.imageCluster).docs)
  }

  /** The hits of ranked images `docs`. */
  imageHits(docs: Int32Array): Array<ImageHit> {
    const fields = this.parts.imageFields
    const size = this.parts.imageSize
    return Array.from(docs, (image): ImageHit => ({
      url: fields.get(image, ImageField.Url),
      refUrl: this.parts.pages.get(this.parts.imagePage[image]!, PageField.Url),
      title: fields.get(image, ImageField.Title) || fields.get(image, ImageField.Alt) || fields.get(image, ImageField.Caption),
      width: knownSize(size[2 * image]!),
      height: knownSize(size[2 * image + 1]!)
    }))
  }

  /**
   * A page query as the ranking sees it (its words' term ids and weights, strongest first, its
   * phrases, exclusions and site filters), or undefined when nothing can match: what `rank`
   * ranks, and what tools that rank `parts.web` themselves start from.
   */
  compile(query: string, options?: QueryOptions): CompiledQuery | undefined {
    const parsed = parseQuery(typeof query === "string" ? query : "")
    return this.plan(this.parts.web, parsed, false, this.reading(parsed, options))?.query
  }

  /**
   * Ranked page ids, urls and BM25F scores without snippets, for relevance evaluation.
   * `collapse: false` keeps near-duplicates (plain BM25 output); `strategy` forces one ranking strategy (tests, benches).
   */
  rank(
    query: string,
    limit: number,
    options: { readonly collapse?: boolean; readonly strategy?: RankStrategy } & QueryOptions = {}
  ): ReadonlyArray<RankedPage> {
    const compiled = this.compile(query, options)
    const n = clampLimit(limit)
    if (compiled === undefined || n === 0) return []
    const cluster = options.collapse === false ? undefined : this.parts.pageCluster
    const ranked = this.retrieve(this.parts.web, compiled, n, cluster, options.strategy)
    return Array.from(ranked.docs, (doc, i) => ({
      doc,
      url: this.parts.pages.get(doc, PageField.Url),
      score: ranked.scores[i]!
    }))
  }

  /** The stored documents, in page id (URL) order, images included. */
  *documents(): Iterable<IndexDocument> {
    const { pages, pageImages, imageFields, imageSize } = this.parts
    for (let doc = 0; doc < this.documentCount; doc++) {
      const images: Array<ImageRecord> = []
      for (let i = pageImages[doc]!; i < pageImages[doc + 1]!; i++) {
        const width = imageSize[2 * i]!
        const height = imageSize[2 * i + 1]!
        images.push({
          url: imageFields.get(i, ImageField.Url),
          ...optional("title", imageFields.get(i, ImageField.Title)),
          ...optional("alt", imageFields.get(i, ImageField.Alt)),
          ...optional("caption", imageFields.get(i, ImageField.Caption)),
          ...optional("heading", imageFields.get(i, ImageField.Heading)),
          ...(width >= 0 ? { width } : {}),
          ...(height >= 0 ? { height } : {})
        })
      }
      const date = pages.get(doc, PageField.Date)
      const lang = pages.get(doc, PageField.Lang)
      yield {
        url: pages.get(doc, PageField.Url),
        title: pages.get(doc, PageField.Title),
        text: pages.get(doc, PageField.Text),
        date: date.length > 0 ? date : null,
        ...(lang.length > 0 ? { lang } : {}),
        ...(images.length > 0 ? { images } : {})
      }
    }
  }

  // ---- planning --------------------------------------------------------------------------

  /**
   * A parsed query planned against the pages (or, with `images`, the images) for a caller that
   * ranks several indexes as one (SegmentedIndex): `known` says which technical tokens
   * another of them holds whole, so that every index reads such a token alike, and `reading`
   * how every index reads the query (by default, as this one alone would).
   */
  planFor(parsed: ParsedQuery, images: boolean, known: (term: string) => boolean, reading: QueryReading = this.reading(parsed)): Plan | undefined {
    return this.plan(images ? this.parts.images : this.parts.web, parsed, images, reading, known)
  }

  /**
   * The best `k` pages (or images) of a planned query by BM25F alone, one per near-duplicate
   * cluster, leaving out the documents `hidden` says (pages shadowed by newer versions elsewhere).
   */
  rankPlanned(plan: Plan, k: number, images: boolean, hidden?: (doc: number) => boolean): RankedDocuments {
    const index = images ? this.parts.images : this.parts.web
    const accept = plan.query.accept
    const query = hidden === undefined ? plan.query : { ...plan.query, accept: (doc: number) => !hidden(doc) && (accept === undefined || accept(doc)) }
    return rankTopK(index, query, k, images ? this.parts.imageCluster : this.parts.pageCluster)
  }

  /** Proximity re-ranking of all of `ranked` (at most proximityDepth documents), as search applies it to its best. */
  rerankPlanned(plan: Plan, ranked: RankedDocuments, images: boolean): RankedDocuments {
    return rerankByProximity(images ? this.parts.images : this.parts.web, plan.query, ranked, this.parts.options.proximity, true)
  }

  /**
   * This index scored as part of a larger collection (InvertedIndex.withStatistics), sharing
   * its arrays: for searching it beside a segment of added pages.
   */
  withStatistics(web: CollectionStatistics, images: CollectionStatistics): SearchIndex {
    return new SearchIndex({ ...this.parts, web: this.parts.web.withStatistics(web), images: this.parts.images.withStatistics(images) })
  }

  /** Analyses the parsed query against one index; undefined when nothing can match. */
  private plan(index: InvertedIndex, parsed: ParsedQuery, images: boolean, reading: QueryReading, known?: (term: string) => boolean): Plan | undefined {
    const inLanguage = reading.language === undefined ? undefined : this.languageFilter(reading.language, images)
    if (inLanguage === null) return undefined
    const analyzer = this.queryAnalyzerOf(reading.analysis)
    const weights = new Map<number, number>()
    const addTerm = (id: number) => weights.set(id, (weights.get(id) ?? 0) + 1)
    // A word's exact form scores beside its stem: pages that write it as the query does rank first.
    const forms = new Set<number>()
    for (const term of this.resolve(index, analyzer, parsed.words, known, true)) {
      if (term.id < 0) continue
      addTerm(term.id)
      if (term.form) forms.add(term.id)
    }
    const phrases: Array<Phrase> = []
    const requiredTermIds: Array<number> = []
    for (const text of parsed.phrases) {
      const terms = this.resolve(index, analyzer, text, known)
      if (terms.length === 0) continue
      if (terms.some((t) => t.id < 0)) return undefined // a phrase with an unknown word matches nothing
      for (const t of terms) addTerm(t.id)
      if (terms.length === 1) requiredTermIds.push(terms[0]!.id)
      else phrases.push({ termIds: terms.map((t) => t.id), offsets: terms.map((t) => t.position - terms[0]!.position) })
    }
    if (weights.size === 0) return undefined
    if (weights.size > maxQueryTerms) {
      // A pasted paragraph: keep the words that weigh most (query count times idf); phrase words always stay, exact forms go first.
      const required = new Set(phrases.flatMap((p) => p.termIds).concat(requiredTermIds))
      const ranked = [...weights].sort((a, b) =>
        Number(required.has(b[0])) - Number(required.has(a[0])) || Number(forms.has(a[0])) - Number(forms.has(b[0])) ||
        b[1] * index.idf(b[0]) - a[1] * index.idf(a[0]) || a[0] - b[0]
      )
      for (const [id] of ranked.slice(maxQueryTerms)) if (!required.has(id)) weights.delete(id)
    }
    const excluded: Array<Phrase> = []
    for (const text of parsed.excluded) {
      const terms = this.resolve(index, analyzer, text, known)
      if (terms.length === 0 || terms.some((t) => t.id < 0)) continue // cannot occur in any document
      excluded.push({ termIds: terms.map((t) => t.id), offsets: terms.map((t) => t.position - terms[0]!.position) })
    }
    const site = this.siteFilter(parsed.sites, parsed.excludedSites, images)
    if (site === null) return undefined
    const siteAccept = site?.accept
    const accept = inLanguage === undefined ? siteAccept : siteAccept === undefined ? inLanguage : (doc: number) => siteAccept(doc) && inLanguage(doc)
    // Strongest word first (by the best score it can add): a document's score is summed in this
    // order, and term-at-a-time ranking reads the words a document must hold before the others.
    // Exact forms come after every stem: snippets look for the stems alone, and bit i of a
    // ranking's term mask is then the i-th stem.
    const ordered = [...weights].sort((a, b) =>
      Number(forms.has(a[0])) - Number(forms.has(b[0])) || index.termMaxScore(b[0], b[1]) - index.termMaxScore(a[0], a[1]) || a[0] - b[0]
    )
    const snippet = () => {
      const terms = new Map<string, number>()
      for (const [id] of ordered) if (!forms.has(id)) terms.set(index.termText(id), index.idf(id))
      return { weights: terms }
    }
    return {
      query: {
        terms: ordered.map(([termId, weight]) => (forms.has(termId) ? { termId, weight, exactForm: true } : { termId, weight })),
        phrases,
        requiredTermIds,
        excluded,
        accept,
        skipTo: site?.skipTo
      },
      snippet
    }
  }

  /**
   * Analysed terms of a query text with their ids (-1 when unknown) and positions. A technical
   * token ("node.js") is looked up whole; only when the index lacks it do its parts count. A
   * word's exact form comes only with `forms`, and only when the index holds it.
   */
  private resolve(
    index: InvertedIndex,
    analyzer: Analyzer,
    text: string,
    known?: (term: string) => boolean,
    forms = false
  ): Array<{ id: number; position: number; form: boolean }> {
    const tokens: Array<{ term: string; position: number; kind: number; start: number; end: number }> = []
    analyzer.analyze(text, (term, position, start, end, kind) => {
      tokens.push({ term, position, kind, start, end })
      return tokens.length >= 256
    })
    // Read in English, a word still finds the pages of other languages that write it as typed.
    const englishForms = forms && !analyzer.forms && this.holdsForms
    const out: Array<{ id: number; position: number; form: boolean }> = []
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!
      if (token.kind === TokenKind.Form) {
        const id = forms ? index.lookup(token.term) : -1
        if (id >= 0) out.push({ id, position: token.position, form: true })
        continue
      }
      const id = index.lookup(token.term)
      if (token.kind === TokenKind.Compound) {
        // Held whole by another index searched with this one: a word this one lacks, not its parts.
        if (id < 0 && (known === undefined || !known(token.term))) continue
        out.push({ id, position: token.position, form: false })
        while (i + 1 < tokens.length && (tokens[i + 1]!.kind === TokenKind.Part || tokens[i + 1]!.kind === TokenKind.Form)) i++
        continue
      }
      out.push({ id, position: token.position, form: false })
      if (englishForms) {
        const form = index.lookup(analyzer.exactForm(text.slice(token.start, token.end)))
        if (form >= 0) out.push({ id: form, position: token.position, form: true })
      }
    }
    return out
  }

  /**
   * Document filter for site: constraints (undefined when there are none, null when no page can
   * pass), with `skipTo`: the next document id on an included host, so ranking jumps over the
   * other hosts' documents instead of rejecting them one by one.
   */
  private siteFilter(
    sites: ReadonlyArray<SiteFilter>,
    excludedSites: ReadonlyArray<SiteFilter>,
    images: boolean
  ): { accept: (doc: number) => boolean; skipTo: ((doc: number) => number) | undefined } | undefined | null {
    if (sites.length === 0 && excludedSites.length === 0) return undefined
    const include = sites.map((s) => this.hostRange(s))
    const exclude = excludedSites.map((s) => this.hostRange(s))
    if (include.length > 0 && include.every((r) => r.empty)) return null
    const { pageHost, pages, imagePage } = this.parts
    const onHost = (page: number, range: HostRange): boolean => {
      const host = pageHost[page]!
      return host === range.exact || (host >= range.lo && host < range.hi)
    }
    const onSite = (page: number, range: HostRange): boolean => {
      if (!onHost(page, range)) return false
      if (range.path.length === 0) return true
      try {
        return new URL(pages.get(page, PageField.Url)).pathname.startsWith(range.path)
      } catch {
        return false
      }
    }
    const accept = (doc: number) => {
      const page = images ? imagePage[doc]! : doc
      if (include.length > 0 && !include.some((r) => onSite(page, r))) return false
      return !exclude.some((r) => onSite(page, r))
    }
    if (include.length === 0) return { accept, skipTo: undefined }
    // Runs of consecutive ids on an included host (pages of one host are mostly adjacent: ids follow URLs).
    const count = images ? imagePage.length : pageHost.length
    const runs: Array<number> = []
    for (let doc = 0; doc < count; doc++) {
      const page = images ? imagePage[doc]! : doc
      if (!include.some((r) => onHost(page, r))) continue
      if (runs.length > 0 && runs[runs.length - 1] === doc) runs[runs.length - 1] = doc + 1
      else runs.push(doc, doc + 1)
    }
    const starts = Int32Array.from(runs.filter((_, i) => i % 2 === 0))
    const ends = Int32Array.from(runs.filter((_, i) => i % 2 === 1))
    const skipTo = (doc: number): number => {
      // First run whose end lies past doc.
      let lo = 0
      let hi = ends.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (ends[mid]! <= doc) lo = mid + 1
        else hi = mid
      }
      if (lo === ends.length) return endOfPostings
      return Math.max(doc, starts[lo]!)
    }
    return { accept, skipTo }
  }

  private hostRange(site: SiteFilter): HostRange {
    const keys = (this.hostKeys ??= Array.from({ length: this.parts.hosts.count }, (_, i) => this.parts.hosts.get(i, 0)))
    const key = reversedHost(site.host)
    const lowerBound = (value: string) => {
      let lo = 0
      let hi = keys.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (keys[mid]! < value) lo = mid + 1
        else hi = mid
      }
      return lo
    }
    const at = lowerBound(key)
    const exact = keys[at] === key ? at : -1
    const lo = lowerBound(`${key}.`)
    const hi = lowerBound(`${key}/`) // "/" sorts right after ".": the range is every subdomain
    return { exact, lo, hi, path: site.path, empty: exact < 0 && lo === hi }
  }

  /** The k best documents (with `cluster`, one per near-duplicate cluster): BM25F top-k (at least the proximity depth), then the proximity re-ranking. */
  private retrieve(index: InvertedIndex, query: CompiledQuery, k: number, cluster?: Int32Array, strategy?: RankStrategy): RankedDocuments {
    const proximity = this.parts.options.proximity
    const ranked = rankTopK(index, query, proximity > 0 ? Math.max(k, proximityDepth) : k, cluster, strategy)
    const reranked = rerankByProximity(index, query, ranked, proximity)
    if (reranked.docs.length <= k) return reranked
    const termsIn = reranked.termsIn === undefined ? undefined : { field: reranked.termsIn.field, masks: reranked.termsIn.masks.subarray(0, k) }
    return { docs: reranked.docs.subarray(0, k), scores: reranked.scores.subarray(0, k), complete: false, termsIn }
  }
}

interface HostRange {
  readonly exact: number
  readonly lo: number
  readonly hi: number
  readonly path: string
  readonly empty: boolean
}

const optional = <K extends string>(key: K, value: string): Partial<Record<K, string>> =>
  value.length > 0 ? ({ [key]: value } as Record<K, string>) : {}
