/**
 * The passages of a page most relevant to a query, for an agent that wants what answers its
 * question rather than the page's opening: the text cut into whole sentences, the query's
 * words found in them with the engine's own analysis (folded, stemmed, stop words and question
 * words dropped: core/index/analysis). The passage holding the most of the query's distinct
 * words is chosen first (a word weighted by its rarity within the page chose worse passages on
 * the judged collections), grown with the sentences around it, then the next, a word already
 * shown counting half; they are given back in page order. Search results (`content:
 * "highlights"`), grounded chat's sources and Tavily's chunks all read pages through it.
 * test/bench/relevance.ts measures it against a page's first characters.
 */
import { Analyzer } from "../index/analysis/Analyzer.ts"
import { parseQuery } from "../index/QueryParser.ts"

/** A passage grows by whole sentences up to about this many characters. */
export const PASSAGE_CHARS = 500
/** Between two passages that are not next to each other in the page (Tavily's join). */
export const PASSAGE_SEPARATOR = " [...] "

/** Sentences a passage is built around (those with the query's words), at most. */
const CORE_SENTENCES = 3
/** Sentences in one passage, at most. */
const PASSAGE_SENTENCES = 6
/** Query terms looked for, at most (one bit each). */
const MAX_TERMS = 31

export interface HighlightOptions {
  /** All passages together, separators included, at most this many characters. */
  readonly maxChars: number
  /** A passage grows by whole sentences up to about this many characters (default PASSAGE_CHARS). */
  readonly passageChars?: number
  /** At most this many passages (default: as many as maxChars holds). */
  readonly maxPassages?: number
  /** A page that fits in maxChars whole is given whole (default true). */
  readonly wholeWhenFits?: boolean
}

/** A query's terms as highlights look for them: made once per search, used for every page. */
export interface HighlightQuery {
  /** Analysed term -> its bit. */
  readonly ids: ReadonlyMap<string, number>
}

/** One passage: its text (white space collapsed) and where it lies in the page's text. */
export interface Passage {
  readonly text: string
  readonly start: number
  readonly end: number
}

const analyzer = new Analyzer()

/** Words that shape a question without saying what it is about, as the analysis writes them. */
const QUESTION_TERMS: ReadonlySet<string> = (() => {
  const terms = new Set<string>()
  analyzer.analyze("how what why when where which who whom whose do does did can could should would may might i me my we our you your", (term) => {
    terms.add(term)
  })
  return terms
})()

/** The terms of the query's words and phrases (not its `-excluded` words or `site:` filters, nor question words). */
export const highlightQuery = (keywords: string): HighlightQuery => {
  const parsed = parseQuery(keywords)
  const ids = new Map<string, number>()
  const add = (term: string) => {
    if (term.length > 0 && !QUESTION_TERMS.has(term) && !ids.has(term) && ids.size < MAX_TERMS) ids.set(term, ids.size)
  }
  analyzer.analyze(parsed.words, add)
  for (const phrase of parsed.phrases) analyzer.analyze(phrase, add)
  return { ids }
}

// ---- sentences ----------------------------------------------------------------------------

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || c === 0x2028 || c === 0x2029
/** . ! ? … and the full-width ones of Chinese and Japanese. */
const isTerminal = (c: number) => c === 46 || c === 33 || c === 63 || c === 0x2026 || c === 0x3002 || c === 0xff01 || c === 0xff1f || c === 0xff0e
/** Closing quotes and brackets that belong to the sentence before them. */
const isCloser = (c: number) => c === 41 || c === 93 || c === 34 || c === 39 || c === 0x201d || c === 0x2019 || c === 0xbb
const isLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c > 127
const isLower = (text: string, i: number) => {
  const c = text.charCodeAt(i)
  return (c >= 97 && c <= 122) || (c > 127 && /\p{Ll}/u.test(text[i]!))
}

/** Words a period follows without ending the sentence. */
const ABBREVIATIONS = new Set([
  "al", "approx", "ca", "cf", "ch", "co", "dept", "dr", "e.g", "eg", "eq", "eqs", "est", "etc", "fig", "figs", "i.e", "ie", "inc",
  "jr", "ltd", "mr", "mrs", "ms", "no", "nos", "p", "pp", "prof", "ref", "refs", "resp", "sec", "sr", "st", "u.s", "vol", "vs"
])

/** Whether the period at `dot` ends an abbreviation, an initial or a list number rather than the sentence begun at `start`. */
const abbreviation = (text: string, start: number, dot: number): boolean => {
  let from = dot
  while (from > start && (isLetter(text.charCodeAt(from - 1)) || text.charCodeAt(from - 1) === 46 || (text.charCodeAt(from - 1) >= 48 && text.charCodeAt(from - 1) <= 57))) from--
  const word = text.slice(from, dot)
  if (word.length === 0) return false
  // "J. Smith": one capital letter. "1. Install": a number opening its line.
  if (word.length === 1 && text.charCodeAt(from) >= 65 && text.charCodeAt(from) <= 90) return true
  if (from === start && /^\d{1,3}$/.test(word)) return true
  return word.length <= 6 && ABBREVIATIONS.has(word.toLowerCase())
}

/**
 * Whether the line break at `i` ends the sentence that reached `last`: a blank line does; a
 * line whose next line goes on in lower case (text wrapped at a fixed width) does not; any
 * other break does (a heading, a list item, a paragraph).
 */
const breakEnds = (text: string, i: number): boolean => {
  const n = text.length
  let k = i + 1
  while (k < n && isSpace(text.charCodeAt(k))) {
    if (text.charCodeAt(k) === 10) return true
    k++
  }
  return k >= n || !isLower(text, k)
}

/**
 * The sentences of `text` as [start, end) offsets, flat (start0, end0, start1, end1, ...): a
 * sentence ends after . ! ? (and its closing quotes) before white space, at a blank line, and
 * at a line break unless the next line goes on in lower case. A sentence longer than
 * `longest` characters is cut at spaces into pieces of at most that many.
 */
export const sentenceSpans = (text: string, longest = PASSAGE_CHARS): Array<number> => {
  const out: Array<number> = []
  scanSentences(text, 0, text.length, longest, out)
  return out
}

/** The sentences of text[from, to) appended to `out` (sentenceSpans' rule; the ends of the range end a sentence). */
const scanSentences = (text: string, from: number, to: number, longest: number, out: Array<number>): void => {
  let start = -1
  let last = -1
  const close = (end: number) => {
    if (end - start <= longest) out.push(start, end)
    else cutLong(text, start, end, longest, out)
    start = -1
  }
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) {
      if (start >= 0 && breakEnds(text, i)) close(last + 1)
      continue
    }
    if (isSpace(c)) continue
    if (start < 0) start = i
    last = i
    if (!isTerminal(c)) continue
    let j = i + 1
    while (j < to && (isTerminal(text.charCodeAt(j)) || isCloser(text.charCodeAt(j)))) j++
    // Full-width stops end a sentence with no space after them.
    if (j < to && !isSpace(text.charCodeAt(j)) && c < 0x3000 && c !== 0xff0e) continue
    if (c === 46 && j === i + 1 && abbreviation(text, start, i)) continue
    last = j - 1
    close(j)
    i = j - 1
  }
  if (start >= 0) close(last + 1)
}

/** A run of text with no sentence end, cut at spaces into pieces of at most `longest`. */
const cutLong = (text: string, start: number, end: number, longest: number, out: Array<number>) => {
  let from = start
  while (from < end) {
    while (from < end && isSpace(text.charCodeAt(from))) from++
    if (from >= end) return
    let to = Math.min(end, from + longest)
    if (to < end) {
      let space = to
      while (space > from + (longest >> 1) && !isSpace(text.charCodeAt(space))) space--
      if (space > from + (longest >> 1)) to = space
    }
    let trimmed = to
    while (trimmed > from && isSpace(text.charCodeAt(trimmed - 1))) trimmed--
    out.push(from, trimmed)
    from = to
  }
}

// ---- choosing passages --------------------------------------------------------------------

/** Query words looked for in one page, at most: the scan stops there, as the engine's snippets do. */
const MAX_MATCHES = 512
/** Places of a page whose sentences are looked at, at most (each a passage's width of the densest matches). */
const MAX_PLACES = 8

/** Where the query's terms are in `text` (offsets and term bits, in text order), found with the engine's analysis. */
const matchesOf = (text: string, query: HighlightQuery): { readonly at: Array<number>; readonly bits: Array<number> } => {
  const at: Array<number> = []
  const bits: Array<number> = []
  if (query.ids.size === 0) return { at, bits }
  analyzer.analyzeFor(text, query.ids.keys(), (term, _position, start) => {
    const id = query.ids.get(term)
    if (id === undefined) return false
    at.push(start)
    bits.push(1 << id)
    return at.length >= MAX_MATCHES
  })
  return { at, bits }
}

/**
 * Where the query's words gather: windows a passage wide over the matches, the ones holding the
 * most distinct words first (the earlier on a tie), at most `places` of them that do not
 * overlap, as [first match, last match] offsets in text order. Only these places are cut into
 * sentences, so a long page costs its scan for the words and little more.
 */
const densestPlaces = (at: ReadonlyArray<number>, bits: ReadonlyArray<number>, width: number, places: number): Array<[number, number]> => {
  if (at.length === 0) return []
  const held = new Int32Array(32)
  const candidates: Array<{ readonly from: number; readonly to: number; readonly words: number }> = []
  let distinct = 0
  let j = 0
  for (let i = 0; i < at.length; i++) {
    while (j < at.length && at[j]! - at[i]! < width) {
      const t = 31 - Math.clz32(bits[j]!)
      if (held[t]++ === 0) distinct++
      j++
    }
    candidates.push({ from: i, to: j - 1, words: distinct })
    const t = 31 - Math.clz32(bits[i]!)
    if (--held[t] === 0) distinct--
  }
  candidates.sort((a, b) => b.words - a.words || a.from - b.from)
  const chosen: Array<[number, number]> = []
  for (const c of candidates) {
    if (chosen.length === places) break
    const from = at[c.from]!
    const to = at[c.to]!
    if (chosen.some(([a, b]) => from <= b + width && to >= a - width)) continue
    chosen.push([from, to])
  }
  return chosen.sort((a, b) => a[0] - b[0])
}

/**
 * The sentences a passage can be made of: those within `reach` characters of a place (or of the
 * page's start when nothing matched). A range that starts or ends inside the text loses its
 * first or last sentence (it may be cut); `cut` marks each sentence that follows such a gap.
 */
const sentencesNear = (text: string, places: ReadonlyArray<[number, number]>, reach: number, longest: number): { readonly spans: Array<number>; readonly cut: Array<boolean> } => {
  const spans: Array<number> = []
  const cut: Array<boolean> = []
  const n = text.length
  const ranges: Array<[number, number]> = []
  if (places.length === 0) ranges.push([0, Math.min(n, reach)])
  for (const [first, last] of places) {
    const from = Math.max(0, first - reach)
    const to = Math.min(n, last + reach)
    const previous = ranges[ranges.length - 1]
    if (previous !== undefined && from <= previous[1]) previous[1] = Math.max(previous[1], to)
    else ranges.push([from, to])
  }
  const scratch: Array<number> = []
  for (const [from, to] of ranges) {
    scratch.length = 0
    scanSentences(text, from, to, longest, scratch)
    const first = from === 0 ? 0 : 2
    const end = to === n ? scratch.length : scratch.length - 2
    for (let k = first; k < end; k += 2) {
      cut.push(k === first)
      spans.push(scratch[k]!, scratch[k + 1]!)
    }
  }
  return { spans, cut }
}

/** The sentences' query terms as bit masks (sentence i: masks[i]). */
const termMasks = (spans: ReadonlyArray<number>, at: ReadonlyArray<number>, bits: ReadonlyArray<number>): Int32Array => {
  const count = spans.length >> 1
  const masks = new Int32Array(count)
  let k = 0
  for (let i = 0; i < at.length && count > 0; i++) {
    const start = at[i]!
    // Terms come in text order (a compound's parts just after it): the sentence moves forward.
    while (k + 1 < count && spans[(k + 1) * 2]! <= start) k++
    while (k > 0 && spans[k * 2]! > start) k--
    if (start >= spans[k * 2]! && start < spans[k * 2 + 1]!) masks[k] = masks[k]! | bits[i]!
  }
  return masks
}

/**
 * The passages of `text` most relevant to `query`, in page order, within `options.maxChars`;
 * none for a page without text. A page none of whose sentences holds a query term gives its
 * opening sentences.
 */
export const highlightPassages = (text: string, query: HighlightQuery, options: HighlightOptions): Array<Passage> => {
  const maxChars = Math.max(0, Math.floor(options.maxChars))
  const passageChars = Math.max(1, Math.min(options.passageChars ?? PASSAGE_CHARS, maxChars))
  const maxPassages = options.maxPassages ?? Number.MAX_SAFE_INTEGER
  if (maxChars === 0 || maxPassages <= 0) return []
  if (options.wholeWhenFits !== false && text.length <= maxChars) {
    const whole = passageOf(text, 0, text.length)
    return whole.text === "" ? [] : [whole]
  }
  const { at, bits } = matchesOf(text, query)
  const places = densestPlaces(at, bits, passageChars, Math.min(MAX_PLACES, Math.min(maxPassages, Math.ceil(maxChars / passageChars)) + 1))
  const { spans, cut } = sentencesNear(text, places, passageChars + (passageChars >> 1), passageChars)
  const count = spans.length >> 1
  if (count === 0) return []
  const masks = termMasks(spans, at, bits)
  const startOf = (i: number) => spans[i * 2]!
  const endOf = (i: number) => spans[i * 2 + 1]!
  const breaks = breaksBefore(text, spans, cut)

  // Each of the query's words a passage holds counts once; one already shown, half as much each time.
  const terms = query.ids.size
  const shown = new Float64Array(terms).fill(1)
  const scoreOf = (mask: number) => {
    let score = 0
    for (let t = 0; t < terms; t++) if ((mask >>> t) & 1) score += shown[t]!
    return score
  }

  const used = new Uint8Array(count)
  const chosen: Array<[number, number]> = []
  let left = maxChars
  while (chosen.length < maxPassages) {
    const room = Math.min(passageChars, left - (chosen.length === 0 ? 0 : PASSAGE_SEPARATOR.length))
    if (room <= 0) break
    // The best core: one to CORE_SENTENCES sentences opening and closing with a query term, fewest sentences on a tie.
    let best = -1
    let bestEnd = -1
    let bestScore = 0
    for (let i = 0; i < count; i++) {
      if (masks[i] === 0 || used[i]) continue
      let mask = 0
      for (let j = i; j < count && j < i + CORE_SENTENCES && !used[j] && endOf(j) - startOf(i) <= room; j++) {
        mask |= masks[j]!
        if (masks[j] === 0) continue
        const score = scoreOf(mask)
        if (score > bestScore + 1e-9) {
          best = i
          bestEnd = j
          bestScore = score
        }
      }
    }
    if (best < 0) {
      if (chosen.length === 0) chosen.push(opening(spans, count, room))
      break
    }
    // Grown with the sentences around it while the passage has room: in its line first, after it
    // before before it (what follows a statement explains it); then across single line breaks (a
    // heading and its text, a wrapped paragraph's next one), never across a blank line.
    let from = best
    let to = bestEnd
    for (const crossing of [BREAK_NONE, BREAK_LINE]) {
      for (let grown = true; grown && to - from + 1 < PASSAGE_SENTENCES;) {
        grown = false
        if (to + 1 < count && breaks[to + 1]! <= crossing && !used[to + 1] && endOf(to + 1) - startOf(from) <= room) {
          to++
          grown = true
        }
        if (to - from + 1 < PASSAGE_SENTENCES && from > 0 && breaks[from]! <= crossing && !used[from - 1] && endOf(to) - startOf(from - 1) <= room) {
          from--
          grown = true
        }
      }
    }
    let mask = 0
    for (let i = from; i <= to; i++) {
      used[i] = 1
      mask |= masks[i]!
    }
    for (let t = 0; t < terms; t++) if ((mask >>> t) & 1) shown[t] = shown[t]! * 0.5
    chosen.push([from, to])
    left -= endOf(to) - startOf(from) + (chosen.length === 1 ? 0 : PASSAGE_SEPARATOR.length)
  }
  chosen.sort((a, b) => a[0] - b[0])
  // Passages next to each other in the page are one passage.
  const out: Array<Passage> = []
  let last: [number, number] | undefined
  for (const range of chosen) {
    if (last !== undefined && range[0] === last[1] + 1) last[1] = range[1]
    else {
      if (last !== undefined) out.push(passageOf(text, startOf(last[0]), endOf(last[1])))
      last = [range[0], range[1]]
    }
  }
  if (last !== undefined) out.push(passageOf(text, startOf(last[0]), endOf(last[1])))
  return out
}

const BREAK_NONE = 0
const BREAK_LINE = 1
const BREAK_BLANK = 2

/** Per sentence, what comes between it and the one before: nothing but spaces, a line break, or a blank line (or text left out). */
const breaksBefore = (text: string, spans: ReadonlyArray<number>, cut: ReadonlyArray<boolean>): Uint8Array => {
  const count = spans.length >> 1
  const breaks = new Uint8Array(count)
  breaks[0] = BREAK_BLANK
  for (let i = 1; i < count; i++) {
    if (cut[i]) {
      breaks[i] = BREAK_BLANK
      continue
    }
    let lines = 0
    for (let k = spans[i * 2 - 1]!; k < spans[i * 2]!; k++) if (text.charCodeAt(k) === 10) lines++
    breaks[i] = lines === 0 ? BREAK_NONE : lines === 1 ? BREAK_LINE : BREAK_BLANK
  }
  return breaks
}

/** The page's first sentences within `room` characters (at least its first). */
const opening = (spans: ReadonlyArray<number>, count: number, room: number): [number, number] => {
  let to = 0
  while (to + 1 < count && spans[(to + 1) * 2 + 1]! - spans[0]! <= room) to++
  return [0, to]
}

/** A passage's text: white space collapsed, a line break kept where it ends a sentence or a line of its own. */
const passageOf = (text: string, start: number, end: number): Passage => {
  const slice = text.slice(start, end)
  const body = slice.replace(/\s*\n\s*/g, (gap: string, at: number) => (breakEnds(slice, at + gap.indexOf("\n")) ? "\n" : " "))
  return { text: body.replace(/[^\S\n]+/g, " ").trim(), start, end }
}

/** The highlights of `text` for `query` as one string, passages joined with PASSAGE_SEPARATOR; "" for a page without text. */
export const highlights = (text: string, query: HighlightQuery, options: HighlightOptions): string =>
  highlightPassages(text, query, options).map((p) => p.text).join(PASSAGE_SEPARATOR)
