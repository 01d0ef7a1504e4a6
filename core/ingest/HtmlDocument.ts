/**
 * HTML to IndexDocument: title, canonical link, main text without boilerplate,
 * language, publish date and content images of one page. Pure and total: any
 * string gives a document. A page with no readable main text (an empty file, a
 * frameset, a script-only app shell) gives a document whose `text` is empty;
 * indexing pipelines count those as skipped ("no main text").
 *
 * Parsing is linkedom (a pure, fast DOM); main-content choice is in
 * MainContent (declared containers, then Mozilla Readability).
 */
import { parseHTML } from "linkedom"
import type { ImageRecord, IndexDocument } from "../index/Document.ts"
import { removeBoilerplate } from "./Boilerplate.ts"
import { walkContent } from "./ContentWalk.ts"
import { jsonLdObjects } from "./JsonLd.ts"
import { type ContentMethod, type MainContent, mainContent } from "./MainContent.ts"
import { pageImages } from "./PageImages.ts"
import { pageLanguage } from "./PageLanguage.ts"
import { baseUrl, canonicalLink } from "./PageLink.ts"
import { followableLinks, robotsDirectives, type RobotsDirectives } from "./PageLinks.ts"
import { pageMeta } from "./PageMeta.ts"
import { pageTitle } from "./PageTitle.ts"
import { publishDate } from "./PublishDate.ts"
import { labelText } from "./TextNormalize.ts"

/** The document plus how its main text was found (for diagnostics and benchmarks). */
export interface ExtractedPage {
  readonly document: IndexDocument
  /** "declared" container, "readability", cleaned "body", or "none" when nothing was readable. */
  readonly method: ContentMethod | "none"
  /** Links a crawler may follow (absolute, no fragments), read before boilerplate removal. */
  readonly links: ReadonlyArray<string>
  readonly robots: RobotsDirectives
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname
  } catch {
    return ""
  }
}

/** Last resort for untitled pages: the file name or host the link names ("sql-createtable"). */
const titleFromUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    const last = parsed.pathname.split("/").filter((s) => s !== "").pop()
    if (last === undefined) return parsed.hostname
    return labelText(decodeURIComponent(last).replace(/\.[a-z0-9]{1,5}$/i, "").replace(/[-_]+/g, " ")) ||
      parsed.hostname
  } catch {
    return url
  }
}

const headingTexts = (document: Document): Array<string> => {
  const out: Array<string> = []
  for (const heading of document.querySelectorAll("h1, h2")) {
    const text = labelText(heading.textContent)
    if (text !== "") out.push(text)
  }
  return out
}

// Elements that belong in <head> when a page leaves out its <head> and <body> tags.
const HEAD_ELEMENTS = new Set(["title", "meta", "link", "base", "style", "script"])

/**
 * linkedom (htmlparser2) does not repair a page the way browsers do: without
 * <html>/<body> tags, content ends up beside an empty body, or outside the
 * root. This puts every node where a browser would: head elements before the
 * first content into <head>, everything else, in order, into <body>.
 */
const repairTree = (document: Document): void => {
  const root = document.documentElement
  const isHtml = root?.localName === "html"
  const body = isHtml ? root.querySelector(":scope > body") : null
  const meaningful = (n: Node) => n.nodeType === 1 || (n.nodeType === 3 && (n.nodeValue ?? "").trim() !== "")
  const stray = [
    ...(isHtml ? [...root.childNodes].filter((n) => n !== body && (n as Element).localName !== "head") : []),
    // Nodes beside the root: a page without <html>, or content after </html>.
    ...[...document.childNodes].filter((n) => !(isHtml && n === root))
  ].filter(meaningful)
  if (isHtml && stray.length === 0) return
  // linkedom may have planted empty head/body elements inside the content: they are not the page's.
  if (!isHtml) for (const planted of document.querySelectorAll("head:empty, body:empty")) planted.remove()
  const html = isHtml ? root : document.createElement("html")
  const head = html.querySelector(":scope > head") ?? document.createElement("head")
  const newBody = body ?? document.createElement("body")
  let inBody = newBody.childNodes.length > 0
  for (const node of stray) {
    if (!inBody && node.nodeType === 1 && HEAD_ELEMENTS.has((node as Element).localName)) head.appendChild(node)
    else {
      inBody = true
      newBody.appendChild(node)
    }
  }
  if (head.parentNode !== html) html.insertBefore(head, html.firstChild)
  if (newBody.parentNode !== html) html.appendChild(newBody)
  if (html.parentNode !== document) document.appendChild(html)
}

const parseDocument = (html: string): Document => {
  const { document } = parseHTML(html) as unknown as { document: Document }
  repairTree(document)
  return document
}

/**
 * The extraction with the parsed page and its main content, for a reader that also renders
 * that content (webFetch's Markdown): one parse serves both. The content elements are the
 * parsed page's own, left unchanged by the extraction; the caller may consume them.
 */
export const extractPageWithContent = (
  html: string,
  sourceUrl: string
): { readonly page: ExtractedPage; readonly dom: Document; readonly content: MainContent | undefined } => {
  const document = parseDocument(typeof html === "string" ? html : "")
  const meta = pageMeta(document)
  const jsonLd = jsonLdObjects(document)
  const base = baseUrl(document, sourceUrl)
  const link = canonicalLink(document, meta, base, sourceUrl)
  const title = pageTitle(document, meta, headingTexts(document), hostOf(link)) || titleFromUrl(link)
  const date = publishDate(document, meta, jsonLd, [link, sourceUrl])
  const lang = pageLanguage(document, meta, jsonLd)
  const robots = robotsDirectives(document)
  const links = followableLinks(document, base, robots)

  removeBoilerplate(document)
  const content = mainContent(document)
  const walked = content === undefined ? { text: "", images: [] } : walkContent(content.roots)
  const images: Array<ImageRecord> = pageImages(walked.images, meta, base)

  const page: ExtractedPage = {
    document: {
      url: link,
      title,
      text: walked.text,
      date,
      ...(lang === undefined ? {} : { lang }),
      ...(images.length === 0 ? {} : { images })
    },
    method: content === undefined || walked.text === "" ? "none" : content.method,
    links,
    robots
  }
  return { page, dom: document, content }
}

export const extractPage = (html: string, sourceUrl: string): ExtractedPage => extractPageWithContent(html, sourceUrl).page

/** HTML of a page read from `sourceUrl` as the document the index stores. */
export const htmlToDocument = (html: string, sourceUrl: string): IndexDocument => extractPage(html, sourceUrl).document
