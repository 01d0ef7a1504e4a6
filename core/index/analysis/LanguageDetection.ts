/**
 * The language of a text that does not say which it is, by eld (Efficient Language Detector:
 * pure JavaScript, 60 languages, byte n-grams). Of the pure-JS detectors tried (franc, tinyld)
 * it was the quickest and the most accurate on short texts, and detection runs on every page
 * that declares no language; its price is its n-gram table, loaded once per process.
 *
 * Detection reads a sample, not the page: a page's first sentences say its language, and the
 * cost then does not grow with the page.
 */
import { eld } from "eld/extrasmall"
import { primaryLanguage } from "../LanguageTag.ts"

/** Characters of a page's text read for its language. */
export const pageSampleChars = 160

/**
 * Letters a page's sample needs before its language is guessed: on fewer (a list of options, a
 * line of code) detection is wrong too often, and such a page is left of no known language.
 */
export const pageDetectionLetters = 64

/**
 * Letters a query needs before its language is guessed: below it, detection is too often wrong
 * (a word or two fits several languages) and the index's main language reads it instead.
 */
export const queryDetectionLetters = 16

/**
 * How sure eld must be: its best score at least this share of that language's average score
 * (eld's own test of a reliable answer uses 0.75). Pages of code and lists of names came out
 * as French or Romanian with scores just above 0.75 of it, where text in a language stays well
 * above 0.9 of it.
 */
const reliableRatio = 0.9

/** The language of `text` (ISO 639-1), or undefined when eld finds none or is not sure of it. */
export const detectLanguage = (text: string): string | undefined => {
  if (typeof text !== "string" || text.length === 0) return undefined
  const result = eld.detect(text)
  // isReliable takes the ratio as its argument, though the package's types do not say so.
  const reliable = result.isReliable as (thresholdRatio?: number) => boolean
  if (result.language === "" || !reliable(reliableRatio)) return undefined
  return primaryLanguage(result.language)
}

/**
 * What a page's language is detected from: the start of its text (`chars` characters), cut at a
 * space; with the title before it when the text is short. A title is often a product's or a
 * function's name.
 */
export const pageLanguageSample = (title: string, text: string, chars = pageSampleChars): string => {
  const whole = text.length >= chars || title.length === 0 ? text : text.length === 0 ? title : `${title}\n${text}`
  if (whole.length <= chars) return whole
  const cut = whole.lastIndexOf(" ", chars)
  return whole.slice(0, cut > chars / 2 ? cut : chars)
}

const letter = /\p{L}/gu

/** Whether `text` has at least `count` letters. */
const hasLetters = (text: string, count: number): boolean => {
  letter.lastIndex = 0
  let letters = 0
  while (letter.exec(text) !== null) if (++letters >= count) return true
  return false
}

/** The language of a page's sample (pageLanguageSample) with letters enough to tell, else undefined. */
export const detectPageLanguage = (sample: string): string | undefined =>
  typeof sample === "string" && hasLetters(sample, pageDetectionLetters) ? detectLanguage(sample) : undefined

/** The language of a query with letters enough to tell, else undefined. */
export const detectQueryLanguage = (query: string): string | undefined =>
  typeof query === "string" && hasLetters(query, queryDetectionLetters) ? detectLanguage(query) : undefined
