/**
 * HtmlShape measures a page as the tree builder linkedom uses (htmlparser2's Parser) would
 * build it, in one linear pass: the same depth and element count on tricky markup (implied end
 * tags, void elements, `<div/>` in HTML, `/>` in SVG, stray end tags), and on real pages; it
 * stops at the first limit crossed, and takes a page nested 200,000 deep in one pass.
 */
import { readFileSync } from "node:fs"
import { Parser } from "htmlparser2"
import { describe, expect, it } from "vitest"
import { htmlShape } from "../../core/ingest/HtmlShape.ts"
import { debianDocsOrSkip } from "../support/debianDocs.ts"
import { nestedHtml } from "./hostilePages.ts"

const unbounded = { maxDepth: Number.MAX_SAFE_INTEGER, maxElements: Number.MAX_SAFE_INTEGER }

/** What the tree builder makes of `html`: its deepest nesting and its element count. */
const built = (html: string) => {
  let depth = 0
  let deepest = 0
  let elements = 0
  const parser = new Parser({
    onopentag() {
      depth++
      elements++
      deepest = Math.max(deepest, depth)
    },
    onclosetag() {
      depth--
    }
  }, { decodeEntities: false })
  parser.end(html)
  return { depth: deepest, elements }
}

const shapeOf = (html: string) => {
  const { depth, elements } = htmlShape(html, unbounded)
  return { depth, elements }
}

describe("htmlShape", () => {
  it.each([
    ["implied end tags", "<ul><li>a<li>b<li>c</ul><p>one<p>two<p>three<table><tr><td>x<td>y<tr><td>z</table>"],
    ["void elements", "<div><img src=x><br><input><hr><p>text<br/>more</p><meta charset=utf-8></div>"],
    ["<div/> opens a div in HTML", "<div/><div/><div/><span>deep</span>"],
    ["/> closes inside SVG and MathML", "<svg><g/><g/><path d='M0'/><g><rect/></g></svg><math><mi/></math><div>after</div>"],
    ["stray and mismatched end tags", "<div><span>a</div></span></p><b><i>x</b>y</i><p>last"],
    ["a second form is ignored, headings close paragraphs", "<form><p>a<h2>b</h2><select><option>1<option>2</select></form>"],
    ["comments, scripts and entities", "<!-- <div><div> --><script>if (a<b) { '<div>' }</script><p>&lt;div&gt;</p><style>p>a{}</style>"]
  ])("%s: the depth and element count the tree builder makes", (_name, html) => {
    expect(shapeOf(html)).toEqual(built(html))
  })

  it("stops at the first limit it crosses, saying which", () => {
    expect(htmlShape(nestedHtml(1000), { maxDepth: 100, maxElements: 1_000_000 })).toMatchObject({ over: "depth", depth: 101 })
    expect(htmlShape("<p>x</p>".repeat(50), { maxDepth: 100, maxElements: 20 })).toMatchObject({ over: "elements", elements: 21 })
    expect(htmlShape("<p>x</p>".repeat(50), { maxDepth: 100, maxElements: 50 }).over).toBeUndefined()
  })

  it("measures a page nested 200,000 deep in one pass, where the tree builder's own stack is the slow part", () => {
    const shape = htmlShape(nestedHtml(200_000), unbounded)
    expect(shape.depth).toBe(200_002)
    expect(shape.elements).toBe(200_004)
  })

  const docs = debianDocsOrSkip()
  it.skipIf(docs === undefined)("agrees with the tree builder on real pages, within an implied element or two", () => {
    const sample = docs!.filter((_, i) => i % 50 === 0)
    for (const page of sample) {
      const html = readFileSync(page.file, "utf8")
      const ours = shapeOf(html)
      const theirs = built(html)
      expect(Math.abs(ours.depth - theirs.depth), page.file).toBeLessThanOrEqual(1)
      expect(Math.abs(ours.elements - theirs.elements), page.file).toBeLessThanOrEqual(2)
    }
    expect(sample.length).toBeGreaterThan(20)
  })
})
