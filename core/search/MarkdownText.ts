/**
 * A page read as Markdown, made plain: its text without link targets, images, emphasis and
 * block markers (a `text` answer, and what passages are chosen from), and the images its main
 * content shows. Tavily's answers and webFetch's query-focused chunks read Markdown through it.
 */

/**
 * A link's target: a URL (in angle brackets or not, balanced parentheses in it) and an optional
 * title in quotes or parentheses. Every run is bounded, so a line of brackets costs a bounded
 * scan per bracket.
 */
const TARGET = String.raw`\(\s{0,8}(?:<[^>\n]{0,8192}>|[^\s()]{0,8192}(?:\([^\s()]{0,8192}\)[^\s()]{0,8192}){0,8})(?:\s{1,8}(?:"[^"\n]{0,2048}"|'[^'\n]{0,2048}'|\([^)\n]{0,2048}\)))?\s{0,8}\)`
const IMAGE = new RegExp(String.raw`!\[(?:\\.|[^\\[\]\n]){0,2048}\]` + TARGET, "g")
const LINK = new RegExp(String.raw`\[((?:\\.|[^\\[\]\n]){0,2048})\]` + TARGET, "g")

/**
 * Markdown a page fetched as Markdown may carry, reduced to its text: an escaped character
 * (`\_`, `\*`) is the character itself; an unescaped `*`, backtick or `__` is emphasis or code
 * markup (the page's Markdown escapes the ones its text has); a single `_` stays (snake_case).
 */
export const plainLine = (line: string): string =>
  line
    .replace(IMAGE, "")
    .replace(LINK, "$1")
    .replace(/^\s*(?:#{1,6}\s+|[-*+>]\s+|\d+[.)]\s+)/, "")
    .replace(/\\([!-/:-@[-`{-~])|\*+|`+|__+/g, (_markup: string, escaped: string | undefined) => escaped ?? "")
    .replace(/\s+/g, " ")
    .trim()

/** Markdown as plain text, line by line. */
export const plainText = (markdown: string): string =>
  markdown.split("\n").map(plainLine).filter((line, i, lines) => line !== "" || (i > 0 && lines[i - 1] !== "")).join("\n").trim()

/** Image URLs a Markdown page shows (`![alt](url)`), absolute http(s) only, each once. */
export const imagesOf = (markdown: string): Array<string> => {
  const seen = new Set<string>()
  for (const match of markdown.matchAll(/!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const url = match[1]!
    if (/^https?:\/\//i.test(url)) seen.add(url)
  }
  return [...seen]
}
