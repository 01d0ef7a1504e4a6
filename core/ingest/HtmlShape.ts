/**
 * How deep a page nests its elements and how many it has, measured before the page is parsed
 * into a DOM. The DOM parser's cost grows faster than linearly with depth (its open-element
 * stack is shifted at every tag), and what reads the tree afterwards recurses, so a page is
 * measured first with a linear pass: htmlparser2's tokenizer (the parser linkedom is built on,
 * without its tree) and a stack of our own that closes elements the way that parser does
 * (void elements, end tags implied by a start tag, self-closing tags inside SVG and MathML).
 * The pass stops at the first limit crossed.
 */
import { Tokenizer } from "htmlparser2"

export interface HtmlShape {
  /** The deepest element nesting seen (up to the first limit crossed). */
  readonly depth: number
  /** Elements seen (up to the first limit crossed). */
  readonly elements: number
  /** The limit the page crosses, if any. */
  readonly over: "depth" | "elements" | undefined
}

// The tree builder's rules (htmlparser2's Parser): elements without content, and start tags
// that close the open element(s) named beside them.
const VOID = new Set([
  "area", "base", "basefont", "br", "col", "command", "embed", "frame", "hr", "img", "input", "isindex", "keygen",
  "link", "meta", "param", "source", "track", "wbr"
])
const P = ["p"]
const HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6", "p"]
const FORM = ["input", "option", "optgroup", "select", "button", "datalist", "textarea"]
const IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>([
  ["tr", new Set(["tr", "th", "td"])],
  ["th", new Set(["th"])],
  ["td", new Set(["thead", "th", "td"])],
  ["body", new Set(["head", "link", "script"])],
  ["a", new Set(["a"])],
  ["li", new Set(["li"])],
  ...["h1", "h2", "h3", "h4", "h5", "h6"].map((h) => [h, new Set(HEADINGS)] as const),
  ...["select", "input", "output", "button", "datalist", "textarea"].map((t) => [t, new Set(FORM)] as const),
  ["option", new Set(["option"])],
  ["optgroup", new Set(["optgroup", "option"])],
  ["dd", new Set(["dd", "dt"])],
  ["dt", new Set(["dd", "dt"])],
  ...[
    "p", "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figcaption", "figure", "footer",
    "form", "header", "hr", "main", "nav", "ol", "pre", "section", "table", "ul"
  ].map((t) => [t, new Set(P)] as const),
  ["rt", new Set(["rt", "rp"])],
  ["rp", new Set(["rt", "rp"])],
  ["tbody", new Set(["thead", "tbody"])],
  ["tfoot", new Set(["thead", "tbody"])]
])
const FOREIGN = new Set(["svg", "math"])

class Crossed extends Error {}

/** The page's nesting depth and element count, stopping at the first of the limits it crosses. */
export const htmlShape = (html: string, limits: { readonly maxDepth: number; readonly maxElements: number }): HtmlShape => {
  const stack: Array<string> = []
  // How many of each name are open: an end tag for a name not open costs nothing.
  const open = new Map<string, number>()
  let foreign = 0
  let deepest = 0
  let elements = 0
  let over: HtmlShape["over"]
  let tag = ""

  const reach = (depth: number) => {
    if (depth <= deepest) return
    deepest = depth
    if (deepest > limits.maxDepth) {
      over = "depth"
      throw new Crossed()
    }
  }
  const push = (name: string) => {
    stack.push(name)
    open.set(name, (open.get(name) ?? 0) + 1)
    if (FOREIGN.has(name)) foreign++
    reach(stack.length)
  }
  const pop = () => {
    const name = stack.pop()!
    open.set(name, open.get(name)! - 1)
    if (FOREIGN.has(name)) foreign--
  }
  const name = (start: number, end: number) => html.slice(start, end).toLowerCase()

  const tokenizer = new Tokenizer({ decodeEntities: false }, {
    onopentagname(start, end) {
      tag = name(start, end)
      if (++elements > limits.maxElements) {
        over = "elements"
        throw new Crossed()
      }
      const closes = IMPLIES_CLOSE.get(tag)
      if (closes !== undefined) while (stack.length > 0 && closes.has(stack[stack.length - 1]!)) pop()
      // A void element is a leaf one level down.
      if (VOID.has(tag)) reach(stack.length + 1)
      else push(tag)
    },
    onselfclosingtag() {
      // Only foreign content (SVG, MathML) honours `/>`; in HTML `<div/>` opens a div.
      if (foreign > 0 && stack[stack.length - 1] === tag) pop()
    },
    onclosetag(start, end) {
      const closing = name(start, end)
      // A stray </p> makes an empty paragraph, as the tree builder does.
      if (closing === "p" && (open.get("p") ?? 0) === 0 && ++elements > limits.maxElements) {
        over = "elements"
        throw new Crossed()
      }
      if (VOID.has(closing) || (open.get(closing) ?? 0) === 0) return
      while (stack.length > 0 && stack[stack.length - 1] !== closing) pop()
      pop()
    },
    onopentagend() {},
    onattribdata() {},
    onattribentity() {},
    onattribend() {},
    onattribname() {},
    oncdata() {},
    oncomment() {},
    ondeclaration() {},
    onend() {},
    onprocessinginstruction() {},
    ontext() {},
    ontextentity() {},
    isInForeignContext: () => foreign > 0
  })
  try {
    tokenizer.write(html)
    tokenizer.end()
  } catch (error) {
    if (!(error instanceof Crossed)) throw error
  }
  return { depth: deepest, elements, over }
}
