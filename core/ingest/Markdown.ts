/**
 * A page's main-content elements as Markdown: headings (ATX), lists, links and images with
 * absolute URLs, tables as GFM pipe tables, code blocks fenced with their language when a class
 * names it (`language-js`, `lang-js`, Sphinx's `highlight-python3`, `sourceCode python`).
 *
 * turndown does the conversion on the linkedom elements (no second parse), with the GFM plugin
 * for tables, strikethrough and task lists. Two rules are ours: `pre` (the plugin only knows
 * GitHub's highlight markup) and `table` (the plugin keeps a table holding `<code>` as raw HTML,
 * and reference documentation puts code in most tables).
 */
// @ts-ignore: the plugin ships no types; its one export used here is typed below.
import * as gfmPlugin from "@joplin/turndown-plugin-gfm"
import TurndownService from "turndown"

const gfm = (gfmPlugin as unknown as { readonly gfm: TurndownService.Plugin }).gfm

/** The GFM plugin reads `table.rows`, which linkedom does not implement: defined once on its table prototype. */
const ensureTableRows = (document: Document): void => {
  const proto = Object.getPrototypeOf(document.createElement("table")) as object
  if ("rows" in proto) return
  Object.defineProperty(proto, "rows", {
    configurable: true,
    get(this: Element) {
      return [...this.children].flatMap((child) =>
        child.localName === "tr" ? [child] : ["thead", "tbody", "tfoot"].includes(child.localName) ? [...child.children].filter((r) => r.localName === "tr") : []
      )
    }
  })
}

const LANGUAGE_CLASS = /(?:^|\s)(?:language|lang|highlight(?:-source)?)-([A-Za-z0-9_+#.-]+)/
// Sphinx's and Pandoc's names that say "no particular language".
const NO_LANGUAGE = new Set(["default", "none", "text", "plain", "plaintext", "notranslate", "output"])

/** The language a code block's classes name, on the block, its `<code>` child or up to three ancestors. */
export const codeLanguage = (pre: Element): string => {
  const candidates: Array<Element> = [pre]
  const code = pre.firstElementChild
  if (code !== null && code.localName === "code") candidates.push(code)
  let up = pre.parentElement
  for (let i = 0; i < 3 && up !== null; i++, up = up.parentElement) candidates.push(up)
  for (const element of candidates) {
    const className = element.getAttribute("class") ?? ""
    const named = LANGUAGE_CLASS.exec(className)?.[1]?.toLowerCase()
    if (named !== undefined && !NO_LANGUAGE.has(named)) return named
    // Pandoc: <pre class="sourceCode python">.
    const pandoc = /(?:^|\s)sourceCode\s+([A-Za-z0-9_+#-]+)/.exec(className)?.[1]?.toLowerCase()
    if (pandoc !== undefined && !NO_LANGUAGE.has(pandoc)) return pandoc
  }
  return ""
}

/** A fence longer than any run of backticks inside the code. */
const fenceFor = (code: string): string => {
  let longest = 0
  for (const run of code.match(/`+/g) ?? []) longest = Math.max(longest, run.length)
  return "`".repeat(Math.max(3, longest + 1))
}

const cellText = (content: string): string => {
  const text = content.trim().replace(/\n+/g, " ").replace(/\|/g, "\\|")
  return text === "" ? " " : text
}

const service = (): TurndownService => {
  const turndown = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "*",
    hr: "---"
  })
  turndown.use(gfm)
  // Rules added later win (turndown puts them first).
  turndown.addRule("fencedPre", {
    filter: (node) => node.nodeName === "PRE",
    replacement: (_content, node) => {
      const element = node as unknown as Element
      // A newline right after <pre> is not content (HTML drops it; linkedom keeps it).
      const code = (element.textContent ?? "").replace(/^\r?\n/, "").replace(/\n+$/, "")
      const fence = fenceFor(code)
      return `\n\n${fence}${codeLanguage(element)}\n${code}\n${fence}\n\n`
    }
  })
  turndown.addRule("pipeTable", {
    filter: (node) => node.nodeName === "TABLE",
    replacement: (content, node) => {
      const rows = ((node as unknown as { rows: ReadonlyArray<Element> }).rows ?? [])
        .map((row) => [...row.children].filter((cell) => cell.localName === "td" || cell.localName === "th"))
        .filter((cells) => cells.length > 0)
      // A layout table of one cell, or nested tables: their content as paragraphs.
      if (rows.length === 0 || (rows.length === 1 && rows[0]!.length <= 1) || (node as unknown as Element).querySelector("table") !== null) {
        return `\n\n${content.trim()}\n\n`
      }
      const width = Math.max(...rows.map((cells) => cells.reduce((n, cell) => n + Math.max(1, Number(cell.getAttribute("colspan")) || 1), 0)))
      const render = (cells: ReadonlyArray<Element>) => {
        const out: Array<string> = []
        for (const cell of cells) {
          out.push(cellText(turndown.turndown(cell as unknown as HTMLElement)))
          for (let span = Number(cell.getAttribute("colspan")) || 1; span > 1; span--) out.push(" ")
        }
        while (out.length < width) out.push(" ")
        return `| ${out.join(" | ")} |`
      }
      const first = rows[0]!
      const hasHeader = first.every((cell) => cell.localName === "th") || first[0]?.parentElement?.localName === "thead"
      const header = hasHeader ? render(first) : `| ${new Array(width).fill(" ").join(" | ")} |`
      const body = (hasHeader ? rows.slice(1) : rows).map(render)
      const caption = (node as unknown as Element).querySelector("caption")?.textContent?.trim()
      return `\n\n${caption ? `${caption}\n\n` : ""}${[header, `|${" --- |".repeat(width)}`, ...body].join("\n")}\n\n`
    }
  })
  return turndown
}

let shared: TurndownService | undefined

/** Links, images and link targets made absolute against `base`; script links dropped. */
const absolutize = (container: Element, base: string): void => {
  const resolve = (value: string): string | undefined => {
    try {
      const url = new URL(value, base)
      return url.protocol === "javascript:" || url.protocol === "data:" ? undefined : url.href
    } catch {
      return undefined
    }
  }
  for (const link of container.querySelectorAll("a[href]")) {
    const href = resolve(link.getAttribute("href")!)
    if (href === undefined) link.removeAttribute("href")
    else link.setAttribute("href", href)
  }
  for (const image of container.querySelectorAll("img[src]")) {
    const src = resolve(image.getAttribute("src")!)
    if (src === undefined) image.remove()
    else image.setAttribute("src", src)
  }
}

/**
 * The content elements gathered into one container of their document, with absolute URLs.
 * The elements are moved, not copied: the caller's document is consumed.
 */
export const contentContainer = (document: Document, roots: ReadonlyArray<Element>, base: string): Element => {
  const container = document.createElement("div")
  for (const root of roots) container.appendChild(root.localName === "body" ? fragmentOf(document, root) : root)
  absolutize(container, base)
  return container
}

const fragmentOf = (document: Document, body: Element): DocumentFragment => {
  const fragment = document.createDocumentFragment()
  while (body.firstChild !== null) fragment.appendChild(body.firstChild)
  return fragment
}

/** The container's content as Markdown. */
export const markdownOf = (container: Element): string => {
  ensureTableRows(container.ownerDocument)
  shared ??= service()
  return shared.turndown(container as unknown as HTMLElement).replace(/\n{3,}/g, "\n\n").trim()
}
