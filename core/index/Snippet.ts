/**
 * Query-dependent snippets: the passage of a page where the query's words gather most
 * densely (rarer words count more), cut at word boundaries to about 240 characters of
 * plain text. A page whose text has none of the words gives its opening lines instead.
 */
import type { Analyzer } from "./analysis/Analyzer.ts"

export const snippetTarget = 240
export const snippetMax = 300
/** Matches are grouped into windows no wider than this many characters. */
const windowWidth = 180
/** Scanning stops after this many matches; the best window is almost always among them. */
export const maxMatches = 512
const ellipsis = "…"
/** The matches of the snippet being made (at most maxMatches), kept for every call: makeSnippet never runs inside itself. */
const matchStarts = new Int32Array(maxMatches)
const matchEnds = new Int32Array(maxMatches)
const matchTerms = new Int32Array(maxMatches)
/** Per query word: its matches in the sliding window, and in the window being scored (queries have at most 48 words). */
const inWindow = new Int32Array(64)
const seen = new Int32Array(64)
/** Per query word: its matches in the whole scan. */
const found = new Int32Array(64)

export interface SnippetTerms {
  /** Analysed query term -> its weight (idf). */
  readonly weights: ReadonlyMap<string, number>
}

/** A query's words as the scan looks them up, made once per query (its ten snippets share them). */
interface PreparedTerms {
  readonly terms: ReadonlyArray<string>
  readonly ids: ReadonlyMap<string, number>
  readonly weights: Float64Array
}

const prepared = new WeakMap<SnippetTerms, PreparedTerms>()

const prepare = (terms: SnippetTerms): PreparedTerms => {
  let ready = prepared.get(terms)
  if (ready === undefined) {
    const words = [...terms.weights.keys()].slice(0, inWindow.length)
    ready = { terms: words, ids: new Map(words.map((term, i) => [term, i])), weights: Float64Array.from(words, (term) => terms.weights.get(term)!) }
    prepared.set(terms, ready)
  }
  return ready
}

/**
 * Where a long text's snippet is expected (see SnippetPlaces): `at` is the fraction of the text
 * before it, `words` how many distinct query words the postings put there.
 */
export interface SnippetPlace {
  readonly at: number
  readonly words: number
}

/** What a snippet looks for in a text: the query's words it holds, by their index in the weights' order. */
interface Looked {
  readonly ready: PreparedTerms
  readonly looked: ReadonlyArray<string>
  readonly wanted: number
}

/** `present` (bit i: the i-th word in the weights' order) masks the words; undefined when none is left. */
const lookedFor = (terms: SnippetTerms, present: number): Looked | undefined => {
  const ready = prepare(terms)
  const all = 2 ** Math.min(ready.terms.length, 31) - 1
  const wanted = ready.terms.length >= 32 ? -1 : present & all
  if (ready.terms.length === 0 || wanted === 0) return undefined
  const looked = wanted === -1 || wanted === all ? ready.terms : ready.terms.filter((_, i) => ((wanted >>> i) & 1) === 1)
  return { ready, looked, wanted }
}

/**
 * The snippet of `text` for the query's words; `present` (bit i: the i-th word in the weights'
 * order) names the words the text holds, when the postings told (a word found only in the title
 * or URL would otherwise keep the scan going to the end of the text).
 */
export const makeSnippet = (analyzer: Analyzer, text: string, terms: SnippetTerms, present = -1): string => {
  if (text.length === 0) return ""
  const looked = lookedFor(terms, present)
  if (looked === undefined || bestWindow(analyzer, text, looked) === 0) return leadingSnippet(text)
  return windowSnippet(text, best.start, best.end, whole)
}

/**
 * The snippet from `part`, a piece of a longer text (`cut.before`: text precedes it; `cut.after`:
 * text follows), when at least `words` of the query's distinct words are found there; undefined
 * otherwise (the place was missed: the caller then scans the whole text). Found anywhere in the
 * piece, not in one window, which may be narrower than the postings' window of positions: of the
 * whole-page queries' 1,791 long hits, 38 fell back when one window had to hold them, 2 now.
 */
export const snippetIn = (
  analyzer: Analyzer,
  part: string,
  cut: Edges,
  terms: SnippetTerms,
  present: number,
  words: number
): string | undefined => {
  const looked = lookedFor(terms, present)
  if (looked === undefined) return undefined
  // Whole words only: a piece cut inside a word could match a query word's tail.
  let start = 0
  let end = part.length
  if (cut.before) while (start < end && !isSpace(part.charCodeAt(start))) start++
  if (cut.after) while (end > start && !isSpace(part.charCodeAt(end - 1))) end--
  const text = start === 0 && end === part.length ? part : part.slice(start, end)
  if (bestWindow(analyzer, text, looked) < Math.max(1, words)) return undefined
  return windowSnippet(text, best.start, best.end, cut)
}

/** Whether a text is cut from a longer one before or after: its ends are then not the text's. */
export interface Edges {
  readonly before: boolean
  readonly after: boolean
}

const whole: Edges = { before: false, after: false }

/** The window `bestWindow` found, kept for every call as the match arrays are. */
const best = { start: 0, end: 0 }

/**
 * Finds the window of `text` where the looked-for words gather (the sum of their distinct
 * weights, plus a little for repeats) into `best`, and returns how many distinct words the
 * scan found (0: none, and no window).
 */
const bestWindow = (analyzer: Analyzer, text: string, { ready, looked, wanted }: Looked): number => {
  const { terms: words, ids, weights } = ready
  const starts = matchStarts
  const ends = matchEnds
  const which = matchTerms
  let count = 0
  // Sliding window state, to stop scanning once one window holds every word looked for.
  inWindow.fill(0, 0, words.length)
  found.fill(0, 0, words.length)
  let distinct = 0
  let foundWords = 0
  let left = 0
  analyzer.analyzeFor(text, looked, (term, _position, start, end) => {
    const id = ids.get(term)
    if (id === undefined || (wanted !== -1 && ((wanted >>> id) & 1) === 0)) return
    starts[count] = start
    ends[count] = end
    which[count++] = id
    if (found[id]!++ === 0) foundWords++
    if (inWindow[id]!++ === 0) distinct++
    while (end - starts[left]! > windowWidth) {
      if (--inWindow[which[left]!]! === 0) distinct--
      left++
    }
    return distinct === looked.length || count >= maxMatches
  })
  let bestScore = -1
  for (let i = 0; i < count; i++) {
    seen.fill(0, 0, words.length)
    let score = 0
    let j = i
    for (; j < count && ends[j]! - starts[i]! <= windowWidth; j++) {
      score += seen[which[j]!]!++ === 0 ? weights[which[j]!]! : 0.1 * weights[which[j]!]!
    }
    if (score > bestScore) {
      bestScore = score
      best.start = starts[i]!
      best.end = ends[j - 1]!
    }
  }
  return foundWords
}

/** The opening of the text, cut at a word boundary. */
export const leadingSnippet = (text: string): string => {
  const end = cutForward(text, Math.min(text.length, snippetTarget))
  return finish(text, 0, end, whole)
}

const windowSnippet = (text: string, matchStart: number, matchEnd: number, cut: Edges): string => {
  const spare = Math.max(0, snippetTarget - (matchEnd - matchStart))
  // Context before the first match: a third of the spare room, or back to a sentence start close by.
  let start = Math.max(0, matchStart - Math.floor(spare / 3))
  const sentence = sentenceStartBefore(text, matchStart, Math.floor(spare * 0.6), cut.before)
  if (sentence >= 0) start = sentence
  else start = cutBackward(text, start)
  const end = Math.max(cutForward(text, Math.min(text.length, start + snippetTarget)), Math.min(text.length, matchEnd))
  // Near the end of the text: take more context from before, so the snippet keeps its length.
  if (end - start < snippetTarget && start > 0) start = cutBackward(text, Math.max(0, end - snippetTarget))
  return finish(text, start, end, cut)
}

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000

/** Nearest word boundary at or before `i` (within 30 characters; CJK text has none). */
const cutBackward = (text: string, i: number): number => {
  if (i <= 0) return 0
  for (let k = i; k > 0 && i - k <= 30; k--) if (isSpace(text.charCodeAt(k - 1))) return k
  return i
}

/** Nearest word boundary at or before `i` (within 40 characters), so the last word is whole. */
const cutForward = (text: string, i: number): number => {
  if (i >= text.length) return text.length
  for (let k = i; k > 0 && i - k <= 40; k--) if (isSpace(text.charCodeAt(k))) return k
  return i
}

/**
 * Start of the sentence or paragraph holding `i` (a word after ". ", "! ", "? " or a blank
 * line), when it begins at most `reach` characters before it; -1 otherwise. The start of a text
 * cut from a longer one (`cutBefore`) is no sentence's start.
 */
const sentenceStartBefore = (text: string, i: number, reach: number, cutBefore: boolean): number => {
  for (let k = i; k > 0 && i - k <= reach; k--) {
    if (isSpace(text.charCodeAt(k)) || !isSpace(text.charCodeAt(k - 1))) continue
    let p = k - 1
    let newlines = 0
    while (p >= 0 && isSpace(text.charCodeAt(p))) if (text.charCodeAt(p--) === 10) newlines++
    if ((p < 0 && !cutBefore) || newlines >= 2) return k
    const c = text.charCodeAt(p)
    if (c === 46 /* . */ || c === 33 /* ! */ || c === 63 /* ? */ || c === 0x3002 /* 。 */) return k
  }
  return i === 0 && !cutBefore ? 0 : -1
}

/** Plain text of text[start, end): whitespace collapsed, control characters dropped, ellipses where cut. */
const finish = (text: string, start: number, end: number, cut: Edges): string => {
  let body = plainText(text, start, end)
  if (body.length > snippetMax - 2) body = body.slice(0, snippetMax - 2)
  const prefix = start > 0 || cut.before ? ellipsis : ""
  const suffix = end < text.length || cut.after ? ellipsis : ""
  return `${prefix}${body}${suffix}`
}

/** What JavaScript's `\s` matches. */
const isJsSpace = (c: number): boolean =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff

/** Neither whitespace nor a control character (C0 other than whitespace, or DEL). */
const isVisible = (c: number): boolean => c > 32 && c !== 127 && (c < 0xa0 || !isJsSpace(c))

/**
 * text[start, end) with control characters dropped, each run of whitespace made one space, and
 * trimmed: `slice().replace(/[\0-\x08\x0e-\x1f\x7f]/g, "").replace(/\s+/g, " ").trim()` in one
 * pass, at about a third of the regular expressions' time (a tenth of a query's time went there).
 */
export const plainText = (text: string, start: number, end: number): string => {
  let out = ""
  let from = -1 // start of the run of text being kept, -1 between runs
  let space = false // whitespace seen since the last kept character
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i)
    if (isVisible(c)) {
      if (from < 0) {
        if (space && out.length > 0) out += " "
        space = false
        from = i
      }
      continue
    }
    // A single space between two kept characters stays inside the run: most text is one slice.
    if (c === 32 && from >= 0 && i + 1 < end && isVisible(text.charCodeAt(i + 1))) continue
    if (from >= 0) {
      out += text.slice(from, i)
      from = -1
    }
    if (isJsSpace(c)) space = true
  }
  if (from >= 0) out += text.slice(from, end)
  return out
}
