/**
 * How the words of each language are indexed: the languages Lucene ships analysers for that
 * have a Snowball stemmer (@orama/stemmers, generated from Snowball's own algorithms) and their
 * stop words (@orama/stopwords). English keeps Lucene's EnglishAnalyzer (its 33 stop words, the
 * Porter stemmer): the analysis every index had before languages were told apart, and the one a
 * page gets when its language has none of its own or is not known.
 *
 * Each analysis has a stable name: a snapshot records which analysis each page got by that name,
 * so a later engine reads the page's words as they were indexed.
 */
import { stemmer as arabic } from "@orama/stemmers/arabic"
import { stemmer as armenian } from "@orama/stemmers/armenian"
import { stemmer as danish } from "@orama/stemmers/danish"
import { stemmer as dutch } from "@orama/stemmers/dutch"
import { stemmer as finnish } from "@orama/stemmers/finnish"
import { stemmer as french } from "@orama/stemmers/french"
import { stemmer as german } from "@orama/stemmers/german"
import { stemmer as greek } from "@orama/stemmers/greek"
import { stemmer as hindi } from "@orama/stemmers/indian"
import { stemmer as hungarian } from "@orama/stemmers/hungarian"
import { stemmer as indonesian } from "@orama/stemmers/indonesian"
import { stemmer as irish } from "@orama/stemmers/irish"
import { stemmer as italian } from "@orama/stemmers/italian"
import { stemmer as lithuanian } from "@orama/stemmers/lithuanian"
import { stemmer as nepali } from "@orama/stemmers/nepali"
import { stemmer as norwegian } from "@orama/stemmers/norwegian"
import { stemmer as portuguese } from "@orama/stemmers/portuguese"
import { stemmer as romanian } from "@orama/stemmers/romanian"
import { stemmer as russian } from "@orama/stemmers/russian"
import { stemmer as serbian } from "@orama/stemmers/serbian"
import { stemmer as spanish } from "@orama/stemmers/spanish"
import { stemmer as swedish } from "@orama/stemmers/swedish"
import { stemmer as tamil } from "@orama/stemmers/tamil"
import { stemmer as turkish } from "@orama/stemmers/turkish"
import { stemmer as porter } from "stemmer"
import { stopwords as arabicStops } from "@orama/stopwords/arabic"
import { stopwords as armenianStops } from "@orama/stopwords/armenian"
import { stopwords as bulgarianStops } from "@orama/stopwords/bulgarian"
import { stopwords as danishStops } from "@orama/stopwords/danish"
import { stopwords as dutchStops } from "@orama/stopwords/dutch"
import { stopwords as finnishStops } from "@orama/stopwords/finnish"
import { stopwords as frenchStops } from "@orama/stopwords/french"
import { stopwords as germanStops } from "@orama/stopwords/german"
import { stopwords as greekStops } from "@orama/stopwords/greek"
import { stopwords as hindiStops } from "@orama/stopwords/indian"
import { stopwords as hungarianStops } from "@orama/stopwords/hungarian"
import { stopwords as indonesianStops } from "@orama/stopwords/indonesian"
import { stopwords as irishStops } from "@orama/stopwords/irish"
import { stopwords as italianStops } from "@orama/stopwords/italian"
import { stopwords as lithuanianStops } from "@orama/stopwords/lithuanian"
import { stopwords as nepaliStops } from "@orama/stopwords/nepali"
import { stopwords as norwegianStops } from "@orama/stopwords/norwegian"
import { stopwords as portugueseStops } from "@orama/stopwords/portuguese"
import { stopwords as romanianStops } from "@orama/stopwords/romanian"
import { stopwords as russianStops } from "@orama/stopwords/russian"
import { stopwords as serbianStops } from "@orama/stopwords/serbian"
import { stopwords as spanishStops } from "@orama/stopwords/spanish"
import { stopwords as swedishStops } from "@orama/stopwords/swedish"
import { stopwords as tamilStops } from "@orama/stopwords/tamil"
import { stopwords as turkishStops } from "@orama/stopwords/turkish"
import { stopwords as ukrainianStops } from "@orama/stopwords/ukrainian"
import { foldTerm } from "./Folding.ts"
import { englishStopWords } from "./StopWords.ts"

export interface LanguageAnalysis {
  /** The name a snapshot records: the language's ISO 639-1 code. */
  readonly name: string
  /** The language's name in English, for docs and reports. */
  readonly label: string
  /** Snowball stemming of a lower-cased word with its diacritics (undefined: words are not stemmed). */
  readonly stem: ((word: string) => string) | undefined
  /** Lower-cased stop words, as written and folded (a query typed without accents drops them too). */
  readonly stopWords: ReadonlySet<string>
  /** Articles and pronouns elided before an apostrophe ("l'homme" is "homme"), as Lucene's ElisionFilter drops them. */
  readonly elisions: ReadonlySet<string> | undefined
  /** Lower-casing: Turkish has its own dotted and dotless i. */
  readonly lowerCase: (word: string) => string
}

const lower = (word: string) => word.toLowerCase()

/** The stop words as given (the library's lists hold an empty entry or two) and folded. */
const stopSet = (words: ReadonlyArray<string>): ReadonlySet<string> => {
  const set = new Set<string>()
  for (const word of words) {
    const w = word.trim().normalize("NFC").toLowerCase()
    if (w.length === 0) continue
    set.add(w)
    set.add(foldTerm(w))
  }
  return set
}

const analysis = (
  name: string,
  label: string,
  stem: ((word: string) => string) | undefined,
  stops: ReadonlyArray<string>,
  extra: { readonly elisions?: ReadonlyArray<string>; readonly lowerCase?: (word: string) => string } = {}
): LanguageAnalysis => ({
  name,
  label,
  stem,
  stopWords: stopSet(stops),
  elisions: extra.elisions === undefined ? undefined : new Set(extra.elisions),
  lowerCase: extra.lowerCase ?? lower
})

/** Lucene's English analysis: the default, and what every page of a snapshot written before languages got. */
export const englishAnalysis: LanguageAnalysis = {
  name: "en",
  label: "English",
  stem: porter, // Lucene's EnglishAnalyzer stems with Porter's algorithm, not Snowball's English
  stopWords: englishStopWords,
  elisions: undefined,
  lowerCase: lower
}

// Lucene's ElisionFilter articles for French, Italian, Catalan and Irish.
const frenchElisions = ["l", "m", "t", "qu", "n", "s", "j", "d", "c", "jusqu", "quoiqu", "lorsqu", "puisqu"]
const italianElisions = ["c", "l", "all", "dall", "dell", "nell", "sull", "coll", "pell", "gl", "agl", "dagl", "degl", "negl", "sugl", "un", "m", "t", "s", "v", "d"]
const irishElisions = ["d", "m", "b"]

const analyses: ReadonlyArray<LanguageAnalysis> = [
  englishAnalysis,
  analysis("ar", "Arabic", arabic, arabicStops),
  analysis("hy", "Armenian", armenian, armenianStops),
  analysis("bg", "Bulgarian", undefined, bulgarianStops),
  analysis("da", "Danish", danish, danishStops),
  analysis("nl", "Dutch", dutch, dutchStops),
  analysis("fi", "Finnish", finnish, finnishStops),
  analysis("fr", "French", french, frenchStops, { elisions: frenchElisions }),
  analysis("de", "German", german, germanStops),
  analysis("el", "Greek", greek, greekStops),
  analysis("hi", "Hindi", hindi, hindiStops),
  analysis("hu", "Hungarian", hungarian, hungarianStops),
  analysis("id", "Indonesian", indonesian, indonesianStops),
  analysis("ga", "Irish", irish, irishStops, { elisions: irishElisions }),
  analysis("it", "Italian", italian, italianStops, { elisions: italianElisions }),
  analysis("lt", "Lithuanian", lithuanian, lithuanianStops),
  analysis("ne", "Nepali", nepali, nepaliStops),
  analysis("no", "Norwegian", norwegian, norwegianStops),
  analysis("pt", "Portuguese", portuguese, portugueseStops),
  analysis("ro", "Romanian", romanian, romanianStops),
  analysis("ru", "Russian", russian, russianStops),
  analysis("sr", "Serbian", serbian, serbianStops),
  analysis("es", "Spanish", spanish, spanishStops),
  analysis("sv", "Swedish", swedish, swedishStops),
  analysis("ta", "Tamil", tamil, tamilStops),
  analysis("tr", "Turkish", turkish, turkishStops, { lowerCase: (word) => word.toLocaleLowerCase("tr") }),
  analysis("uk", "Ukrainian", undefined, ukrainianStops)
]

const byName = new Map(analyses.map((a) => [a.name, a]))

/** Every analysis, English first. */
export const languageAnalyses: ReadonlyArray<LanguageAnalysis> = analyses

/** The analysis recorded under `name`, or undefined when this engine has none of that name. */
export const analysisNamed = (name: string): LanguageAnalysis | undefined => byName.get(name)

/** The analysis of a language (a primary subtag as `primaryLanguage` gives it); English for any other or none. */
export const analysisForLanguage = (language: string | undefined): LanguageAnalysis =>
  (language === undefined ? undefined : byName.get(language)) ?? englishAnalysis
