/**
 * What each character is to the tokenizer, computed once per code unit and cached in a table.
 *
 * - Word: letters, digits and combining marks of space-separated scripts.
 * - Segmented: scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar), whose
 *   runs go to Intl.Segmenter for dictionary word breaking.
 * - Connector: punctuation that joins technical tokens ("node.js", "utf-8", "foo_bar", "a/b").
 */

export const CharClass = { Other: 0, Word: 1, Segmented: 2, Connector: 3 } as const
export type CharClass = (typeof CharClass)[keyof typeof CharClass]

const wordChar = /[\p{L}\p{N}\p{M}]/u
const segmentedChar =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u3005\u30fc\uff70\uff9e\uff9f]/u
const connectorChars = ".-_/:@'’+&\\"

const unknown = 255
const table = new Uint8Array(65536).fill(unknown)
const astral = new Map<number, CharClass>()

const classify = (ch: string): CharClass => {
  if (segmentedChar.test(ch)) return CharClass.Segmented
  if (wordChar.test(ch)) return CharClass.Word
  if (connectorChars.includes(ch)) return CharClass.Connector
  return CharClass.Other
}

/** Class of a BMP code unit (surrogates answer Other; use classOfCodePoint for those). */
export const classOfUnit = (unit: number): CharClass => {
  const cached = table[unit]!
  if (cached !== unknown) return cached as CharClass
  const cls = unit >= 0xd800 && unit <= 0xdfff ? CharClass.Other : classify(String.fromCharCode(unit))
  table[unit] = cls
  return cls
}

/** Class of any code point, astral ones (CJK extension B, historic scripts) included. */
export const classOfCodePoint = (codePoint: number): CharClass => {
  if (codePoint < 0x10000) return classOfUnit(codePoint)
  let cls = astral.get(codePoint)
  if (cls === undefined) {
    cls = classify(String.fromCodePoint(codePoint))
    if (astral.size < 4096) astral.set(codePoint, cls)
  }
  return cls
}

// ASCII is decided up front: the tokenizer's hot loop then never misses for plain English text.
for (let c = 0; c < 128; c++) classOfUnit(c)
