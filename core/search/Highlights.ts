/**
 * The passages of a page most relevant to a query, for an agent that wants what answers its
 * question rather than the page's opening: the text cut into whole sentences, the query's
 * words found in them with the engine's own analysis (folded, stemmed, stop words dropped:
 * core/index/analysis), a word found in few of the page's sentences weighing more than one
 * found in most. Passages of a few sentences are chosen one after another, a word already
 * shown counting half in the next, and given back in page order. Search results
 * (`content: "highlights"`), grounded chat's sources and Tavily's chunks all read pages
 * through it. test/bench/relevance.ts measures it against a page's first characters.
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
  const n = text.length
  let start = -1
  let last = -1
  const close = (end: number) => {
    if (end - start <= longest) out.push(start, end)
    else cutLong(text, start, end, longest, out)
    start = -1
  }
  for (let i = 0; i < n; i++) {
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
    while (j < n && (isTerminal(text.charCodeAt(j)) || isCloser(text.charCodeAt(j)))) j++
    // Full-width stops end a sentence with no space after them.
    if (j < n && !isSpace(text.charCodeAt(j)) && c < 0x3000 && c !== 0xff0e) continue
    if (c === 46 && j === i + 1 && abbreviation(text, start, i)) continue
    last = j - 1
    close(j)
    i = j - 1
  }
  if (start >= 0) close(last + 1)
  return out
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

const collapse = (text: string) => text.replace(/\s+/g, " ").trim()

/** The sentences' query terms as bit masks (sentence i: masks[i]), found with the engine's analysis. */
const termMasks = (text: string, spans: ReadonlyArray<number>, query: HighlightQuery): Int32Array => {
  const count = spans.length >> 1
  const masks = new Int32Array(count)
  if (query.ids.size === 0 || count === 0) return masks
  let k = 0
  analyzer.analyzeFor(text, query.ids.keys(), (term, _position, start) => {
    const id = query.ids.get(term)
    if (id === undefined) return
    // Terms come in text order (a compound's parts just after it): the sentence moves forward.
    while (k + 1 < count && spans[(k + 1) * 2]! <= start) k++
    while (k > 0 && spans[k * 2]! > start) k--
    if (start >= spans[k * 2]! && start < spans[k * 2 + 1]!) masks[k] = masks[k]! | (1 << id)
  })
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
    const whole = collapse(text)
    return whole === "" ? [] : [{ text: whole, start: 0, end: text.length }]
  }
  const spans = sentenceSpans(text, passageChars)
  const count = spans.length >> 1
  if (count === 0) return []
  const masks = termMasks(text, spans, query)
  const startOf = (i: number) => spans[i * 2]!
  const endOf = (i: number) => spans[i * 2 + 1]!
  const blocks = blockStarts(text, spans)

  // A term found in few of the page's sentences tells more than one found in most.
  const terms = query.ids.size
  const weights = new Float64Array(terms)
  for (let t = 0; t < terms; t++) {
    let holding = 0
    for (let i = 0; i < count; i++) if ((masks[i]! >>> t) & 1) holding++
    weights[t] = holding === 0 ? 0 : Math.log(1 + count / holding)
  }
  const shown = new Float64Array(terms).fill(1)
  const scoreOf = (mask: number) => {
    let score = 0
    for (let t = 0; t < terms; t++) if ((mask >>> t) & 1) score += weights[t]! * shown[t]!
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
    // Grown with the sentences around it in its paragraph: after it first (what follows a statement explains it), then before.
    let from = best
    let to = bestEnd
    for (let grown = true; grown && to - from + 1 < PASSAGE_SENTENCES;) {
      grown = false
      if (to + 1 < count && !blocks[to + 1] && !used[to + 1] && endOf(to + 1) - startOf(from) <= room) {
        to++
        grown = true
      }
      if (to - from + 1 < PASSAGE_SENTENCES && from > 0 && !blocks[from] && !used[from - 1] && endOf(to) - startOf(from - 1) <= room) {
        from--
        grown = true
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

/** Per sentence, 1 when a line break comes before it (it opens a paragraph, a heading, a list item). */
const blockStarts = (text: string, spans: ReadonlyArray<number>): Uint8Array => {
  const count = spans.length >> 1
  const starts = new Uint8Array(count)
  starts[0] = 1
  for (let i = 1; i < count; i++) {
    const gap = text.indexOf("\n", spans[i * 2 - 1]!)
    starts[i] = gap >= 0 && gap < spans[i * 2]! ? 1 : 0
  }
  return starts
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
