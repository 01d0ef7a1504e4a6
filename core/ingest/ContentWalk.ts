/**
 * One pass over the main content in document order: the visible text as
 * paragraphs (one per block element, blank line between them, preformatted
 * blocks keep their lines), and every `<img>` with the heading above it.
 *
 * Iterative on purpose: machine-made pages nest thousands of elements deep,
 * which would overflow a recursive walk.
 */
import { collapseSpace, labelText } from "./TextNormalize.ts"

export interface ImageSighting {
  readonly element: Element
  /** Text of the nearest heading above the image, if any. */
  readonly heading: string | undefined
}

export interface WalkedContent {
  readonly text: string
  readonly images: ReadonlyArray<ImageSighting>
}

const BLOCK = new Set([
  "address", "article", "aside", "blockquote", "caption", "dd", "details", "div", "dl", "dt", "fieldset",
  "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "li",
  "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "thead", "tfoot", "tr", "ul", "body",
  "center", "listing", "legend", "option"
])
const HEADING_TAG = /^h[1-6]$/
// Headings that are not h1-h6: ARIA's role="heading" and Sphinx's rubric ("Examples", "Notes").
const isHeading = (element: Element, tag: string): boolean =>
  HEADING_TAG.test(tag) ||
  (tag !== "div" && tag !== "section" &&
    (element.getAttribute("role") === "heading" || /(?:^|\s)rubric(?:\s|$)/.test(element.getAttribute("class") ?? "")))
// Never visible text, even if boilerplate removal missed them (e.g. inside the chosen container).
const SKIP = new Set(["script", "style", "noscript", "template", "head", "title", "svg", "math", "select", "textarea"])

const TEXT_NODE = 3
const ELEMENT_NODE = 1

// Markers on the explicit stack: an element to enter, or the exit of one already entered.
type Frame = { readonly node: Node; readonly exit: boolean }

export const walkContent = (roots: ReadonlyArray<Element>): WalkedContent => {
  const blocks: Array<string> = []
  const images: Array<ImageSighting> = []
  let inline: Array<string> = []
  let preDepth = 0
  let heading: string | undefined
  let headingStart = -1

  const flush = () => {
    if (inline.length === 0) return
    const raw = inline.join("")
    inline = []
    const text = preDepth > 0
      ? raw.split("\n").map((line) => line.replace(/\s+$/, "")).filter((line) => line.trim() !== "").join("\n")
      : collapseSpace(raw)
    if (text !== "") blocks.push(text)
  }

  const stack: Array<Frame> = []
  for (let i = roots.length - 1; i >= 0; i--) stack.push({ node: roots[i]!, exit: false })
  while (stack.length > 0) {
    const { node, exit } = stack.pop()!
    if (node.nodeType === TEXT_NODE) {
      inline.push(node.nodeValue ?? "")
      continue
    }
    if (node.nodeType !== ELEMENT_NODE) continue
    const element = node as Element
    const tag = element.localName
    if (exit) {
      if (tag === "pre" || tag === "listing") {
        flush()
        preDepth--
      } else if (isHeading(element, tag)) {
        flush()
        // The heading is the block(s) it just produced.
        if (blocks.length > headingStart) heading = labelText(blocks.slice(headingStart).join(" ")) || heading
      } else if (BLOCK.has(tag)) {
        flush()
      } else if (tag === "td" || tag === "th") {
        inline.push(" ")
      }
      continue
    }
    if (SKIP.has(tag)) continue
    if (tag === "br") {
      inline.push(preDepth > 0 ? "\n" : " ")
      continue
    }
    if (tag === "img") {
      images.push({ element, heading })
      continue
    }
    const opensHeading = isHeading(element, tag)
    if (BLOCK.has(tag) || opensHeading || tag === "pre") flush()
    if (tag === "pre" || tag === "listing") preDepth++
    if (opensHeading) headingStart = blocks.length
    stack.push({ node: element, exit: true })
    // Children pushed in reverse so they pop in document order.
    const children: Array<Node> = []
    for (let child = element.firstChild; child !== null; child = child.nextSibling) children.push(child)
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, exit: false })
  }
  flush()
  return { text: blocks.join("\n\n"), images }
}
