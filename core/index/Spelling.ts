/**
 * Did you mean: corrections of the query's words that no page holds, from the index's own
 * vocabulary (its term dictionary and each term's document count), keyboard-neutral: every
 * word one Damerau-Levenshtein edit away (a letter deleted, inserted or replaced, two
 * neighbours swapped) is as near as any other, and the one found on the most pages wins.
 *
 * The vocabulary is the dictionary as stored (terms sorted by their UTF-8 bytes), walked as a
 * trie: nothing is built at load and nothing is kept per page. Its terms are stems, and a typo
 * changes how a word stems ("vaidation" stems to "vaidat", "validation" to "valid"), so the
 * typed word is not compared with the stems: its one-edit variants are analysed as the index
 * analyses words and looked up. Analysing all of them (about 50 per letter) would take a
 * millisecond; most cannot be words of the index, and a stem keeps the start of its word (the
 * stemmer strips or rewrites a suffix, changing at most the stem's last letter), so a variant
 * is analysed only when its start leads somewhere in the dictionary: the letters up to and
 * including its edit begin some term, or the edit lies in a suffix of at most `maxStripped`
 * letters after a term's start.
 *
 * Only free words are corrected: a quoted word, an excluded one, a `site:` host, a technical
 * token (`node.js`), a word with digits, a stop word and a word of fewer than four letters are
 * left as typed, and so is every word some page holds.
 */
import { Analyzer, TokenKind } from "./analysis/Analyzer.ts"
import { foldTerm } from "./analysis/Folding.ts"
import { endOfPostings, type InvertedIndex, PostingCursor } from "./InvertedIndex.ts"
import { maxQueryLength } from "./QueryParser.ts"
import { rankTopK } from "./Ranker.ts"
import { PageField, type SearchIndex } from "./SearchIndex.ts"
import type { SegmentedIndex } from "./SegmentedIndex.ts"

/** One corrected word: as typed and as corrected. */
export interface WordCorrection {
  readonly from: string
  readonly to: string
}

/** The query with its misspelt words corrected. */
export interface QuerySpelling {
  /** The query as typed with each corrected word in place (quotes, exclusions and site: kept). */
  readonly query: string
  readonly words: ReadonlyArray<WordCorrection>
  /**
   * Whether the corrected query has clearly more hits, so it is searched instead: every
   * corrected word is on at least `minPages` pages, or the query as typed matches no page at all.
   */
  readonly searched: boolean
}

/** A collection of pages the speller draws words from: its dictionary and a page's text (to show a correction as pages spell it). */
export interface SpellingSource {
  readonly web: InvertedIndex
  /** Title and the start of the text of page `doc`. */
  readonly text: (doc: number) => string
}

export interface SpellingSettings {
  /** Words shorter than this (in letters) are not corrected: too many words lie one edit from them. */
  readonly minLetters: number
  /** Letters a stemmer may strip or rewrite at a word's end (the default, 6, covers what Porter does to nearly every word of the bench corpora). */
  readonly maxStripped: number
  /** Pages a correction must be on for the corrected query to be searched when the query as typed has hits. */
  readonly minPages: number
  /** The best pages of the query as typed a correction is looked for on, and on how many of them it must be. */
  readonly contextPages: number
  readonly minContextPages: number
}

export const defaultSpellingSettings: SpellingSettings = { minLetters: 4, maxStripped: 6, minPages: 2, contextPages: 10, minContextPages: 1 }

/** Longer words are left alone: they are rarely typos of a dictionary word. */
const maxLetters = 32
/** Corrections remembered per index, by the word as typed. */
const cacheEntries = 1024
/** Pages read to see how they spell a correction, and characters of each. */
const surfacePages = 4
const surfaceChars = 4_000
/** Stems tried, most pages first, until pages are seen to write one of their variants. */
const candidateStems = 3

const utf8 = new TextEncoder()
const letter = /^\p{L}$/u
const letters = /^\p{L}+$/u
const asciiAlphabet: ReadonlyArray<string> = "abcdefghijklmnopqrstuvwxyz".split("")

/** A word's correction: the variant to show, its stem's document count. */
interface Found {
  readonly to: string
  readonly stem: string
  readonly pages: number
}

/** One of a query's free words, where it stands in the query. */
interface WordSpan {
  readonly start: number
  readonly end: number
}

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v" || c === "\u3000"

/**
 * Where the free words of a query stand (what QueryParser puts in `words`): outside quotes,
 * not excluded, not `site:` filters.
 */
export const freeWordSpans = (input: string, maxLength: number): Array<WordSpan> => {
  const n = Math.min(input.length, maxLength)
  const spans: Array<WordSpan> = []
  let i = 0
  while (i < n) {
    while (i < n && isSpace(input[i]!)) i++
    if (i >= n) break
    let negative = false
    if (input[i] === "-" && i + 1 < n && !isSpace(input[i + 1]!) && input[i + 1] !== "-") {
      negative = true
      i++
    }
    if (input[i] === "\"") {
      const close = input.indexOf("\"", i + 1)
      i = close < 0 || close >= n ? n : close + 1
      continue
    }
    let j = i
    while (j < n && !isSpace(input[j]!) && input[j] !== "\"") j++
    const word = input.slice(i, j)
    const site = word.length > 5 && word.slice(0, 5).toLowerCase() === "site:"
    if (!negative && !site && word.length > 0) spans.push({ start: i, end: j })
    i = j
  }
  return spans
}

/** The corrected word written as the typed one was: all capitals, a capital first, or as found. */
const casedLike = (typed: string, corrected: string): string => {
  if (typed.length > 1 && typed === typed.toUpperCase() && typed !== typed.toLowerCase()) return corrected.toUpperCase()
  const first = typed.charAt(0)
  if (first !== first.toLowerCase()) return corrected.charAt(0).toUpperCase() + corrected.slice(1)
  return corrected
}

/** The sorted term dictionary of one index read as a trie: ranges of terms sharing a prefix of bytes. */
class Dictionary {
  readonly web: InvertedIndex
  readonly text: (doc: number) => string
  private readonly bytes: Uint8Array
  private readonly offsets: Uint32Array
  /** The end of the last `narrow`'s range. */
  hi = 0

  constructor(source: SpellingSource) {
    this.web = source.web
    this.text = source.text
    this.bytes = source.web.arrays.termBytes
    this.offsets = source.web.arrays.termOffsets
  }

  get size(): number {
    return this.web.termCount
  }

  /** Byte `depth` of term `t`, or -1 when the term is that short (it sorts before its extensions). */
  private byteAt(t: number, depth: number): number {
    const at = this.offsets[t]! + depth
    return at < this.offsets[t + 1]! ? this.bytes[at]! : -1
  }

  /** Byte length of term `t`. */
  length(t: number): number {
    return this.offsets[t + 1]! - this.offsets[t]!
  }

  /**
   * Among terms lo..hi (all sharing their first `depth` bytes), the first whose byte `depth`
   * is `byte`; the range's end in `hi`. An empty range when none is.
   */
  narrow(lo: number, hi: number, depth: number, byte: number): number {
    let a = lo
    let b = hi
    while (a < b) {
      const mid = (a + b) >>> 1
      if (this.byteAt(mid, depth) < byte) a = mid + 1
      else b = mid
    }
    const start = a
    b = hi
    while (a < b) {
      const mid = (a + b) >>> 1
      if (this.byteAt(mid, depth) <= byte) a = mid + 1
      else b = mid
    }
    this.hi = a
    return start
  }

  /**
   * The characters that continue the prefix shared by terms lo..hi (`depth` bytes long), each
   * with whether prefix + character is itself a term.
   */
  children(lo: number, hi: number, depth: number, out: Map<string, boolean>): void {
    let t = lo
    if (t < hi && this.byteAt(t, depth) < 0) t++
    while (t < hi) {
      const lead = this.byteAt(t, depth)
      const width = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4
      // Every character under this lead byte: walk its continuation bytes in order.
      let a = this.narrow(t, hi, depth, lead)
      const end = this.hi
      if (width === 1) {
        out.set(String.fromCharCode(lead), this.length(a) === depth + 1)
        t = end
        continue
      }
      while (a < end) {
        let lo2 = a
        let hi2 = end
        for (let k = 1; k < width && lo2 < hi2; k++) {
          const byte = this.byteAt(lo2, depth + k)
          if (byte < 0) break
          lo2 = this.narrow(lo2, hi2, depth + k, byte)
          hi2 = this.hi
        }
        const start = this.offsets[lo2]! + depth
        if (this.length(lo2) >= depth + width) {
          const char = new TextDecoder().decode(this.bytes.subarray(start, start + width))
          out.set(char, this.length(lo2) === depth + width)
        }
        a = Math.max(hi2, a + 1)
      }
      t = end
    }
  }
}

/** One dictionary walked along a word: the range of terms each prefix of it begins. */
interface Path {
  readonly dictionary: Dictionary
  /** Per prefix length p: terms lo[p]..hi[p] begin with the word's first p characters (depth[p] bytes); lo >= hi past where none does. */
  readonly lo: Int32Array
  readonly hi: Int32Array
  readonly depth: Int32Array
  /** Per prefix length p: the letters that continue the word's first p characters in the dictionary. */
  readonly next: ReadonlyArray<ReadonlySet<string>>
  /** Per prefix length p: whether the first p characters and one letter more make a term (a stem such a word may have). */
  readonly stemAt: ReadonlyArray<boolean>
}

/** A corrected word's stem, the pages it is on and the variants one edit from the word that stem to it. */
interface Candidate {
  readonly pages: number
  readonly variants: Array<string>
}

export class Speller {
  readonly settings: SpellingSettings
  private readonly dictionaries: ReadonlyArray<Dictionary>
  /**
   * The best pages of a query by BM25F (page ids of the first dictionary's index), to see
   * whether a correction belongs with the query's other words.
   */
  private readonly context: ((keywords: string, k: number) => ArrayLike<number>) | undefined
  private readonly analyzer: Analyzer
  /** The analysis of variants: their own cache, so they do not push the query words' out. */
  private readonly variantAnalyzer: Analyzer
  private readonly cache = new Map<string, Found | null>()
  private readonly charBytes = new Map<string, Uint8Array>()

  constructor(
    sources: ReadonlyArray<SpellingSource>,
    stemming: boolean,
    context?: (keywords: string, k: number) => ArrayLike<number>,
    settings: SpellingSettings = defaultSpellingSettings
  ) {
    this.settings = settings
    this.context = context
    this.dictionaries = sources.map((s) => new Dictionary(s))
    this.analyzer = new Analyzer({ stemming, cacheSize: 4096 })
    this.variantAnalyzer = new Analyzer({ stemming, cacheSize: 4096 })
  }

  /** Pages holding `term` across the dictionaries; 0 when none does. */
  private pages(term: string): number {
    let pages = 0
    for (const d of this.dictionaries) {
      const id = d.web.lookup(term)
      if (id >= 0) pages += d.web.arrays.termDf[id]!
    }
    return pages
  }

  /**
   * The corrections of `keywords` (read up to `maxLength` characters, as the query parser
   * does): undefined when every free word is known or none has a correction. Never throws.
   */
  correct(keywords: string, maxLength: number): QuerySpelling | undefined {
    if (typeof keywords !== "string" || this.dictionaries.every((d) => d.size === 0)) return undefined
    const replaced: Array<{ start: number; end: number; from: string; to: string; stem: string; pages: number }> = []
    let anyKnown = false
    for (const span of freeWordSpans(keywords, maxLength)) {
      const text = keywords.slice(span.start, span.end)
      const tokens: Array<{ term: string; start: number; end: number; kind: number }> = []
      this.analyzer.analyze(text, (term, _position, start, end, kind) => {
        tokens.push({ term, start, end, kind })
        return tokens.length >= 64
      })
      for (const token of tokens) {
        if (this.pages(token.term) > 0) {
          anyKnown = true
          continue
        }
        if (token.kind !== TokenKind.Word) continue
        const typed = text.slice(token.start, token.end)
        if (!letters.test(typed)) continue
        const found = this.correctWord(typed)
        if (found === undefined) continue
        replaced.push({ start: span.start + token.start, end: span.start + token.end, from: typed, to: casedLike(typed, found.to), stem: found.stem, pages: found.pages })
      }
    }
    if (replaced.length === 0) return undefined
    let query = ""
    let at = 0
    for (const r of replaced) {
      query += keywords.slice(at, r.start) + r.to
      at = r.end
    }
    query += keywords.slice(at)
    const searched = !anyKnown || (replaced.every((r) => r.pages >= this.settings.minPages) && this.inContext(keywords, replaced.map((r) => r.stem)))
    return { query, words: replaced.map((r) => ({ from: r.from, to: r.to })), searched }
  }

  /**
   * Whether every corrected stem is on one of the best pages of the query as typed (found by
   * its other words): a correction that belongs with them, not merely a word near the one typed.
   */
  private inContext(keywords: string, stems: ReadonlyArray<string>): boolean {
    if (this.context === undefined) return true
    const docs = Int32Array.from(this.context(keywords, this.settings.contextPages)).sort()
    const web = this.dictionaries[0]!.web
    return stems.every((stem) => {
      const id = web.lookup(stem)
      if (id < 0) return false
      const postings = new PostingCursor(web, id, 1)
      try {
        let found = 0
        for (const doc of docs) {
          postings.advance(doc)
          if (postings.doc === doc) found++
        }
        return found >= this.settings.minContextPages
      } finally {
        postings.close()
      }
    })
  }

  /** The correction of one word no page holds, or undefined; remembered by the word as typed. */
  private correctWord(typed: string): Found | undefined {
    const word = foldTerm(typed)
    const cached = this.cache.get(word)
    if (cached !== undefined) return cached ?? undefined
    const found = this.search(Array.from(word))
    if (this.cache.size >= cacheEntries) this.cache.delete(this.cache.keys().next().value!)
    this.cache.set(word, found ?? null)
    return found
  }

  private bytesOf(char: string): Uint8Array {
    let bytes = this.charBytes.get(char)
    if (bytes === undefined) {
      bytes = utf8.encode(char)
      if (this.charBytes.size < 4096) this.charBytes.set(char, bytes)
    }
    return bytes
  }

  /** The walk of one dictionary along the word's characters. */
  private path(d: Dictionary, chars: ReadonlyArray<string>): Path {
    const n = chars.length
    const lo = new Int32Array(n + 1)
    const hi = new Int32Array(n + 1)
    const depth = new Int32Array(n + 1)
    const next: Array<Set<string>> = []
    const stemAt: Array<boolean> = []
    let a = 0
    let b = d.size
    let bytes = 0
    const children = new Map<string, boolean>()
    for (let p = 0; p <= n; p++) {
      lo[p] = a
      hi[p] = b
      depth[p] = bytes
      children.clear()
      if (a < b) d.children(a, b, bytes, children)
      const set = new Set<string>()
      let stem = false
      for (const [c, isTerm] of children) {
        if (!letter.test(c)) continue
        set.add(c)
        if (isTerm) stem = true
      }
      next.push(set)
      stemAt.push(stem)
      if (p === n || a >= b) continue
      for (const byte of this.bytesOf(chars[p]!)) {
        a = d.narrow(a, b, bytes, byte)
        b = d.hi
        bytes++
        if (a >= b) break
      }
    }
    return { dictionary: d, lo, hi, depth, next, stemAt }
  }

  /**
   * Whether a variant's characters from p (`first` and `second` when given, then the word's own
   * from `from` on), put after the word's first p characters, keep leading into the dictionary
   * until `need` characters from the word's start.
   */
  private reaches(path: Path, chars: ReadonlyArray<string>, p: number, need: number, first: string | undefined, second: string | undefined, from: number): boolean {
    if (p >= need) return true
    let a = path.lo[p]!
    let b = path.hi[p]!
    let bytes = path.depth[p]!
    if (a >= b) return false
    const d = path.dictionary
    let at = p
    const step = (char: string): boolean => {
      for (const byte of this.bytesOf(char)) {
        a = d.narrow(a, b, bytes, byte)
        b = d.hi
        bytes++
        if (a >= b) return false
      }
      at++
      return true
    }
    if (first !== undefined && (!step(first) || at >= need)) return at >= need
    if (second !== undefined && (!step(second) || at >= need)) return at >= need
    for (let k = from; k < chars.length; k++) if (!step(chars[k]!) || at >= need) return at >= need
    return false
  }

  /** The best word one edit from the word (its characters `chars`), by the pages its stem is on. */
  private search(chars: ReadonlyArray<string>): Found | undefined {
    const n = chars.length
    const { minLetters, maxStripped } = this.settings
    if (n < minLetters || n > maxLetters) return undefined
    const paths = this.dictionaries.map((d) => this.path(d, chars))
    const stemAt = (l: number) => l >= 2 && l <= n && paths.some((path) => path.stemAt[l] === true)
    // A stem keeps all but at most `maxStripped` of its word's letters: for a variant of `length`
    // letters, the shortest start it can have, and the first such start that leads to a term.
    const earliestStem = (length: number): number => {
      for (let l = Math.max(2, length - maxStripped); l <= Math.min(n, length); l++) if (stemAt(l)) return l
      return Infinity
    }
    const earliest = [earliestStem(n - 1), earliestStem(n), earliestStem(n + 1)]
    const heads = Array.from({ length: n + 1 }, (_, p) => chars.slice(0, p).join(""))
    const tails = Array.from({ length: n + 2 }, (_, p) => chars.slice(p).join(""))
    const alphabet = this.alphabet(chars, paths)
    const found = new Map<string, Candidate>()
    const seen = new Set<string>()
    /**
     * A variant whose first change is at p, `length` letters long: its stem either ends before
     * p (the start of a term the word's own start leads to) or runs past it, where the variant's
     * characters from p (`first`, `second`, then the word's from `from`) must keep leading into the dictionary.
     */
    const consider = (p: number, length: number, first: string | undefined, second: string | undefined, from: number, variant: () => string) => {
      const before = earliest[length - n + 1]! <= p
      const need = Math.max(p + 1, length - maxStripped)
      let past: boolean | undefined
      if (!before) {
        past = paths.some((path) => this.reaches(path, chars, p, need, first, second, from))
        if (!past) return
      }
      const text = variant()
      if (seen.has(text)) return
      seen.add(text)
      const stem = this.variantAnalyzer.normalizeWord(text)
      if (stem.length === 0) return
      // Its stem's start is where the variant could lead: a term that does not begin there is not in the index.
      if (stem.length - 1 <= p) {
        if (!stemAt(stem.length - 1)) return
      } else if (!(past ??= paths.some((path) => this.reaches(path, chars, p, need, first, second, from)))) {
        return
      }
      let entry = found.get(stem)
      if (entry === undefined) {
        entry = { pages: this.pages(stem), variants: [] }
        found.set(stem, entry)
      }
      if (entry.pages > 0) entry.variants.push(text)
    }
    for (let p = 0; p < n; p++) consider(p, n - 1, undefined, undefined, p + 1, () => heads[p]! + tails[p + 1]!)
    for (let p = 0; p + 1 < n; p++) {
      if (chars[p] !== chars[p + 1]) consider(p, n, chars[p + 1], chars[p], p + 2, () => heads[p]! + chars[p + 1] + chars[p] + tails[p + 2]!)
    }
    for (let p = 0; p < n; p++) {
      const any = earliest[1]! <= p
      for (const c of any ? alphabet : this.continuing(paths, p)) {
        if (c !== chars[p]) consider(p, n, c, undefined, p + 1, () => heads[p]! + c + tails[p + 1]!)
      }
    }
    for (let p = 0; p <= n; p++) {
      const any = earliest[2]! <= p
      for (const c of any ? alphabet : this.continuing(paths, p)) consider(p, n + 1, c, undefined, p, () => heads[p]! + c + tails[p]!)
    }
    // The stems on the most pages first; a variant counts once pages are seen to write it.
    const ranked = [...found].filter(([, e]) => e.pages > 0).sort((a, b) => b[1].pages - a[1].pages || (a[0] < b[0] ? -1 : 1))
    for (const [stem, entry] of ranked.slice(0, candidateStems)) {
      const to = this.spelledInPages(stem, entry.variants)
      if (to !== undefined) return { to, stem, pages: entry.pages }
    }
    return undefined
  }

  /** The letters that continue the word's first p characters in some dictionary. */
  private continuing(paths: ReadonlyArray<Path>, p: number): Iterable<string> {
    if (paths.length === 1) return paths[0]!.next[p]!
    const all = new Set<string>()
    for (const path of paths) for (const c of path.next[p]!) all.add(c)
    return all
  }

  /** Letters an edit may bring in: a-z for a word of ASCII letters, else those of the word and of the terms along it. */
  private alphabet(chars: ReadonlyArray<string>, paths: ReadonlyArray<Path>): ReadonlyArray<string> {
    if (chars.every((c) => c >= "a" && c <= "z")) return asciiAlphabet
    const all = new Set<string>(chars)
    for (const path of paths) for (const next of path.next) for (const c of next) all.add(c)
    return [...all].sort()
  }

  /**
   * Of the variants that stem to `stem`, the one the first pages holding it write most often;
   * undefined when none of those pages writes any (a variant that only stems like a word of
   * the index is not a word to show).
   */
  private spelledInPages(stem: string, variants: ReadonlyArray<string>): string | undefined {
    const counts = new Map<string, number>(variants.map((v) => [v, 0]))
    let read = 0
    for (const d of this.dictionaries) {
      const id = d.web.lookup(stem)
      if (id < 0) continue
      const postings = new PostingCursor(d.web, id, 1)
      try {
        for (; read < surfacePages && postings.doc !== endOfPostings; read++, postings.next()) {
          const text = foldTerm(d.text(postings.doc))
          let any = false
          for (const v of variants) {
            const count = occurrences(text, v)
            if (count > 0) any = true
            counts.set(v, counts.get(v)! + count)
          }
          // The first page that writes one settles it, unless it writes several.
          if (any && variants.filter((v) => counts.get(v)! > 0).length === 1) break
        }
      } finally {
        postings.close()
      }
    }
    let best: string | undefined
    for (const v of variants) if (counts.get(v)! > 0 && (best === undefined || counts.get(v)! > counts.get(best)!)) best = v
    return best
  }
}

/** How often `word` stands in `text` as a whole word. */
const occurrences = (text: string, word: string): number => {
  let count = 0
  let from = 0
  for (;;) {
    const at = text.indexOf(word, from)
    if (at < 0) return count
    const before = at === 0 ? "" : text.charAt(at - 1)
    const after = text.charAt(at + word.length)
    if (!letter.test(before) && !letter.test(after)) count++
    from = at + word.length
  }
}

/** A SearchIndex's pages as a source of words. */
export const spellingSource = (index: SearchIndex): SpellingSource => ({
  web: index.parts.web,
  text: (doc) => `${index.parts.pages.get(doc, PageField.Title)}\n${index.parts.pages.getPart(doc, PageField.Text, 0, surfaceChars)}`
})

const spellers = new WeakMap<object, Speller>()

/**
 * The speller of an index (one kept per index, with its cache of corrections): a snapshot's,
 * or a snapshot and the pages added since, whose words count together.
 */
export const spellerFor = (index: SearchIndex | SegmentedIndex): Speller => {
  let speller = spellers.get(index)
  if (speller === undefined) {
    const sources = "segment" in index ? [spellingSource(index.base), spellingSource(index.segment)] : [spellingSource(index)]
    const base = "segment" in index ? index.base : index
    // BM25F alone: which pages are best is what matters here, not their order among themselves.
    const context = (keywords: string, k: number) => {
      const query = base.compile(keywords)
      return query === undefined ? [] : rankTopK(base.parts.web, query, k, base.parts.pageCluster).docs
    }
    speller = new Speller(sources, index.options.stemming, context)
    spellers.set(index, speller)
  }
  return speller
}

/** Corrections of the query's misspelt words over `index`, or undefined when there are none. */
export const spellQuery = (index: SearchIndex | SegmentedIndex, keywords: string): QuerySpelling | undefined =>
  spellerFor(index).correct(keywords, maxQueryLength)
