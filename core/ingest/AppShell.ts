/**
 * Whether an HTML page is an app shell: a page that builds its content with scripts once in a
 * browser, so that reading its HTML finds next to nothing (a single-page app's lone root element,
 * a documentation site that loads its text by script). webFetch's `render: "auto"` renders such
 * pages. Judged on the raw HTML and the text the extractor found, without parsing again.
 */

/** Less main text than this (characters) is "little". */
export const SHELL_MAX_TEXT = 200
/** Visible characters left in the body once scripts are gone, at most, for a lone app root. */
const ROOT_MAX_TEXT = 50

const SCRIPT = /<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi
const TYPE = /(?:^|\s)type\s*=\s*["']?([^"'\s>]+)/i
const RUNNABLE_TYPES = new Set(["", "module", "text/javascript", "application/javascript", "text/ecmascript", "application/ecmascript", "text/jsx", "text/babel"])
const INVISIBLE = /<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1\s*>/gi

const isRunnable = (attributes: string): boolean => RUNNABLE_TYPES.has((TYPE.exec(attributes)?.[1] ?? "").toLowerCase())

/** The body's text as a reader would see it with scripts off: no scripts, styles, comments or tags. */
const visibleBodyText = (html: string): string => {
  const start = html.search(/<body\b/i)
  const body = start < 0 ? html : html.slice(start)
  return body.replace(/<!--[\s\S]*?-->/g, " ").replace(INVISIBLE, " ").replace(/<[^>]*>/g, " ").replace(/&nbsp;|&#160;/g, " ").replace(/\s+/g, " ").trim()
}

/**
 * True when the extracted main text is little (under SHELL_MAX_TEXT characters) while the page
 * runs scripts and either is mostly script by size or shows next to nothing without them.
 */
export const isAppShell = (html: string, mainText: string): boolean => {
  if (mainText.replace(/\s+/g, " ").trim().length >= SHELL_MAX_TEXT) return false
  let scripts = 0
  let scriptChars = 0
  for (const match of html.matchAll(SCRIPT)) {
    if (!isRunnable(match[1]!)) continue
    scripts++
    scriptChars += match[0].length
  }
  if (scripts === 0) return false
  return scriptChars * 2 >= html.length || visibleBodyText(html).length <= ROOT_MAX_TEXT
}
