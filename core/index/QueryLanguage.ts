/**
 * How a query is read: which analysis its words get, and which language its pages must be in.
 *
 * A query asked in a language (`language`) is read as the index's pages in that language were
 * (in that language's analysis, or English's in a snapshot written before languages), and only
 * those pages answer. Otherwise, an index whose pages all got one analysis reads the query in it
 * (the usual case: a query is never misread on a one-language index). An index with pages of
 * several, each a real share of it (`minorShare`), reads the query in the language detected
 * from it when it has letters enough for a guess (LanguageDetection.queryDetectionLetters) and
 * the index has such a share of pages in it, else in the index's main language (the analysis
 * most of its pages got). A few pages in another language (a misdetected page of code, a
 * quotation) cost queries nothing.
 *
 * One reading, not one per language: reading a query in every language the index has found its
 * words' look-alikes on the pages of the others (Spanish "imagen" read as English matches every
 * English page about images), and known pages ranked lower on the languages bench.
 */
import { analysisForLanguage, analysisNamed, englishAnalysis, type LanguageAnalysis } from "./analysis/LanguageAnalysis.ts"
import { detectQueryLanguage } from "./analysis/LanguageDetection.ts"
import { primaryLanguage } from "./LanguageTag.ts"
import type { ParsedQuery } from "./QueryParser.ts"

/** What a search may say about language. */
export interface QueryOptions {
  /** Pages in this language only (ISO 639-1 or 639-2 code, or a BCP 47 tag), the query read in it. */
  readonly language?: string | undefined
}

export interface QueryReading {
  /** The analysis the query's words get. */
  readonly analysis: LanguageAnalysis
  /** The language pages must be in (a primary subtag), or undefined for any. */
  readonly language: string | undefined
}

/** The share of an index's pages an analysis needs before a query may be read in it unasked. */
export const minorShare = 0.01

/** Pages per analysis name: what an index holds. */
export type AnalysisCounts = ReadonlyMap<string, number>

/** The analyses that a real share of the pages (minorShare) got. */
export const sharedAnalyses = (counts: AnalysisCounts): ReadonlySet<string> => {
  let pages = 0
  for (const count of counts.values()) pages += count
  const shared = new Set<string>()
  for (const [name, count] of counts) if (count >= pages * minorShare) shared.add(name)
  return shared
}

/** The analysis most pages got (the first by name among equals); English for an empty index. */
export const mainAnalysis = (counts: AnalysisCounts): LanguageAnalysis => {
  let best: string | undefined
  let most = -1
  for (const [name, count] of counts) {
    if (count > most || (count === most && best !== undefined && name < best)) {
      best = name
      most = count
    }
  }
  return (best === undefined ? undefined : analysisNamed(best)) ?? englishAnalysis
}

/**
 * How `parsed` is read on an index with pages per analysis `counts`, whose pages in a language
 * got the analysis `analysisOf` names (undefined: it has none in that language). A `language`
 * that is no language tag filters every page out (the language undefined would let every page in).
 */
export const readQuery = (
  parsed: ParsedQuery,
  options: QueryOptions | undefined,
  counts: AnalysisCounts,
  analysisOf: (language: string) => string | undefined
): QueryReading => {
  const asked = options?.language
  if (typeof asked === "string") {
    const language = primaryLanguage(asked) ?? "?"
    const name = analysisOf(language)
    return { analysis: (name === undefined ? undefined : analysisNamed(name)) ?? analysisForLanguage(language), language }
  }
  const main = mainAnalysis(counts)
  if (counts.size > 1) {
    const shared = sharedAnalyses(counts)
    if (shared.size > 1) {
      const detected = detectQueryLanguage([parsed.words, ...parsed.phrases].join(" "))
      const analysis = detected === undefined ? undefined : analysisForLanguage(detected)
      if (analysis !== undefined && shared.has(analysis.name)) return { analysis, language: undefined }
    }
  }
  return { analysis: main, language: undefined }
}
