/**
 * Collects documents in batches and builds a SearchIndex.
 *
 * Documents are checked and normalised as they arrive (AddReport says what was refused and
 * why); one normalised URL is one page, the last version added wins. `build` orders pages by
 * that URL, so page ids, and with them score ties, are the same whatever order the batches
 * came in.
 *
 * Field weighting is BM25F (Robertson, Zaragoza & Taylor 2004): each field's term frequency
 * is length-normalised and weighted, the sum is saturated once, and one idf applies. Summing
 * one BM25 per field instead would saturate each field separately and pay a word twice for
 * appearing in both title and body, which BM25F avoids; it also keeps one upper bound per
 * term, which is what MaxScore pruning needs.
 */
import type { Analyzer } from "./analysis/Analyzer.ts"
import { Analyzers } from "./analysis/Analyzers.ts"
import { analysisNamed, englishAnalysis, type LanguageAnalysis } from "./analysis/LanguageAnalysis.ts"
import { pageLanguageSample } from "./analysis/LanguageDetection.ts"
import type { IndexDocument } from "./Document.ts"
import { validateDocument, type ValidDocument } from "./DocumentValidation.ts"
import { type EngineOptions, type ResolvedEngineOptions, resolveEngineOptions } from "./EngineOptions.ts"
import type { FieldSpec } from "./InvertedIndex.ts"
import { InvertedIndexBuilder } from "./InvertedIndexBuilder.ts"
import { clusterNearDuplicates, simhash } from "./NearDuplicates.ts"
import { type AnalyzedPage, decidePageLanguage, PageLanguagesWriter, type PageToAnalyze, pageToAnalyze } from "./PageLanguages.ts"
import { SearchIndex } from "./SearchIndex.ts"
import { longTextChars } from "./SnippetPlaces.ts"
import { StoredFieldsWriter } from "./StoredFields.ts"
import { reversedHost, urlWords } from "./UrlNormalizer.ts"

export type { EngineOptions, ResolvedEngineOptions } from "./EngineOptions.ts"
export { defaultEngineOptions, InvalidEngineOptions } from "./EngineOptions.ts"

export interface AddReport {
  /** Documents with a URL not seen before. */
  readonly added: number
  /** Documents whose URL (after normalisation) was already present; the newer one replaced it. */
  readonly duplicates: number
  /** Refused documents, and refused images of accepted ones, with the field and rule broken. */
  readonly rejected: ReadonlyArray<{ url: string; reason: string }>
}

interface Field<T> extends FieldSpec {
  readonly text: (item: T) => string
}

const pageFields = (o: ResolvedEngineOptions): Array<Field<ValidDocument>> =>
  [
    { name: "body", weight: o.fieldWeights.body, positions: true, text: (d: ValidDocument) => d.text },
    { name: "title", weight: o.fieldWeights.title, positions: true, text: (d: ValidDocument) => d.title },
    { name: "url", weight: o.fieldWeights.url, positions: false, text: (d: ValidDocument) => urlWords(d.url) }
  ].filter((f) => f.weight > 0)

interface ImageItem {
  readonly image: ValidDocument["images"][number]
  readonly page: ValidDocument
}

const imageFields = (o: ResolvedEngineOptions): Array<Field<ImageItem>> =>
  [
    {
      name: "text",
      weight: o.imageFieldWeights.text,
      positions: true,
      text: ({ image }: ImageItem) => [image.title, image.alt, image.caption].filter((s) => s.length > 0).join("\n")
    },
    {
      name: "context",
      weight: o.imageFieldWeights.context,
      positions: true,
      text: ({ image, page }: ImageItem) => [image.heading, page.title].filter((s) => s.length > 0).join("\n")
    },
    { name: "url", weight: o.imageFieldWeights.url, positions: false, text: ({ image }: ImageItem) => urlWords(image.url) }
  ].filter((f) => f.weight > 0)

const spec = <T>(f: Field<T>): FieldSpec => ({ name: f.name, weight: f.weight, positions: f.positions })

export class IndexBuilder {
  readonly options: ResolvedEngineOptions
  private readonly byUrl = new Map<string, ValidDocument>()

  /** Throws InvalidEngineOptions when an option breaks its rule. */
  constructor(options?: EngineOptions) {
    this.options = resolveEngineOptions(options)
  }

  /** Documents collected so far (distinct URLs). */
  get size(): number {
    return this.byUrl.size
  }

  add(docs: Iterable<IndexDocument>): AddReport {
    let added = 0
    let duplicates = 0
    const rejected: Array<{ url: string; reason: string }> = []
    for (const raw of docs) {
      const checked = validateDocument(raw)
      if (checked._tag === "Invalid") {
        rejected.push({ url: checked.url, reason: checked.reason })
        continue
      }
      for (const reason of checked.problems) rejected.push({ url: checked.document.url, reason })
      const key = checked.document.key
      if (this.byUrl.has(key)) {
        duplicates++
        this.byUrl.delete(key) // re-insert: the newest version is kept
      } else {
        added++
      }
      this.byUrl.set(key, checked.document)
    }
    return { added, duplicates, rejected }
  }

  /** Builds the index, analysing every page's texts on this thread. */
  build(): SearchIndex {
    const build = this.begin()
    for (let doc = 0; doc < build.pageCount; doc++) build.addPage(doc)
    return build.finish()
  }

  /**
   * The build in steps, for a caller that analyses the pages' texts elsewhere (IndexRun on worker
   * threads): the pages in their final order, added one by one in that order, then finished.
   */
  begin(): IndexBuild {
    return new IndexBuild(this.options, Array.from(this.byUrl.values()).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)))
  }
}

/** One build of an IndexBuilder's pages (IndexBuilder.begin): addPage for each in order, then finish. */
export class IndexBuild {
  readonly options: ResolvedEngineOptions
  private readonly pages: ReadonlyArray<ValidDocument>
  private readonly analyzer: Analyzer
  /** One analyzer per language analysis the pages got (English is `analyzer`), exact forms beside stems. */
  private readonly analyzers: Analyzers
  private readonly languages = new PageLanguagesWriter()
  /** The analysis each page got, by page: its images are analysed alike. */
  private readonly pageAnalysis: Array<LanguageAnalysis> = []
  private readonly fields: Array<Field<ValidDocument>>
  private readonly web: InvertedIndexBuilder
  private readonly stored = new StoredFieldsWriter(5)
  private readonly fingerprintHigh: Uint32Array
  private readonly fingerprintLow: Uint32Array
  private readonly fingerprintExact: Uint32Array
  private readonly tokenCounts: Int32Array
  private readonly body: number
  private readonly textPositions: Array<number> = []
  private readonly hostOf: Array<string> = []
  private hashes = new Uint32Array(1024)

  constructor(options: ResolvedEngineOptions, pages: ReadonlyArray<ValidDocument>) {
    this.options = options
    this.pages = pages
    this.analyzers = new Analyzers({ stemming: options.stemming, exactForms: true })
    this.analyzer = this.analyzers.of(englishAnalysis)
    this.fields = pageFields(options)
    this.web = new InvertedIndexBuilder(this.fields.map(spec), this.analyzer, options.k1, options.b)
    this.fingerprintHigh = new Uint32Array(pages.length)
    this.fingerprintLow = new Uint32Array(pages.length)
    this.fingerprintExact = new Uint32Array(pages.length)
    this.tokenCounts = new Int32Array(pages.length)
    this.body = this.fields.findIndex((f) => f.name === "body")
  }

  get pageCount(): number {
    return this.pages.length
  }

  /** Page `doc`'s texts to analyse, one per indexed field, in the order addPage takes them. */
  pageTexts(doc: number): Array<string> {
    const page = this.pages[doc]!
    return this.fields.map((f) => f.text(page))
  }

  /** What analysing page `doc` elsewhere takes (PageRecorders.analyze): its texts, its declared language, a sample to detect one from. */
  pageToAnalyze(doc: number): PageToAnalyze {
    const page = this.pages[doc]!
    return pageToAnalyze(this.pageTexts(doc), page.lang, page.title, page.text, this.options.stemming)
  }

  /** Adds page `doc` (the next one), from its texts' tokens when they were analysed elsewhere (PageRecorders.analyze). */
  addPage(doc: number, analyzed?: AnalyzedPage): void {
    const page = this.pages[doc]!
    const web = this.web
    if (doc !== web.documentCount) throw new Error(`index build: page ${doc} added where ${web.documentCount} was next`)
    if (analyzed === undefined) {
      const { language, analysis } = decidePageLanguage(page.lang, () => pageLanguageSample(page.title, page.text))
      web.addDocument(this.pageTexts(doc), this.analyzers.of(analysis))
      this.languages.add(language, analysis.name)
      this.pageAnalysis.push(analysis)
    } else {
      const analysis = analysisNamed(analyzed.analysis)
      if (analysis === undefined) throw new Error(`index build: page ${doc} was analysed as ${analyzed.analysis}, an analysis this engine lacks`)
      web.addAnalyzedDocument(analyzed.fields)
      this.languages.add(analyzed.language, analysis.name)
      this.pageAnalysis.push(analysis)
    }
    if (this.body >= 0 && page.text.length >= longTextChars) this.textPositions.push(doc, web.fieldPositions[this.body]!)
    this.stored.add([page.url, page.title, page.text, page.date ?? "", page.lang])
    const sequence = web.sequence
    if (this.hashes.length < sequence.length) this.hashes = new Uint32Array(sequence.length * 2)
    for (let i = 0; i < sequence.length; i++) this.hashes[i] = web.termHash(sequence.get(i))
    const fingerprint = simhash(this.hashes, sequence.length)
    this.fingerprintHigh[doc] = fingerprint.high
    this.fingerprintLow[doc] = fingerprint.low
    this.fingerprintExact[doc] = fingerprint.exact
    this.tokenCounts[doc] = sequence.length
    this.hostOf.push(reversedHost(new URL(page.url).hostname))
  }

  /** The index, once every page was added. */
  finish(): SearchIndex {
    const { options, pages, analyzer, hostOf } = this
    if (this.web.documentCount !== pages.length) throw new Error(`index build: ${this.web.documentCount} of ${pages.length} pages added`)
    const hostKeys = Array.from(new Set(hostOf)).sort()
    const hostId = new Map(hostKeys.map((key, i) => [key, i]))
    const hosts = new StoredFieldsWriter(1)
    for (const key of hostKeys) hosts.add([key])

    // Images, in page order.
    const imageSpecs = imageFields(options)
    const images = new InvertedIndexBuilder(imageSpecs.map(spec), analyzer, options.k1, options.b)
    const imageStored = new StoredFieldsWriter(5)
    const pageImages = new Uint32Array(pages.length + 1)
    const imagePage: Array<number> = []
    const imageSize: Array<number> = []
    const imageCluster: Array<number> = []
    const firstWithUrl = new Map<string, number>()
    for (let doc = 0; doc < pages.length; doc++) {
      const page = pages[doc]!
      pageImages[doc] = imagePage.length
      const analyzer = this.analyzers.of(this.pageAnalysis[doc]!)
      for (const image of page.images) {
        const id = images.addDocument(imageSpecs.map((f) => f.text({ image, page })), analyzer)
        imageStored.add([image.url, image.title, image.alt, image.caption, image.heading])
        imagePage.push(doc)
        imageSize.push(image.width, image.height)
        const first = firstWithUrl.get(image.key)
        if (first === undefined) firstWithUrl.set(image.key, id)
        imageCluster.push(first ?? id)
      }
    }
    pageImages[pages.length] = imagePage.length
    this.analyzers.clearCaches()

    return new SearchIndex({
      options,
      web: this.web.build(),
      pages: this.stored.finish(),
      pageHost: Int32Array.from(hostOf, (key) => hostId.get(key)!),
      hosts: hosts.finish(),
      pageCluster: clusterNearDuplicates(this.fingerprintHigh, this.fingerprintLow, this.fingerprintExact, this.tokenCounts, options.nearDuplicateBits),
      textPositions: Int32Array.from(this.textPositions),
      pageLanguages: this.languages.finish(),
      pageImages,
      images: images.build(),
      imageFields: imageStored.finish(),
      imagePage: Int32Array.from(imagePage),
      imageCluster: Int32Array.from(imageCluster),
      imageSize: Int32Array.from(imageSize)
    })
  }
}
