/**
 * Text analysis: one pass over a string that emits the terms the index stores.
 *
 * - Words of space-separated scripts are folded (case, diacritics), English stop words dropped
 *   (their positions kept) and stemmed with the Porter stemmer, as Lucene's EnglishAnalyzer does.
 *   In another language (LanguageAnalysis.ts) a word is lower-cased, its elided article dropped
 *   ("l'homme"), its stop words dropped and its Snowball stem taken before folding: Snowball's
 *   rules are written for the language's accents ("égalité" and "égal" share "égal").
 * - Runs of Chinese, Japanese, Thai, ... go through Intl.Segmenter's dictionary word breaking.
 * - Technical tokens stay searchable as typed: "HTTP/2", "node.js", "utf-8", "C++", ".NET" are
 *   emitted whole (a Compound term) at the position of their first part, and their parts
 *   ("http", "2") follow as ordinary terms, so both "node.js" and "node" find the page.
 * - With `exactForms`, a word of another language than English also gets its exact form (a Form
 *   term: folded, not stemmed) at its position, as Lucene's KeywordRepeatFilter keeps it: a query
 *   then finds every form of its words and ranks the pages that write them as it does first.
 */
import { stemmer } from "stemmer"
import { CharClass, classOfCodePoint, classOfUnit } from "./CharClass.ts"
import { foldTerm } from "./Folding.ts"
import { englishAnalysis, type LanguageAnalysis } from "./LanguageAnalysis.ts"

export const TokenKind = { Word: 0, Compound: 1, Part: 2, Form: 3 } as const
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind]

/**
 * Receives each term with its position and its UTF-16 span in the text.
 * Returning true stops the scan (snippets stop once they have seen enough).
 */
export type TokenSink = (term: string, position: number, start: number, end: number, kind: TokenKind) => boolean | void

export interface AnalyzerOptions {
  /** Stemming (Porter for English, Snowball for the others); default true. */
  readonly stemming?: boolean
  /** The language's words; default English (Lucene's EnglishAnalyzer). */
  readonly language?: LanguageAnalysis
  /** Instead of the language's own stop words. */
  readonly stopWords?: ReadonlySet<string>
  /** How many word -> term results to memoise (Zipf: a small cache saves most stemming). */
  readonly cacheSize?: number
  /** Each word's exact form beside its stem (another language than English only); default false. */
  readonly exactForms?: boolean
}

/** What an exact form's term starts with: no word's term can, so a form never meets a stem. */
export const exactFormMarker = "\u0001"

/** Whether a term is a word's exact form (TokenKind.Form), not a stem. */
export const isExactForm = (term: string): boolean => term.charCodeAt(0) === 1

/** Longer words (base64, hashes) are not indexed; their position still counts. */
const maxTermLength = 64
const maxParts = 32
const maxConnectorRun = 3
const asciiLetters = /^[a-z]+$/
const letters = /^[\p{L}\p{M}]+$/u
const apostrophes = /['’]/g
const asciiOnly = /^[\x00-\x7f]*$/

const isApostrophe = (unit: number) => unit === 0x27 || unit === 0x2019
const isTrailingSymbol = (unit: number) => unit === 0x2b /* + */ || unit === 0x23 /* # */
/** Texts from this length on are passed over by regular expression when looking for given words (runToScan). */
const longText = 2048
/** An ASCII character of a run that scanning reads as one token's: word characters, connectors, trailing symbols. */
const isRunUnit = (unit: number) =>
  unit < 128 && (classOfUnit(unit) === CharClass.Word || classOfUnit(unit) === CharClass.Connector || isTrailingSymbol(unit))
/** An ASCII character and its other case, escaped for a regular expression's character class. */
const bothCases = (unit: number) => {
  const hex = (u: number) => `\\x${u.toString(16).padStart(2, "0")}`
  return unit >= 97 && unit <= 122 ? hex(unit) + hex(unit - 32) : hex(unit)
}

let segmenter: Intl.Segmenter | undefined
const wordSegmenter = (): Intl.Segmenter => (segmenter ??= new Intl.Segmenter("und", { granularity: "word" }))

export class Analyzer {
  readonly stemming: boolean
  readonly language: LanguageAnalysis
  readonly stopWords: ReadonlySet<string>
  /** English: Porter's stemmer on folded words, apostrophes dropped (the path every page took before languages). */
  private readonly english: boolean
  private readonly cacheSize: number
  private readonly cache = new Map<string, string>()
  /** Whether words get their exact form too (exactForms, and not English). */
  readonly forms: boolean
  private readonly formCache = new Map<string, string>()
  // Scratch state of the token being scanned; analyze is not reentrant from its own sink.
  private readonly partStart = new Int32Array(maxParts)
  private readonly partEnd = new Int32Array(maxParts)
  private readonly partJoined = new Uint8Array(maxParts)
  private parts = 0
  private width = 1
  private stopped = false

  constructor(options: AnalyzerOptions = {}) {
    this.stemming = options.stemming ?? true
    this.language = options.language ?? englishAnalysis
    this.english = this.language.name === englishAnalysis.name
    this.stopWords = options.stopWords ?? this.language.stopWords
    this.cacheSize = options.cacheSize ?? 50_000
    this.forms = options.exactForms === true && !this.english
  }

  /**
   * Emits the terms of `text` to `sink`, numbering positions from `firstPosition`.
   * Returns the position after the last token.
   */
  analyze(text: string, sink: TokenSink, firstPosition = 0): number {
    this.initials = undefined
    return this.scan(text, sink, firstPosition)
  }

  /**
   * Like `analyze`, but only words whose first three characters may start one of `terms` are
   * normalised and emitted (folding an ASCII word lowercases it; stemming keeps the first three
   * letters of a stem of four or more and the first two of a stem of three, "key" is "kei",
   * while a term of one or two letters is looked for by its initial alone), and runs of ASCII
   * words of which none may are passed over without being split into tokens. Snippets use it to
   * find the query's words in long texts. Positions are not counted: the sink's are not the index's.
   */
  analyzeFor(text: string, terms: Iterable<string>, sink: TokenSink): void {
    // Tables kept for every call: a query's snippets call this ten times, and a new typed array
    // is allocated outside V8's heap, at a cost near a short text's whole scan. Only the pairs
    // set are cleared afterwards (the pair table is 32 KB).
    this.initialsTable.fill(0)
    this.marked = 0
    // An elided article ("l'homme") starts a word before the wanted term does: words with those initials are all read.
    const elisions = this.language.elisions
    if (elisions !== undefined) for (const article of elisions) this.initialsTable[article.charCodeAt(0) & 127] = 2
    for (const term of terms) {
      const first = term.charCodeAt(0)
      if (first >= 128) continue
      if (!this.english) {
        // Only Porter's stems are known to keep a word's first letters; another stemmer's word is looked for by its initial.
        this.mark(first, -1, -1)
        continue
      }
      // Stemming may change the second letter of a stem of two ("eyed" is "ei") and the third of a
      // stem of three ("key" is "kei"), never the first three of a longer one (58,000 words of the
      // bench's corpus checked; the analysis tests check random ones).
      this.mark(first, term.length >= 3 ? term.charCodeAt(1) : -1, term.length >= 4 ? term.charCodeAt(2) : -1)
      if (first === 0x2e /* .net */ && term.length > 1 && term.charCodeAt(1) < 128) {
        this.mark(term.charCodeAt(1), term.length >= 4 ? term.charCodeAt(2) : -1, term.length >= 5 ? term.charCodeAt(3) : -1)
      }
    }
    this.initials = this.initialsTable
    this.starts = undefined
    try {
      this.scan(text, sink, 0)
    } finally {
      this.initials = undefined
      this.starts = undefined
      for (let i = 0; i < this.marked; i++) this.pairTable[this.markedPairs[i]!] = 0
    }
  }

  /** A wanted term starts with these characters (second -1: `first` and whatever follows; third -1: the pair and whatever follows). */
  private mark(first: number, second: number, third: number): void {
    if (second < 0 || second >= 128 || this.marked === this.markedPairs.length) {
      this.initialsTable[first] = 2 // any second character
      return
    }
    if (this.initialsTable[first] === 0) this.initialsTable[first] = 1
    const at = first * 128 + second
    let pair = this.pairTable[at]!
    if (pair === 0) {
      const slot = this.marked++
      this.markedPairs[slot] = at
      this.thirds.fill(0, slot * 4, slot * 4 + 4)
      pair = slot + 2
    }
    if (third < 0 || third >= 128 || pair === 1) {
      this.pairTable[at] = 1 // any third character
      return
    }
    this.pairTable[at] = pair
    this.thirds[(pair - 2) * 4 + (third >>> 5)]! |= 1 << (third & 31)
  }

  /**
   * Where a word that may hold a wanted term can start, as a regular expression: an ASCII word
   * start whose first characters `wanted` accepts, or any character past ASCII (folding may
   * make a letter or mark past ASCII part of a wanted term). Compiled once per set of marked characters.
   */
  private wantedStarts(): RegExp {
    const alternatives: Array<string> = []
    for (let c = 0; c < 128; c++) {
      const initial = this.initialsTable[c]!
      if (initial === 0) continue
      if (initial === 2) {
        alternatives.push(`[${bothCases(c)}]`)
        continue
      }
      // An apostrophe second or third may be dropped ("O'Reilly" is "oreilly"); so may a character
      // past ASCII, which is a match of its own.
      alternatives.push(`[${bothCases(c)}]'`)
      for (let k = 0; k < this.marked; k++) {
        const at = this.markedPairs[k]!
        if (at >>> 7 !== c) continue
        const pair = `[${bothCases(c)}][${bothCases(at & 127)}]`
        if (this.pairTable[at] === 1) {
          alternatives.push(pair)
          continue
        }
        let thirds = "'"
        for (let e = 0; e < 128; e++) if (((this.thirds[k * 4 + (e >>> 5)]! >>> (e & 31)) & 1) === 1) thirds += bothCases(e)
        alternatives.push(`${pair}[${thirds}]`)
      }
    }
    // Cases spelled out and no unicode mode: the regexp engine's quickest form (quicker than /iu).
    const source = `${alternatives.length === 0 ? "" : `(?<![A-Za-z0-9])(?:${alternatives.join("|")})|`}[^\\x00-\\x7f]`
    let starts = this.startsCache.get(source)
    if (starts === undefined) {
      if (this.startsCache.size >= 256) this.startsCache.clear()
      starts = new RegExp(source, "g")
      this.startsCache.set(source, starts)
    }
    return starts
  }

  private starts: RegExp | undefined
  private readonly startsCache = new Map<string, RegExp>()

  /**
   * Where scanning resumes from a word character at i when looking for given words: i when the
   * run of ASCII word characters, connectors and trailing symbols at i may hold a wanted word,
   * else past it, and in a long text at the start of the first run after it that may (the text's
   * end when none does). Every token and part that scanning would make of a run starts at a word
   * of it, so none is passed over. On whole pages of documentation these scans are most of a
   * query's time (test/bench/search.ts --pages); the regexp engine finds the next run that may
   * quicker per character than the loop, but a call costs more than a short text's whole scan,
   * so passages keep the loop (test/bench/search.ts).
   */
  private runToScan(text: string, i: number, n: number): number {
    if (n < longText) return this.unwantedRunEnd(text, i, n)
    if (this.wanted(text, i)) return i
    const starts = (this.starts ??= this.wantedStarts())
    starts.lastIndex = i + 1
    if (!starts.test(text)) return n
    // Back from the match's last character to the start of its run (not before i). A character
    // past ASCII is a match itself, so the first of a run is met before any match after it.
    let j = starts.lastIndex - 1
    while (j > i && isRunUnit(text.charCodeAt(j - 1))) j--
    return j
  }

  /**
   * Where the run of ASCII word characters, connectors and trailing symbols from i ends, when no
   * word of it (a word character after a character that is not one) may normalise to a wanted
   * term; i itself when one may, or when a character past ASCII comes first.
   */
  private unwantedRunEnd(text: string, i: number, n: number): number {
    let j = i
    let inWord = false
    while (j < n) {
      const unit = text.charCodeAt(j)
      if (unit >= 128) return i
      const cls = classOfUnit(unit)
      if (cls === CharClass.Word) {
        if (!inWord && this.wanted(text, j)) return i
        inWord = true
      } else if (cls === CharClass.Connector || isTrailingSymbol(unit)) {
        inWord = false
      } else {
        break
      }
      j++
    }
    return j
  }

  /** Per ASCII initial: 0 no wanted term starts with it, 1 look at the second character (pairTable), 2 any may follow. */
  private initials: Uint8Array | undefined
  private readonly initialsTable = new Uint8Array(128)
  /** Per ASCII pair: 0 no wanted term starts with it, 1 any third character may follow, 2 + k the third characters of marked pair k may (thirds). */
  private readonly pairTable = new Uint16Array(128 * 128)
  /** Per marked pair, the third characters that may follow it: 128 bits. */
  private readonly thirds = new Int32Array(256 * 4)
  private readonly markedPairs = new Int32Array(256)
  private marked = 0

  /** Whether a word starting at text[i] may normalise to a wanted term (always true without a filter). */
  private wanted(text: string, i: number): boolean {
    const initials = this.initials
    if (initials === undefined) return true
    let c = text.charCodeAt(i)
    if (c >= 128) return true
    if (c >= 65 && c <= 90) c += 32
    const initial = initials[c]!
    if (initial !== 1) return initial === 2
    if (i + 1 >= text.length) return false
    let d = text.charCodeAt(i + 1)
    // Past ASCII (a combining mark, a curly apostrophe) or an apostrophe ("O'Reilly" is "oreilly"): it may.
    if (d >= 128 || d === 0x27) return true
    if (d >= 65 && d <= 90) d += 32
    const pair = this.pairTable[c * 128 + d]!
    if (pair < 2) return pair === 1
    if (i + 2 >= text.length) return false
    let e = text.charCodeAt(i + 2)
    if (e >= 128 || e === 0x27) return true
    if (e >= 65 && e <= 90) e += 32
    return ((this.thirds[(pair - 2) * 4 + (e >>> 5)]! >>> (e & 31)) & 1) === 1
  }

  private scan(text: string, sink: TokenSink, firstPosition: number): number {
    const n = text.length
    let pos = firstPosition
    let i = 0
    this.stopped = false
    // Looking for given words (and none that starts with a dot): runs of ASCII words that cannot
    // hold one are passed over without being split into tokens.
    const skipping = this.initials !== undefined && this.initials[0x2e] === 0
    while (i < n && !this.stopped) {
      const cls = this.classAt(text, i, n)
      if (cls === CharClass.Word) {
        if (skipping) {
          const next = this.runToScan(text, i, n)
          if (next > i) {
            i = next
            continue
          }
        }
        const end = this.scanToken(text, i, n)
        pos = this.emitToken(text, i, end, false, pos, sink)
        i = this.tokenEnd
      } else if (cls === CharClass.Segmented) {
        let j = i + this.width
        while (j < n && this.classAt(text, j, n) === CharClass.Segmented) j += this.width
        pos = this.emitSegmented(text, i, j, pos, sink)
        i = j
      } else if (text.charCodeAt(i) === 0x2e /* . */ && this.startsDotToken(text, i, n)) {
        // ".NET", ".bashrc": a dot that opens a word is part of how people type it.
        const end = this.scanToken(text, i + 1, n)
        pos = this.emitToken(text, i + 1, end, true, pos, sink)
        i = this.tokenEnd
      } else {
        i += this.width
      }
    }
    return pos
  }

  /** The indexed form of one word: folded, stemmed; "" for a stop word or an over-long word. */
  normalizeWord(raw: string): string {
    const cached = this.cache.get(raw)
    if (cached !== undefined) return cached
    let term: string
    if (!this.english) {
      term = raw.length > maxTermLength ? "" : this.inLanguage(raw)
    } else {
      term = raw.length > maxTermLength ? "" : foldTerm(raw)
      if (this.stopWords.has(term)) term = ""
      else if (this.stemming && term.length > 2 && asciiLetters.test(term)) term = stemmer(term)
    }
    if (this.cache.size >= this.cacheSize) this.cache.clear()
    this.cache.set(raw, term)
    return term
  }

  /** A word of another language than English: lower-cased, elision and stop words dropped, stemmed, then folded. */
  private inLanguage(raw: string): string {
    const language = this.language
    let word = this.unelided(raw)
    if (word.length === 0 || this.stopWords.has(word)) return ""
    if (this.stemming && language.stem !== undefined && word.length > 2 && letters.test(word)) word = language.stem(word)
    return foldTerm(word)
  }

  /** A word lower-cased in its language, its elided article and apostrophes dropped. */
  private unelided(raw: string): string {
    const language = this.language
    let word = language.lowerCase(asciiOnly.test(raw) ? raw : raw.normalize("NFC"))
    const apostrophe = word.search(apostrophes)
    if (apostrophe >= 0) {
      if (apostrophe > 0 && language.elisions?.has(word.slice(0, apostrophe)) === true) word = word.slice(apostrophe + 1)
      word = word.replace(apostrophes, "")
    }
    return word
  }

  /** A word's Form term: its exact form (lower-cased in the analyzer's language, elision dropped, folded) after the marker. */
  exactForm(raw: string): string {
    const cached = this.formCache.get(raw)
    if (cached !== undefined) return cached
    const form = exactFormMarker + foldTerm(this.unelided(raw))
    if (this.formCache.size >= this.cacheSize) this.formCache.clear()
    this.formCache.set(raw, form)
    return form
  }

  /** Forgets memoised words (the builder calls it so a built index does not keep them alive). */
  clearCache(): void {
    this.cache.clear()
    this.formCache.clear()
  }

  // ---- scanning ---------------------------------------------------------------------------

  private tokenEnd = 0

  private classAt(text: string, i: number, n: number): CharClass {
    const unit = text.charCodeAt(i)
    this.width = 1
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < n) {
      const low = text.charCodeAt(i + 1)
      if (low >= 0xdc00 && low <= 0xdfff) {
        this.width = 2
        return classOfCodePoint(((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000)
      }
    }
    return classOfUnit(unit)
  }

  private scanWordRun(text: string, i: number, n: number): number {
    while (i < n && this.classAt(text, i, n) === CharClass.Word) i += this.width
    return i
  }

  private startsDotToken(text: string, i: number, n: number): boolean {
    if (i + 1 >= n || this.classAt(text, i + 1, n) !== CharClass.Word) return false
    if (i === 0) return true
    const before = this.classAt(text, i - 1, n)
    return before === CharClass.Other && text.charCodeAt(i - 1) !== 0x2e
  }

  /**
   * Scans word parts joined by short connector runs ("os.path.join", "https://a.b/c").
   * Fills the part arrays, sets tokenEnd (where scanning resumes), returns the compound's end.
   */
  private scanToken(text: string, start: number, n: number): number {
    let e = this.scanWordRun(text, start, n)
    this.partStart[0] = start
    this.partEnd[0] = e
    this.partJoined[0] = 0
    this.parts = 1
    this.tokenEnd = e
    for (;;) {
      let c = e
      while (c < n && c - e < maxConnectorRun && classOfUnit(text.charCodeAt(c)) === CharClass.Connector) c++
      if (c === e || c >= n || this.classAt(text, c, n) !== CharClass.Word) break
      const run = c - e
      let hasApostrophe = false
      for (let k = e; k < c; k++) if (isApostrophe(text.charCodeAt(k))) hasApostrophe = true
      if (hasApostrophe && run > 1) break
      const next = this.scanWordRun(text, c, n)
      if (hasApostrophe) {
        const unit = text.charCodeAt(c)
        if (next - c === 1 && (unit === 0x73 || unit === 0x53)) {
          // Possessive "'s" is dropped, as Lucene's EnglishPossessiveFilter does.
          this.tokenEnd = next
          return e
        }
        // "don't", "O'Reilly": one word, spelled without the apostrophe.
        this.partEnd[this.parts - 1] = next
        this.partJoined[this.parts - 1] = 1
        e = next
        this.tokenEnd = e
        continue
      }
      if (this.parts === maxParts) break
      this.partStart[this.parts] = c
      this.partEnd[this.parts] = next
      this.partJoined[this.parts] = 0
      this.parts++
      e = next
      this.tokenEnd = e
    }
    // "C++", "C#", "g++": trailing symbols belong to the token when nothing word-like follows.
    let t = e
    while (t < n && t - e < 2 && isTrailingSymbol(text.charCodeAt(t))) t++
    if (t > e && (t >= n || this.classAt(text, t, n) !== CharClass.Word)) {
      this.tokenEnd = t
      return t
    }
    return e
  }

  private emitToken(text: string, start: number, end: number, leadingDot: boolean, pos: number, sink: TokenSink): number {
    const parts = this.parts
    const compound = parts > 1 || leadingDot || end > this.partEnd[parts - 1]!
    if (compound) {
      const from = leadingDot ? start - 1 : start
      if (
        end - from <= maxTermLength && (this.wanted(text, from) || this.wanted(text, start)) &&
        this.emit(sink, foldTerm(text.slice(from, end)), pos, from, end, TokenKind.Compound)
      ) {
        return pos + parts
      }
    }
    for (let p = 0; p < parts; p++) {
      const ps = this.partStart[p]!
      const pe = this.partEnd[p]!
      if (!this.wanted(text, ps)) continue
      // A word joined by an apostrophe is one word without it ("don't" is "dont"); another language
      // than English sees the apostrophe, which may follow an elided article ("l'homme").
      const raw = this.partJoined[p] === 1 && this.english ? text.slice(ps, pe).replace(apostrophes, "") : text.slice(ps, pe)
      const term = this.normalizeWord(raw)
      if (term.length > 0 && this.emit(sink, term, pos + p, ps, pe, compound ? TokenKind.Part : TokenKind.Word)) break
      if (this.forms && raw.length <= maxTermLength && this.emit(sink, this.exactForm(raw), pos + p, ps, pe, TokenKind.Form)) break
    }
    return pos + parts
  }

  private emitSegmented(text: string, start: number, end: number, pos: number, sink: TokenSink): number {
    for (const segment of wordSegmenter().segment(text.slice(start, end))) {
      if (segment.isWordLike !== true) continue
      const from = start + segment.index
      const term = segment.segment.length > maxTermLength ? "" : foldTerm(segment.segment)
      if (term.length > 0 && this.emit(sink, term, pos, from, from + segment.segment.length, TokenKind.Word)) return pos + 1
      pos++
    }
    return pos
  }

  /** Calls the sink; returns true when it asked to stop. */
  private emit(sink: TokenSink, term: string, pos: number, start: number, end: number, kind: TokenKind): boolean {
    if (sink(term, pos, start, end, kind) === true) {
      this.stopped = true
      return true
    }
    return false
  }
}
