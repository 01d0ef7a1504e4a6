/**
 * Which language each page is in and which analysis its words got: the page's declared
 * language (its `lang`), else the one detected from a sample of its text, else none. The build
 * decides it once per page, wherever the page is analysed (the build's thread or a worker: the
 * same function, so the same snapshot); a snapshot keeps it, so that a query reads each page's
 * words as they were indexed and `language` filters pages by it.
 */
import { type AnalyzedFields, TokenRecorder } from "./analysis/AnalyzedText.ts"
import { Analyzer } from "./analysis/Analyzer.ts"
import { analysisForLanguage, englishAnalysis, type LanguageAnalysis } from "./analysis/LanguageAnalysis.ts"
import { detectPageLanguage, pageLanguageSample } from "./analysis/LanguageDetection.ts"
import { primaryLanguage } from "./LanguageTag.ts"

/** One language with the analysis its pages got; "" when the page's language is not known. */
export interface PageLanguage {
  readonly language: string
  readonly analysis: string
}

export interface PageLanguages {
  /** The distinct (language, analysis) pairs, in the order of their first page. */
  readonly table: ReadonlyArray<PageLanguage>
  /** Each page's entry in `table`. */
  readonly ids: Uint16Array
}

/** The most entries a table holds (ids are u16); pages past them are kept as of no known language. */
const maxEntries = 65_535

/** A page's language and analysis: what it declares (`lang`, "" for nothing), else what its `sample` is detected as. */
export const decidePageLanguage = (lang: string, sample: () => string): { readonly language: string; readonly analysis: LanguageAnalysis } => {
  const language = lang.length > 0 ? primaryLanguage(lang) ?? "" : detectPageLanguage(sample()) ?? ""
  return { language, analysis: language === "" ? englishAnalysis : analysisForLanguage(language) }
}

/** What a page's analysis needs, as it crosses to a worker: its field texts, its declared language, the sample to detect one from. */
export interface PageToAnalyze {
  readonly texts: ReadonlyArray<string>
  /** The declared language tag, "" for none. */
  readonly lang: string
  /** The title and start of the text (pageLanguageSample), when `lang` is "". */
  readonly sample: string
  readonly stemming: boolean
}

/** A page's fields' tokens with the language and analysis they were made with. */
export interface AnalyzedPage extends PageLanguage {
  readonly fields: AnalyzedFields
}

/** What `analyzePage` needs for a page of `title` and `text` (field texts `texts`). */
export const pageToAnalyze = (texts: ReadonlyArray<string>, lang: string, title: string, text: string, stemming: boolean): PageToAnalyze => ({
  texts,
  lang,
  sample: lang.length > 0 ? "" : pageLanguageSample(title, text),
  stemming
})

/** Token recorders by analysis and stemming, kept so that each analyzer's memo of words serves page after page. */
export class PageRecorders {
  private readonly recorders = new Map<string, TokenRecorder>()

  /** A page's language and its fields' tokens in that language's analysis. */
  analyze(page: PageToAnalyze): AnalyzedPage {
    const { language, analysis } = decidePageLanguage(page.lang, () => page.sample)
    const key = `${analysis.name} ${page.stemming}`
    let recorder = this.recorders.get(key)
    if (recorder === undefined) this.recorders.set(key, recorder = new TokenRecorder(new Analyzer({ stemming: page.stemming, language: analysis, exactForms: true })))
    return { language, analysis: analysis.name, fields: page.texts.map((text) => recorder.record(text)) }
  }
}

/** Collects each page's entry, page by page. */
export class PageLanguagesWriter {
  private readonly entries = new Map<string, number>()
  private readonly table: Array<PageLanguage> = []
  private ids = new Uint16Array(1024)
  private count = 0

  add(language: string, analysis: string): void {
    const key = `${language} ${analysis}`
    let id = this.entries.get(key)
    if (id === undefined) {
      if (this.table.length === maxEntries) id = 0 // not reached: there are far fewer languages
      else {
        id = this.table.length
        this.entries.set(key, id)
        this.table.push({ language, analysis })
      }
    }
    if (this.count === this.ids.length) {
      const grown = new Uint16Array(this.ids.length * 2)
      grown.set(this.ids)
      this.ids = grown
    }
    this.ids[this.count++] = id
  }

  finish(): PageLanguages {
    return { table: this.table, ids: this.ids.slice(0, this.count) }
  }
}
