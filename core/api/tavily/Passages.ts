/**
 * The passages of a page most relevant to a query, for Tavily's `advanced` depth (and extract
 * with a query): the page's text cut into passages of whole lines (a paragraph, or short lines
 * such as a heading and list items joined), at most about PASSAGE_CHARS, each scored by the query words it holds (every distinct word once,
 * more for a rarer word across the page's passages), the best `count` kept in page order and
 * joined with " [...] " as Tavily joins its chunks. Simple and predictable: no model, no index.
 */

const PASSAGE_CHARS = 500
/** Short lines (headings, list items) join the next ones until a passage has this many characters. */
const MIN_PASSAGE = 200
/** A line longer than this is cut at sentence ends into pieces of about PASSAGE_CHARS. */
const MAX_LINE = 1000

const wordsOf = (text: string): Array<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/** Crude stemming, enough that "reclaims" meets "reclaim". */
const stem = (word: string): string => {
  const cut = word.replace(/(?:ing|ed|es|s)$/, "")
  return cut.length >= 3 ? cut : word
}

const STOP_WORDS = new Set(["a", "an", "and", "are", "as", "at", "be", "by", "does", "for", "from", "how", "in", "is", "it", "of", "on", "or", "the", "to", "what", "when", "where", "which", "who", "why", "with"])

/** Markdown a page fetched as Markdown may carry, reduced to its text. */
export const plainLine = (line: string): string =>
  line
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\*\*|__|`/g, "")
    .replace(/^\s*(?:#{1,6}\s+|[-*+>]\s+|\d+[.)]\s+)/, "")
    .replace(/\s+/g, " ")
    .trim()

/** Markdown as plain text, line by line. */
export const plainText = (markdown: string): string =>
  markdown.split("\n").map(plainLine).filter((line, i, lines) => line !== "" || (i > 0 && lines[i - 1] !== "")).join("\n").trim()

const sentences = (line: string): Array<string> => line.match(/[^.!?]+(?:[.!?]+\s*|$)/g) ?? [line]

/** The page as passages of whole lines (a long line cut at sentence ends). */
export const passagesOf = (text: string): Array<string> => {
  const pieces: Array<string> = []
  for (const raw of text.split("\n")) {
    const line = plainLine(raw)
    if (line === "") continue
    if (line.length <= MAX_LINE) {
      pieces.push(line)
      continue
    }
    let current = ""
    for (const sentence of sentences(line)) {
      if (current !== "" && current.length + sentence.length > PASSAGE_CHARS) {
        pieces.push(current.trim())
        current = ""
      }
      current += sentence
    }
    if (current.trim() !== "") pieces.push(current.trim())
  }
  const passages: Array<string> = []
  let current = ""
  for (const piece of pieces) {
    if (current !== "" && (current.length >= MIN_PASSAGE || current.length + piece.length + 1 > PASSAGE_CHARS)) {
      passages.push(current)
      current = ""
    }
    current = current === "" ? piece : `${current}\n${piece}`
  }
  if (current !== "") passages.push(current)
  return passages
}

/** The best `count` passages of `text` for `query`, in page order, joined with " [...] "; "" when the page has no text. */
export const bestPassages = (text: string, query: string, count: number): string => {
  const passages = passagesOf(text)
  if (passages.length <= count) return passages.join(" [...] ")
  const terms = [...new Set(wordsOf(query).filter((w) => !STOP_WORDS.has(w)).map(stem))]
  const stemsOf = passages.map((p) => new Set(wordsOf(p).map(stem)))
  // A word found in few passages tells more than one found in all of them.
  const weight = terms.map((term) => {
    const holding = stemsOf.filter((stems) => stems.has(term)).length
    return holding === 0 ? 0 : Math.log(1 + passages.length / holding)
  })
  const scored = passages.map((_, i) => {
    let score = 0
    terms.forEach((term, t) => {
      if (stemsOf[i]!.has(term)) score += weight[t]!
    })
    return { i, score }
  })
  // Ties (a page that never names the query's words) keep the page's order: its opening first.
  scored.sort((a, b) => b.score - a.score || a.i - b.i)
  return scored.slice(0, count).map((s) => s.i).sort((a, b) => a - b).map((i) => passages[i]!).join(" [...] ")
}

/** Image URLs a Markdown page shows (`![alt](url)`), absolute http(s) only, each once. */
export const imagesOf = (markdown: string): Array<string> => {
  const seen = new Set<string>()
  for (const match of markdown.matchAll(/!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const url = match[1]!
    if (/^https?:\/\//i.test(url)) seen.add(url)
  }
  return [...seen]
}
