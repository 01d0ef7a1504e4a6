/**
 * webFetch's extractor measured on 200 Debian documentation pages (Python, Django, PostgreSQL,
 * GIMP; an even spread over the sorted page list): per page, the share of its main-text
 * sentences the Markdown keeps, and the share of its navigation text the Markdown drops.
 *
 *   node test/bench/fetch.ts             200 pages
 *   node test/bench/fetch.ts --pages 500
 *   node test/bench/fetch.ts --worst     also list each method's 5 worst pages and sentences they lose
 *
 * Ground truth comes from the structure each generator writes, not from any extractor:
 * - Sphinx, Python 3.11: main = `div[role=main]`; navigation = `div.related` (top and bottom
 *   bars), `div.sphinxsidebar`, `div.footer`, `#searchbox`, `nav`, `header`, `footer`.
 * - Sphinx, Django (YUI theme): main = `#yui-main`; navigation = `#hd`, `#ft`, `#sidebar`.
 * - DocBook, PostgreSQL and GIMP: navigation = `div.navheader`, `div.navfooter`; main = the
 *   rest of the body.
 * Main-text sentences: the main region's text per block element (p, li, td, pre line, heading,
 * ...), split after . ! ? and kept when at least 20 letters or digits long. Navigation text:
 * each link text and text run in the navigation regions with at least 8 letters or digits that
 * does not also occur in the main text (so "Next" or a page title shared with the heading do
 * not count). A sentence is kept, and a navigation unit present, when its letters and digits
 * (lower-cased, everything else removed) occur in the output's, after Markdown link targets
 * are removed (the URLs are not text).
 *
 * Rows, all over the same pages:
 * (a) Periscope webFetch: ReadablePage (boilerplate removal, declared container, Readability,
 *     turndown with our table and code rules), format markdown.
 * (b) Readability alone, its article HTML through turndown + GFM plugin.
 * (c) turndown + GFM plugin over the raw <body>.
 */
import { readFileSync } from "node:fs"
// @ts-ignore: the plugin ships no types.
import * as gfmPlugin from "@joplin/turndown-plugin-gfm"
import { Readability } from "@mozilla/readability"
import { parseHTML } from "linkedom"
import TurndownService from "turndown"
import { decodeHtml } from "../../core/ingest/HtmlBytes.ts"
import { readablePage } from "../../core/ingest/ReadablePage.ts"
import { type DocPage, loadDebianDocs } from "../support/debianDocs.ts"

const countArg = process.argv.indexOf("--pages")
const wanted = countArg === -1 ? 200 : Number(process.argv[countArg + 1])
const corpus = loadDebianDocs()
if (corpus._tag === "Missing") {
  console.error(`Debian documentation corpus unavailable: ${corpus.reason}`)
  process.exit(process.env.CI === "true" ? 1 : 0)
}

interface Structure {
  readonly main: (document: Document) => ReadonlyArray<Element>
  readonly navigation: string
}

const STRUCTURES: Record<string, Structure> = {
  "python3.11-doc": {
    main: (d) => [...d.querySelectorAll("div[role=main]")],
    navigation: "div.related, div.sphinxsidebar, div.footer, #searchbox, nav, header, footer"
  },
  "python-django-doc": {
    main: (d) => [...d.querySelectorAll("#yui-main")],
    navigation: "#hd, #ft, #sidebar"
  },
  "postgresql-doc-15": {
    main: (d) => [...(d.body?.children ?? [])].filter((e) => !e.matches("div.navheader, div.navfooter")),
    navigation: "div.navheader, div.navfooter"
  },
  "gimp-help-en": {
    main: (d) => [...(d.body?.children ?? [])].filter((e) => !e.matches("div.navheader, div.navfooter")),
    navigation: "div.navheader, div.navfooter"
  }
}

const BLOCK = new Set(["p", "li", "dt", "dd", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "div", "caption", "blockquote", "section", "table", "tr", "ul", "ol", "dl", "body", "figcaption"])
const key = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "")

/** The text of `roots` as blocks: text nodes grouped by their nearest block ancestor; pre split into lines. */
const blocksOf = (roots: ReadonlyArray<Element>): Array<string> => {
  const blocks = new Map<Element, Array<string>>()
  const visit = (node: Node) => {
    if (node.nodeType === 3) {
      let block = node.parentElement
      while (block !== null && !BLOCK.has(block.localName)) block = block.parentElement
      if (block === null) return
      const list = blocks.get(block) ?? []
      list.push(node.nodeValue ?? "")
      blocks.set(block, list)
      return
    }
    if (node.nodeType !== 1) return
    const tag = (node as Element).localName
    if (tag === "script" || tag === "style") return
    for (let child = node.firstChild; child !== null; child = child.nextSibling) visit(child)
  }
  for (const root of roots) visit(root)
  const out: Array<string> = []
  for (const [element, parts] of blocks) {
    const text = parts.join("")
    if (element.localName === "pre") out.push(...text.split("\n"))
    else out.push(text.replace(/\s+/g, " "))
  }
  return out
}

const sentencesOf = (roots: ReadonlyArray<Element>) =>
  blocksOf(roots).flatMap((block) => block.split(/(?<=[.!?])\s+/)).filter((s) => key(s).length >= 20)

const navigationUnits = (document: Document, selector: string, mainKey: string): Array<string> => {
  const units = new Set<string>()
  for (const region of document.querySelectorAll(selector)) {
    for (const link of region.querySelectorAll("a")) units.add(link.textContent ?? "")
    for (const block of blocksOf([region])) units.add(block)
  }
  return [...units].filter((u) => key(u).length >= 8 && !mainKey.includes(key(u)))
}

const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" })
turndown.use((gfmPlugin as unknown as { readonly gfm: TurndownService.Plugin }).gfm)

/** Markdown to the comparison key: link targets and titles removed, then letters and digits only. */
const outputKey = (markdown: string) => key(markdown.replace(/\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, "]"))

interface Method {
  readonly name: string
  readonly run: (html: string, page: DocPage) => Promise<string>
}

const METHODS: ReadonlyArray<Method> = [
  {
    name: "(a) Periscope webFetch (markdown)",
    run: async (html, page) => (await readablePage(new TextEncoder().encode(html), "text/html; charset=utf-8", page.url, "markdown"))?.content ?? ""
  },
  {
    name: "(b) Readability + turndown",
    run: async (html, page) => {
      const { document } = parseHTML(html) as unknown as { document: Document }
      const article = new Readability(document as never, { keepClasses: false }).parse()
      void page
      return article?.content ? turndown.turndown(article.content) : ""
    }
  },
  {
    name: "(c) turndown over <body>",
    run: async (html) => {
      const { document } = parseHTML(html) as unknown as { document: Document }
      return turndown.turndown(document.body?.innerHTML ?? html)
    }
  }
]

const candidates = corpus.pages.filter((p) => p.pkg in STRUCTURES)
const stride = candidates.length / Math.min(wanted, candidates.length)
const pages = Array.from({ length: Math.min(wanted, candidates.length) }, (_, i) => candidates[Math.floor(i * stride)]!)

interface Truth {
  readonly page: DocPage
  readonly html: string
  readonly sentences: ReadonlyArray<string>
  readonly navigation: ReadonlyArray<string>
}

const truths: Array<Truth> = []
for (const page of pages) {
  const html = decodeHtml(readFileSync(page.file))
  const { document } = parseHTML(html) as unknown as { document: Document }
  const structure = STRUCTURES[page.pkg]!
  const main = structure.main(document)
  const sentences = sentencesOf(main)
  if (sentences.length === 0) continue
  const mainKey = key(main.map((e) => e.textContent ?? "").join(" "))
  truths.push({ page, html, sentences, navigation: navigationUnits(document, structure.navigation, mainKey) })
}

const perPackage = new Map<string, number>()
for (const { page } of truths) perPackage.set(page.pkg, (perPackage.get(page.pkg) ?? 0) + 1)
console.log(`webFetch extraction quality: ${truths.length} pages with main text (${[...perPackage].map(([p, n]) => `${p} ${n}`).join(", ")})`)
console.log(`main sentences: ${truths.reduce((s, t) => s + t.sentences.length, 0)}, navigation units: ${truths.reduce((s, t) => s + t.navigation.length, 0)}\n`)

const mean = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)
const pct = (value: number) => `${(value * 100).toFixed(1)}%`

const worst = process.argv.includes("--worst")
const rows: Array<Array<string>> = []
for (const method of METHODS) {
  const losses: Array<{ url: string; share: number; lost: Array<string> }> = []
  const kept: Array<number> = []
  const dropped: Array<number> = []
  const perfect: Array<number> = []
  const started = performance.now()
  for (const truth of truths) {
    const output = outputKey(await method.run(truth.html, truth.page))
    const keptShare = truth.sentences.filter((s) => output.includes(key(s))).length / truth.sentences.length
    kept.push(keptShare)
    if (worst) losses.push({ url: truth.page.url, share: keptShare, lost: truth.sentences.filter((x) => !output.includes(key(x))).slice(0, 3) })
    perfect.push(keptShare === 1 ? 1 : 0)
    if (truth.navigation.length > 0) dropped.push(truth.navigation.filter((u) => !output.includes(key(u))).length / truth.navigation.length)
  }
  const ms = (performance.now() - started) / truths.length
  const sorted = [...kept].sort((a, b) => a - b)
  if (worst) {
    console.log(`${method.name}: worst pages`)
    for (const loss of losses.sort((a, b) => a.share - b.share).slice(0, 5)) {
      console.log(`  ${pct(loss.share)} ${loss.url}\n${loss.lost.map((x) => `    - ${x.slice(0, 140)}`).join("\n")}`)
    }
  }
  rows.push([method.name, pct(mean(kept)), pct(sorted[Math.floor(sorted.length * 0.1)]!), pct(mean(perfect)), pct(mean(dropped)), ms.toFixed(1)])
}

const header = ["method", "main kept (mean)", "main kept (p10 page)", "pages with all main", "navigation dropped (mean)", "ms/page"]
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`
console.log(line(header))
console.log(`|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`)
for (const row of rows) console.log(line(row))
