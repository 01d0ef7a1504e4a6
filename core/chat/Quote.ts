/**
 * What the built-in grounded model quotes from a source: whole sentences only, the one that
 * shares most words with the question (with the sentence after it when both fit), never a
 * piece cut out of one. Snippets are cut at both ends ("…"), so their first and last pieces
 * are not sentences; a line of its own (a description, a list item) counts as whole.
 */

/** A quote aims at this many characters: a second sentence is added only within it. */
const QUOTE_CHARS = 300
/** A sentence longer than this is not quoted at all (it would be cut). */
const MAX_SENTENCE = 400
const MIN_WORDS = 4

const STOP_WORDS = new Set([
  "about", "and", "are", "can", "does", "for", "from", "has", "have", "how", "into", "its", "not", "the", "that", "their",
  "then", "there", "this", "was", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your"
])

const sentences = new Intl.Segmenter(undefined, { granularity: "sentence" })

const wordsOf = (text: string): Array<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/** Crude stemming, enough that "reclaims" meets "reclaim" and "bars" meets "bar". */
const stem = (word: string): string => {
  const cut = word.replace(/(?:ing|ed|es|s)$/, "")
  return cut.length >= 3 ? cut : word
}

const queryStems = (query: string): Set<string> =>
  new Set(wordsOf(query).filter((w) => w.length >= 3 && !STOP_WORDS.has(w)).map(stem))

/** Markdown a page fetched as Markdown may carry, reduced to its text. */
const plain = (line: string): string =>
  line
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\*\*|__/g, "")
    .replace(/^\s*(?:#{1,6}\s+|[-*+>]\s+|\d+[.)]\s+)/, "")
    .replace(/\s+/g, " ")
    .trim()

const TERMINATED = /[.!?]["'”’)\]]*$/u
const CUT = /^(?:…|\.\.\.)|(?:…|\.\.\.)$/u
const CODE = /[{};]|=>|\s=\s|^\$\s|\s\$\s|(?:^|\s)\/\/\s/
const STARTS_LIKE_TEXT = /^["'“‘(]?[\p{L}\p{N}]/u

interface Candidate {
  readonly text: string
  readonly line: number
  readonly index: number
  readonly terminated: boolean
}

/** The whole sentences of `text`, line by line, in order. */
const candidatesOf = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  text.split(/\n+/).forEach((raw, line) => {
    const clean = plain(raw)
    if (clean === "") return
    const parts = Array.from(sentences.segment(clean), (s) => s.segment.trim()).filter((s) => s !== "")
    parts.forEach((part, index) => {
      const terminated = TERMINATED.test(part) && !part.endsWith("..")
      // A line of its own is whole even unpunctuated; inside a line only a finished sentence is.
      if (!terminated && parts.length > 1) return
      if (CUT.test(part) || CODE.test(part) || !STARTS_LIKE_TEXT.test(part)) return
      if (part.length > MAX_SENTENCE || wordsOf(part).length < MIN_WORDS) return
      out.push({ text: part, line, index, terminated })
    })
  })
  return out
}

const comparable = (text: string): string => wordsOf(text).join(" ")

const scoreOf = (candidate: Candidate, stems: ReadonlySet<string>): number => {
  const seen = new Set<string>()
  for (const word of wordsOf(candidate.text)) {
    const s = stem(word)
    if (stems.has(s)) seen.add(s)
  }
  return seen.size
}

/**
 * The quote for `query` from `text`: one or two whole sentences, or undefined when the text
 * holds no whole sentence short enough to quote (besides the `title`'s words).
 */
export const quoteOf = (text: string, query: string, title = ""): string | undefined => {
  // A line that only repeats the title says nothing the answer does not already show.
  const heading = comparable(title)
  const candidates = candidatesOf(text).filter((c) => heading === "" || !heading.includes(comparable(c.text)))
  if (candidates.length === 0) return undefined
  const stems = queryStems(query)
  let best = 0
  let bestScore = -1
  candidates.forEach((c, i) => {
    // Most question words first, then a statement over a bare line or a question, then the earliest.
    const score = scoreOf(c, stems) * 2 + (c.terminated && !c.text.endsWith("?") ? 1 : 0)
    if (score > bestScore) {
      best = i
      bestScore = score
    }
  })
  const first = candidates[best]!
  const next = candidates[best + 1]
  if (next !== undefined && next.line === first.line && next.index === first.index + 1 && first.terminated && next.terminated &&
    first.text.length + 1 + next.text.length <= QUOTE_CHARS) {
    return `${first.text} ${next.text}`
  }
  return first.text
}
