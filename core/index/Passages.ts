/**
 * A page as the passages an embedding model is given: its text cut into pieces of at most
 * `passageChars` characters, at a paragraph, line or sentence end where one is near, each with
 * the page's title before it. Embedding models read a few hundred tokens at most (512 for
 * most small ones), so a long page needs several vectors; only its first `maxPassages` are
 * embedded, the rest is found by BM25 alone.
 */

/** One passage of a page: the text embedded and where its part of the page's text lies. */
export interface Passage {
  /** The title, a line break and the piece of text (the title alone for a page without text). */
  readonly text: string
  /** Character offsets of the piece in the page's text. */
  readonly start: number
  readonly end: number
}

export interface PassageOptions {
  readonly passageChars: number
  readonly maxPassages: number
}

export const defaultPassageOptions: PassageOptions = { passageChars: 1000, maxPassages: 8 }

/** Where to end a piece that starts at `start`: the last good break in its second half, else a space, else the limit. */
const pieceEnd = (text: string, start: number, limit: number): number => {
  const end = Math.min(text.length, start + limit)
  if (end === text.length) return end
  const floor = start + Math.floor(limit / 2)
  const paragraph = text.lastIndexOf("\n\n", end)
  if (paragraph >= floor) return paragraph + 2
  const line = text.lastIndexOf("\n", end)
  if (line >= floor) return line + 1
  for (let i = end - 1; i >= floor; i--) {
    const c = text.charCodeAt(i)
    // ". ", "! ", "? " and the like: a sentence ends before the space.
    if (c === 32 && i > 0 && /[.!?;:]/.test(text[i - 1]!)) return i + 1
  }
  const space = text.lastIndexOf(" ", end)
  if (space >= floor) return space + 1
  // Never between the halves of a surrogate pair.
  const code = text.charCodeAt(end - 1)
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end
}

/** The passages of a page, in text order. */
export const pagePassages = (title: string, text: string, options: PassageOptions = defaultPassageOptions): Array<Passage> => {
  const head = title.trim()
  const prefix = head.length > 0 ? `${head}\n` : ""
  const out: Array<Passage> = []
  let start = 0
  while (start < text.length && out.length < options.maxPassages) {
    while (start < text.length && /\s/.test(text[start]!)) start++
    if (start >= text.length) break
    const end = pieceEnd(text, start, options.passageChars)
    const piece = text.slice(start, end).trim()
    if (piece.length > 0) out.push({ text: prefix + piece, start, end })
    start = end
  }
  if (out.length === 0 && head.length > 0) out.push({ text: head, start: 0, end: 0 })
  return out
}
