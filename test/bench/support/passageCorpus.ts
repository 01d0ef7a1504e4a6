/**
 * The search benchmark's corpus: real Debian documentation pages split into passages
 * (one document per section), cached as JSONL in .cache/bench so reruns skip the parsing; or
 * the same pages whole (`--pages`: what `periscope index` makes of a folder of HTML files).
 *
 * Pages are parsed with htmlparser2: text inside the page's main region, without
 * navigation, sidebars, scripts or header links, cut at every h1-h4 heading. Each
 * passage keeps the page URL plus the section anchor, and "Page title — Heading" as title.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { Parser } from "htmlparser2"
import type { IndexDocument } from "../../../core/index/Document.ts"
import { type DocPage, largePackages, loadDebianDocs, readPage } from "../../support/debianDocs.ts"

export const passageCachePath = resolve(import.meta.dirname, "../../../.cache/bench/debian-passages.jsonl")
export const pageCachePath = resolve(import.meta.dirname, "../../../.cache/bench/pages/debian-pages.jsonl")

/** Passages shorter than this carry no text worth a document (a heading alone, "See also"). */
const minPassageChars = 40
/** Long sections are cut at paragraph breaks into pieces of about this size. */
const maxPassageChars = 800

const skipTags = new Set(["script", "style", "nav", "header", "footer", "noscript", "form", "button", "aside", "head"])
const skipClasses = [
  "sphinxsidebar", "related", "navheader", "navfooter", "footer", "headerlink", "mobile-nav",
  "bd-sidebar", "bd-header", "bd-footer", "prev-next", "header-article", "breadcrumb", "navigation",
  "inline-search", "menu-wrapper", "language_switcher", "version_switcher", "bd-toc", "sidebar"
]
const blockTags = new Set([
  "p", "div", "section", "li", "ul", "ol", "dl", "dt", "dd", "pre", "table", "tr", "td", "th", "blockquote",
  "br", "hr", "article", "main", "figure", "figcaption", "caption", "h5", "h6"
])
const headingTags = new Set(["h1", "h2", "h3", "h4"])

interface Section {
  anchor: string | undefined
  heading: string
  text: string
}

/** Splits one HTML page into its sections' plain text. */
export const splitPage = (html: string): { title: string; sections: Array<Section> } => {
  let title = ""
  let inTitle = false
  const stack: Array<{ name: string; skip: boolean; main: boolean }> = []
  let skipDepth = 0
  let mainDepth = 0
  let sawMain = false
  let lastId: string | undefined
  let heading: { anchor: string | undefined; text: string } | undefined
  const sectionsMain: Array<Section> = []
  const sectionsAll: Array<Section> = []
  let current: Section = { anchor: undefined, heading: "", text: "" }
  let currentInMain = false

  const flush = () => {
    const text = current.text.replace(/ *\n\n[\s]*/g, "\n\n").trim()
    if (text.length > 0 || current.heading.length > 0) {
      const section = { ...current, text }
      sectionsAll.push(section)
      if (currentInMain) sectionsMain.push(section)
    }
  }

  const parser = new Parser({
    onopentag(name, attribs) {
      const classes = attribs.class ?? ""
      const skip = skipTags.has(name) || skipClasses.some((c) => classes.includes(c)) || attribs.role === "navigation" ||
        attribs.role === "search"
      const main = name === "main" || attribs.role === "main" || (name === "div" && /(^| )body( |$)/.test(classes))
      stack.push({ name, skip, main })
      if (skip) skipDepth++
      if (main) {
        mainDepth++
        sawMain = true
      }
      if (name === "title") inTitle = true
      if (attribs.id !== undefined) lastId = attribs.id
      if (skipDepth > 0) return
      if (headingTags.has(name)) {
        heading = { anchor: lastId, text: "" }
      } else if (heading === undefined && blockTags.has(name)) {
        current.text += "\n\n"
      } else if (name === "a" && attribs.name !== undefined) {
        lastId = attribs.name
      }
    },
    ontext(data) {
      if (inTitle) title += data
      if (skipDepth > 0) return
      // Source line breaks are layout, not structure: paragraphs come from block tags.
      const text = data.replace(/\s+/g, " ")
      if (heading !== undefined) heading.text += text
      else current.text += text
    },
    onclosetag(name) {
      if (name === "title") inTitle = false
      // Pop to the matching open tag; htmlparser2 closes implied tags itself.
      for (let i = stack.length - 1; i >= 0; i--) {
        if (stack[i]!.name !== name) continue
        while (stack.length > i) {
          const top = stack.pop()!
          if (top.skip) skipDepth--
          if (top.main) mainDepth--
        }
        break
      }
      if (skipDepth === 0 && heading !== undefined && headingTags.has(name)) {
        flush()
        current = { anchor: heading.anchor, heading: heading.text.replace(/\s+/g, " ").replace(/¶$/, "").trim(), text: "" }
        currentInMain = mainDepth > 0
        heading = undefined
      }
    }
  }, { decodeEntities: true })
  currentInMain = false
  parser.write(html)
  parser.end()
  flush()
  return { title: title.replace(/\s+/g, " ").trim(), sections: sawMain ? sectionsMain : sectionsAll }
}

/** Cuts a long text at paragraph breaks into pieces of at most about maxChars. */
const cutLong = (text: string, maxChars: number): Array<string> => {
  if (text.length <= maxChars) return [text]
  const pieces: Array<string> = []
  let piece = ""
  // A paragraph longer than a piece (a long listing) is cut at spaces.
  const paragraphs = text.split("\n\n").flatMap((p) => p.length <= maxChars ? [p] : p.match(new RegExp(`[^]{1,${maxChars}}(?= |$)|[^]{1,${maxChars}}`, "g")) ?? [p])
  for (const raw of paragraphs) {
    const paragraph = raw.trim()
    if (piece.length > 0 && piece.length + paragraph.length > maxChars) {
      pieces.push(piece)
      piece = ""
    }
    piece = piece.length > 0 ? `${piece}\n\n${paragraph}` : paragraph
  }
  if (piece.length > 0) pieces.push(piece)
  return pieces
}

/** All passages of one page, with unique URLs (page URL, section anchor, piece number). */
export const pagePassages = (page: DocPage, html: string): Array<IndexDocument> => {
  const { title, sections } = splitPage(html)
  const out: Array<IndexDocument> = []
  const seen = new Set<string>()
  for (const section of sections) {
    const sectionTitle = section.heading.length > 0 && section.heading !== title && !title.startsWith(section.heading)
      ? `${title} — ${section.heading}`
      : title
    const pieces = cutLong(section.text, maxPassageChars)
    pieces.forEach((text, i) => {
      if (text.length < minPassageChars) return
      let url = section.anchor !== undefined ? `${page.url}#${section.anchor}` : page.url
      if (i > 0 || seen.has(url)) url = `${url}${url.includes("#") ? "-" : "#"}part-${i + 1}`
      if (seen.has(url)) return
      seen.add(url)
      out.push({ url, title: sectionTitle, text })
    })
  }
  return out
}

/** One page whole: its sections' headings and text in order, under the page's title. */
export const wholePage = (page: DocPage, html: string): IndexDocument | undefined => {
  const { title, sections } = splitPage(html)
  const text = sections.map((s) => (s.heading.length > 0 ? `${s.heading}\n\n${s.text}` : s.text)).join("\n\n").trim()
  return text.length < minPassageChars ? undefined : { url: page.url, title, text }
}

export type PassageCorpus =
  | { readonly _tag: "Ready"; readonly path: string; readonly count: number }
  | { readonly _tag: "Missing"; readonly reason: string }

/** Builds the passage corpus (or, `pages`, the whole-page one) once (about a minute) and returns the cached JSONL file. */
export const ensurePassageCorpus = (pages = false): PassageCorpus => {
  const path = pages ? pageCachePath : passageCachePath
  const countFile = `${path}.count`
  if (existsSync(path) && existsSync(countFile)) {
    return { _tag: "Ready", path, count: Number(readFileText(countFile)) }
  }
  const corpus = loadDebianDocs(largePackages)
  if (corpus._tag === "Missing") return corpus
  mkdirSync(dirname(path), { recursive: true })
  const lines: Array<string> = []
  for (const page of corpus.pages) {
    const documents = pages ? [wholePage(page, readPage(page))].filter((d) => d !== undefined) : pagePassages(page, readPage(page))
    for (const document of documents) lines.push(JSON.stringify(document))
  }
  const tmp = `${path}.tmp`
  writeFileSync(tmp, lines.join("\n") + "\n")
  renameSync(tmp, path)
  writeFileSync(countFile, String(lines.length))
  return { _tag: "Ready", path, count: lines.length }
}

const readFileText = (path: string): string => readFileSync(path, "utf8")
