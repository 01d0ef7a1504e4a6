/**
 * A page read as Markdown, made plain: its text without link targets, images, emphasis and
 * block markers (a `text` answer, and what passages are chosen from), and the images its main
 * content shows. Tavily's answers and webFetch's query-focused chunks read Markdown through it.
 */

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

/** Image URLs a Markdown page shows (`![alt](url)`), absolute http(s) only, each once. */
export const imagesOf = (markdown: string): Array<string> => {
  const seen = new Set<string>()
  for (const match of markdown.matchAll(/!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const url = match[1]!
    if (/^https?:\/\//i.test(url)) seen.add(url)
  }
  return [...seen]
}
