/**
 * Chooses the elements holding a page's main content, once boilerplate is gone:
 *
 * 1. A container the page declares: `<main>`/`role=main`, a single `<article>`,
 *    or `itemprop=articleBody`, when it holds a fair share of the page's text.
 * 2. Otherwise Mozilla Readability (the Firefox Reader View algorithm) decides
 *    where the article is. We take the region it picked from the original tree,
 *    not its rewritten copy: its clean-up pass drops figures, tables and
 *    headings inside the article (GIMP's example screenshots, for one).
 * 3. Readability is tuned for news: on a reference page made of many sections
 *    (PostgreSQL's CREATE TABLE) it keeps the largest one only. When its region
 *    leaves out much of the page and what it left out is prose rather than
 *    links, the whole cleaned body is the main content.
 */
import { Readability } from "@mozilla/readability"
import { collapseSpace } from "./TextNormalize.ts"

export type ContentMethod = "declared" | "readability" | "body"

export interface MainContent {
  /** Content elements in document order (Readability may pick a node and some of its siblings). */
  readonly roots: ReadonlyArray<Element>
  readonly method: ContentMethod
}

// A declared container with less than this share of the text is a fragment (a hero, a teaser).
const DECLARED_MIN_SHARE = 0.3
// Readability's region is trusted outright when it keeps this share of the body text...
const READABILITY_KEEPS = 0.8
// ...or when what it left out is this link-heavy (menus, link lists, teasers).
const LEFT_OUT_LINK_DENSITY = 0.25

const MARK = "data-periscope-node"

// Readability's cost grows faster than linearly with nesting depth and element count, so a deep
// machine-made tree would hold a reading up. Real pages stay far below both limits; machine-made ones get the body.
const READABILITY_MAX_DEPTH = 256
const READABILITY_MAX_ELEMENTS = 50_000

/** Deepest element nesting under `root`, counted without recursion; stops counting at `limit`. */
const nestingDepth = (root: Element, limit: number): number => {
  let deepest = 0
  const stack: Array<[Element, number]> = [[root, 0]]
  while (stack.length > 0) {
    const [element, depth] = stack.pop()!
    if (depth > deepest) deepest = depth
    if (deepest > limit) return deepest
    for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) stack.push([child, depth + 1])
  }
  return deepest
}

const textLength = (element: Element): number => collapseSpace(element.textContent ?? "").length

const linkTextLength = (element: Element): number => {
  let total = 0
  for (const link of element.querySelectorAll("a")) total += collapseSpace(link.textContent ?? "").length
  return total
}

const largest = (elements: Iterable<Element>): { element: Element; length: number } | undefined => {
  let best: { element: Element; length: number } | undefined
  for (const element of elements) {
    const length = textLength(element)
    if (best === undefined || length > best.length) best = { element, length }
  }
  return best
}

const declaredContainer = (body: Element, bodyLength: number): Element | undefined => {
  const enough = (found: { length: number } | undefined) =>
    found !== undefined && found.length > 0 && found.length >= bodyLength * DECLARED_MIN_SHARE
  const main = largest(body.querySelectorAll("main, [role=main]"))
  if (main !== undefined && enough(main)) return main.element
  const articles = [...body.querySelectorAll("article")].filter((a) => a.parentElement?.closest("article") == null)
  if (articles.length === 1) {
    const article = { element: articles[0]!, length: textLength(articles[0]!) }
    if (enough(article)) return article.element
  }
  const articleBody = largest(body.querySelectorAll("[itemprop=articleBody]"))
  if (articleBody !== undefined && enough(articleBody)) return articleBody.element
  return undefined
}

/**
 * The original elements of the region Readability picks, in document order.
 * Elements are numbered before Readability reads a copy; the outermost numbered
 * elements of its answer name the region in the original tree.
 */
const readabilityRegion = (document: Document, body: Element): Array<Element> => {
  const all = body.querySelectorAll("*")
  if (all.length > READABILITY_MAX_ELEMENTS || nestingDepth(body, READABILITY_MAX_DEPTH) > READABILITY_MAX_DEPTH) return []
  const numbered: Array<Element> = []
  for (const element of all) {
    element.setAttribute(MARK, String(numbered.length))
    numbered.push(element)
  }
  let picked: Node | null | undefined
  try {
    const copy = document.cloneNode(true) as Document
    picked = new Readability<Node>(copy, { serializer: (node) => node, disableJSONLD: true, keepClasses: true })
      .parse()?.content
  } catch {
    // Readability gives up on some malformed trees; the caller falls back to the body.
    return []
  }
  if (picked === null || picked === undefined || picked.nodeType !== 1) return []
  const indexes = new Set<number>()
  for (const element of (picked as Element).querySelectorAll(`[${MARK}]`)) {
    if (element.parentElement?.closest(`[${MARK}]`) != null) continue
    const index = Number(element.getAttribute(MARK))
    if (Number.isInteger(index) && index >= 0 && index < numbered.length) indexes.add(index)
  }
  const region = [...indexes].sort((a, b) => a - b).map((i) => numbered[i]!)
  for (const element of numbered) element.removeAttribute(MARK)
  // A picked node inside another picked node is already covered by it.
  return region.filter((element) => !region.some((other) => other !== element && other.contains(element)))
}

export const mainContent = (document: Document): MainContent | undefined => {
  const body = document.body ?? document.documentElement
  if (body === null) return undefined
  const bodyLength = textLength(body)
  const declared = declaredContainer(body, bodyLength)
  if (declared !== undefined) return { roots: [declared], method: "declared" }

  const region = readabilityRegion(document, body)
  if (region.length > 0 && bodyLength > 0) {
    const kept = region.reduce((sum, element) => sum + textLength(element), 0)
    const leftOut = bodyLength - kept
    const leftOutLinks = linkTextLength(body) - region.reduce((sum, element) => sum + linkTextLength(element), 0)
    if (kept >= bodyLength * READABILITY_KEEPS || leftOutLinks >= leftOut * LEFT_OUT_LINK_DENSITY) {
      return { roots: region, method: "readability" }
    }
  }
  return { roots: [body], method: "body" }
}
