/**
 * Case and diacritics folding: "Éclair" and "eclair" index as one term.
 * Only combining diacritical marks are stripped, so Japanese voicing marks
 * (が) and Hangul syllables survive the round trip through NFKD.
 */

const combiningMarks = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g

/** Letters that carry no decomposable mark but are spelled with plain letters in English text. */
const letterFolds: Record<string, string> = {
  "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "ł": "l", "ı": "i", "ħ": "h", "’": "'"
}
const foldableLetters = /[ßæœøđðþłıħ’]/g

const asciiOnly = /^[\x00-\x7f]*$/

/** Lower-cases and strips diacritics; compatibility forms (fullwidth letters, ligatures) become plain letters. */
export const foldTerm = (raw: string): string => {
  if (asciiOnly.test(raw)) return raw.toLowerCase()
  const folded = raw.normalize("NFKD").replace(combiningMarks, "").normalize("NFC").toLowerCase()
  return folded.replace(foldableLetters, (c) => letterFolds[c]!)
}
