/**
 * Whether an HTML page is an app shell: a page that builds its content with scripts once in a
 * browser, so that reading its HTML finds next to nothing (a single-page app's lone root element,
 * a documentation site that loads its text by script). webFetch's `render: "auto"` renders such
 * pages. Judged on the raw HTML and the text the extractor found, in scans that only move forward
 * (a hostile page of unclosed tags costs one pass, not one per tag) and stop once they know.
 */

/** Less main text than this (characters, runs of white space counted once) is "little". */
export const SHELL_MAX_TEXT = 200
/** Visible characters (not white space) left in the body once scripts are gone, at most, for a lone app root. */
const ROOT_MAX_TEXT = 50

const RUNNABLE_TYPES = new Set(["", "module", "text/javascript", "application/javascript", "text/ecmascript", "application/ecmascript", "text/jsx", "text/babel"])
const TYPE = /(?:^|\s)type\s*=\s*["']?([^"'\s>]+)/
/** Elements whose content is never shown as text. */
const HIDDEN = ["script", "style", "noscript", "template", "svg"]
const SPACE = /\s/

const isRunnable = (attributes: string): boolean => RUNNABLE_TYPES.has(TYPE.exec(attributes)?.[1] ?? "")

/** Whether `lower` has the element `name` opening at `at` (its name followed by space, `>` or `/`). */
const opensAt = (lower: string, at: number, name: string): boolean =>
  lower.startsWith(name, at + 1) && /[\s>/]/.test(lower.charAt(at + 1 + name.length))

const hasLittleText = (text: string): boolean => {
  let count = 0
  let space = true
  for (let i = 0; i < text.length; i++) {
    const isSpace = SPACE.test(text[i]!)
    if (!isSpace || !space) count++
    if (count >= SHELL_MAX_TEXT + 1) return false
    space = isSpace
  }
  return (space ? count - 1 : count) < SHELL_MAX_TEXT
}

/** Runnable scripts (external or inline, not data blocks) and the characters they span. */
const scriptsOf = (lower: string): { readonly count: number; readonly chars: number } => {
  let count = 0
  let chars = 0
  for (let at = lower.indexOf("<script"); at !== -1; at = lower.indexOf("<script", at)) {
    const tagEnd = lower.indexOf(">", at)
    if (tagEnd === -1) break
    const close = lower.indexOf("</script", tagEnd)
    const closeEnd = close === -1 ? -1 : lower.indexOf(">", close)
    const end = closeEnd === -1 ? lower.length : closeEnd + 1
    if (opensAt(lower, at, "script") && isRunnable(lower.slice(at + 7, tagEnd))) {
      count++
      chars += end - at
    }
    at = Math.max(end, at + 1)
  }
  return { count, chars }
}

/** Whether the body shows more than ROOT_MAX_TEXT characters with scripts off. */
const showsText = (lower: string): boolean => {
  const body = lower.indexOf("<body")
  let visible = 0
  let at = body === -1 ? 0 : body
  while (at < lower.length) {
    if (lower[at] === "<") {
      let skipTo: number
      if (lower.startsWith("<!--", at)) {
        const end = lower.indexOf("-->", at + 4)
        skipTo = end === -1 ? lower.length : end + 3
      } else {
        const hidden = HIDDEN.find((name) => opensAt(lower, at, name))
        const close = hidden === undefined ? at : lower.indexOf(`</${hidden}`, at)
        const end = close === -1 ? -1 : lower.indexOf(">", close)
        skipTo = end === -1 ? lower.length : end + 1
      }
      at = skipTo
      continue
    }
    if (!SPACE.test(lower[at]!) && ++visible > ROOT_MAX_TEXT) return true
    at++
  }
  return false
}

/**
 * True when the extracted main text is little (under SHELL_MAX_TEXT characters) while the page
 * runs scripts and either is mostly script by size or shows next to nothing without them.
 */
export const isAppShell = (html: Uint8Array | string, mainText: string): boolean => {
  if (!hasLittleText(mainText)) return false
  const lower = (typeof html === "string" ? html : new TextDecoder().decode(html)).toLowerCase()
  const scripts = scriptsOf(lower)
  if (scripts.count === 0) return false
  return scripts.chars * 2 >= lower.length || !showsText(lower)
}
