/**
 * Whitespace and marker clean-up for text read out of HTML: collapses runs of
 * whitespace (including no-break spaces) and drops the pilcrow and section signs
 * that documentation generators append to headings as permalinks.
 */
const SPACE = /[\s\u00a0\u200b\u2028\u2029\ufeff]+/g
const PERMALINK_MARK = /[¶§]/g

export const collapseSpace = (text: string): string => text.replace(SPACE, " ").trim()

/** Visible label text: collapsed whitespace, permalink marks removed. */
export const labelText = (text: string | null | undefined): string =>
  text === null || text === undefined ? "" : collapseSpace(text.replace(PERMALINK_MARK, ""))
