import { describe, expect, it } from "vitest"
import { Analyzer } from "../../core/index/analysis/Analyzer.ts"
import { PageField, SearchIndex } from "../../core/index/SearchIndex.ts"
import { plainText } from "../../core/index/Snippet.ts"
import { longTextChars, placeReach } from "../../core/index/SnippetPlaces.ts"
import { type ByteRanges, StoredFields, StoredFieldsWriter } from "../../core/index/StoredFields.ts"
import { buildIndex, seeded } from "./support.ts"

const random = seeded(11)
const filler = (n: number) =>
  Array.from({ length: n }, () => ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"][Math.floor(random() * 7)]!).join(" ")

const snippetOf = (text: string, query: string, title = "Some page") =>
  buildIndex([{ url: "https://s.example/page", title, text }]).search(query, 1).hits[0]!.snippet

const bodyOf = (snippet: string) => snippet.replace(/^…/, "").replace(/…$/, "")

describe("snippets", () => {
  it("come from the passage holding the query words, 150 to 300 characters, cut at word boundaries", () => {
    const text = `${filler(150)} the garbage collector frees memory ${filler(150)}`
    const snippet = snippetOf(text, "garbage collector")
    expect(snippet).toContain("garbage collector frees memory")
    expect(snippet.length).toBeGreaterThanOrEqual(150)
    expect(snippet.length).toBeLessThanOrEqual(300)
    const body = bodyOf(snippet)
    const at = text.indexOf(body)
    expect(at).toBeGreaterThan(0)
    expect(text[at - 1]).toBe(" ")
    expect(text[at + body.length]).toBe(" ")
    expect(snippet.startsWith("…") && snippet.endsWith("…")).toBe(true)
  })

  it("prefer the window with more distinct query words", () => {
    const text = `${filler(40)} kernel ${filler(120)} kernel scheduler latency ${filler(40)} scheduler ${filler(80)}`
    const snippet = snippetOf(text, "kernel scheduler latency")
    expect(snippet).toContain("kernel scheduler latency")
  })

  it("match stemmed and folded forms as written in the page", () => {
    expect(snippetOf(`${filler(80)} Runs the Café engine ${filler(80)}`, "running cafe")).toContain("Runs the Café engine")
  })

  it("find Chinese and Japanese words", () => {
    const text = `${"これはテストの文章です。".repeat(20)}東京の検索エンジンは速い。${"別の文章が続きます。".repeat(20)}`
    expect(snippetOf(text, "検索")).toContain("検索")
  })

  it("are plain text on one line", () => {
    const snippet = snippetOf(`First paragraph about dogs.\n\n\tSecond paragraph\r\nabout cats.\u0007 ${filler(60)}`, "cats")
    expect(snippet).not.toMatch(/[\n\r\t\u0000-\u001f]/)
    expect(snippet).toContain("Second paragraph about cats.")
  })

  it("show the start of the page when only the title matches", () => {
    const text = `Opening words of the page. ${filler(200)}`
    const snippet = snippetOf(text, "zeppelin", "Zeppelin history")
    expect(snippet.startsWith("Opening words of the page.")).toBe(true)
    expect(snippet.length).toBeGreaterThanOrEqual(150)
    expect(snippet.length).toBeLessThanOrEqual(300)
  })

  it("do not change for a query word the page has only in its title", () => {
    // The first window holding every word the text has is the snippet; a word the text lacks
    // must not send the scan on to a later window (here one with the words repeated).
    const text = `${filler(60)} kernel scheduler ${filler(100)} kernel scheduler kernel scheduler ${filler(60)}`
    const plain = snippetOf(text, "kernel scheduler", "Zeppelin notes")
    expect(plain).toContain("kernel scheduler")
    expect(plain).not.toContain("kernel scheduler kernel")
    expect(snippetOf(text, "kernel scheduler zeppelin", "Zeppelin notes")).toBe(plain)
    // Several results: the words each text has come from proximity re-ranking's reading of the postings.
    const pages = [
      { url: "https://s.example/a", title: "Zeppelin notes", text },
      { url: "https://s.example/b", title: "Zeppelin flights", text: `${filler(30)} kernel scheduler ${filler(30)}` },
      { url: "https://s.example/c", title: "Airships", text: `zeppelin kernel ${filler(40)} scheduler` }
    ]
    const hit = (query: string) => buildIndex(pages).search(query, 10).hits.find((h) => h.link === "https://s.example/a")!.snippet
    expect(hit("kernel scheduler zeppelin")).toBe(hit("kernel scheduler"))
  })

  it("make plain text as the regular expressions would, in one pass", () => {
    // eslint-disable-next-line no-control-regex
    const reference = (t: string) => t.replace(/[\u0000-\u0008\u000e-\u001f\u007f]/g, "").replace(/\s+/g, " ").trim()
    const pieces = ["a", "Zb", "é", "検", "😀", " ", " ", "  ", "\t", "\n", "\r\n", "\u000b", "\u000c", "\u00a0", "\u1680", "\u2003", "\u2028", "\u202f", "\u3000", "\ufeff", "\u0000", "\u0007", "\u001c", "\u001f", "\u007f", "\u0085", "\u200b"]
    const pick = seeded(5)
    for (let n = 0; n < 3000; n++) {
      const text = Array.from({ length: 1 + Math.floor(pick() * 24) }, () => pieces[Math.floor(pick() * pieces.length)]!).join("")
      const start = Math.floor(pick() * 3)
      const end = text.length - Math.floor(pick() * 3)
      expect(plainText(text, start, Math.max(start, end)), JSON.stringify(text)).toBe(reference(text.slice(start, Math.max(start, end))))
    }
  })

  it("hold a short text whole", () => {
    expect(snippetOf("A short page about owls.", "owls")).toBe("A short page about owls.")
  })
})

/**
 * Long pages (8,192 characters or more) keep how many positions their text took, and their
 * snippet comes from a piece of 4 KB read where the query words' positions put it; when the
 * piece holds fewer of the words than the positions said, from the whole text.
 */
describe("snippets of long pages", () => {
  const pageText = (index: SearchIndex, doc: number) => index.parts.pages.get(doc, PageField.Text)
  /** The same index, its page text read through a source that records each read's length. */
  const recordingReads = (index: SearchIndex) => {
    const reads: Array<number> = []
    const { pages } = index.parts
    const bytes = pages.allBytes()
    const source: ByteRanges = { length: bytes.length, read: (start, end) => (reads.push(end - start), bytes.subarray(start, end)) }
    return { index: new SearchIndex({ ...index.parts, pages: new StoredFields(pages.width, source, pages.offsets) }), reads }
  }
  const withoutPlaces = (index: SearchIndex) => new SearchIndex({ ...index.parts, textPositions: new Int32Array(0) })

  it("store how many positions each long page's text took, and none for shorter ones", () => {
    const index = buildIndex([
      { url: "https://l.example/long", title: "Long", text: filler(2000) },
      { url: "https://l.example/short", title: "Short", text: filler(200) },
      { url: "https://l.example/stop", title: "Stop words hold positions", text: `${"the a of ".repeat(1000)}${filler(10)}` }
    ])
    const counts = new Map<number, number>()
    for (let i = 0; i < index.parts.textPositions.length; i += 2) counts.set(index.parts.textPositions[i]!, index.parts.textPositions[i + 1]!)
    for (let doc = 0; doc < 3; doc++) {
      const text = pageText(index, doc)
      if (text.length < longTextChars) expect(counts.has(doc)).toBe(false)
      else expect(counts.get(doc), text.slice(0, 20)).toBe(new Analyzer().analyze(text, () => {}))
    }
    expect(counts.size).toBe(2)
  })

  it("come from a piece of the text where the words' positions put them", () => {
    const text = `${filler(7000)} the garbage collector frees memory ${filler(3000)}`
    const built = buildIndex([{ url: "https://l.example/gc", title: "Memory", text }])
    const { index, reads } = recordingReads(built)
    const snippet = index.search("garbage collector", 1).hits[0]!.snippet
    expect(snippet).toContain("garbage collector frees memory")
    expect(snippet.startsWith("…") && snippet.endsWith("…")).toBe(true)
    // Only a piece was read (the title, URL and date are short), and it gave what the whole text gives.
    expect(Math.max(...reads)).toBeLessThanOrEqual(2 * placeReach + 3)
    expect(snippet).toBe(withoutPlaces(built).search("garbage collector", 1).hits[0]!.snippet)
  })

  it("come from the piece when it holds the words, even farther apart than a snippet's window", () => {
    // 25 long words between them: within the postings' window of 30 positions, 300 characters apart.
    const apart = `tokamak ${"electromagnetics ".repeat(25)}plasma`
    const text = `${filler(5000)} ${apart} ${filler(3000)}`
    const built = buildIndex([{ url: "https://l.example/apart", title: "Apart", text }])
    const { index, reads } = recordingReads(built)
    const snippet = index.search("tokamak plasma", 1).hits[0]!.snippet
    expect(snippet).toMatch(/tokamak|plasma/)
    expect(Math.max(...reads)).toBeLessThanOrEqual(2 * placeReach + 3)
  })

  it("come from the whole text when the estimate misses the words", () => {
    // Stop words of two bytes hold most positions, long words most bytes: a share of the
    // positions is far from the same share of the bytes.
    const text = `${"a ".repeat(12_000)}${"supercalifragilistic ".repeat(600)} tokamak plasma ${"supercalifragilistic ".repeat(600)}`
    const built = buildIndex([{ url: "https://l.example/far", title: "Far", text }])
    const { index, reads } = recordingReads(built)
    const snippet = index.search("tokamak plasma", 1).hits[0]!.snippet
    expect(snippet).toContain("tokamak plasma")
    expect(Math.max(...reads)).toBeGreaterThanOrEqual(pageText(built, 0).length)
    expect(snippet).toBe(withoutPlaces(built).search("tokamak plasma", 1).hits[0]!.snippet)
  })

  it("are whole pieces of the text, with ellipses where cut, whatever the characters around the cut", () => {
    const pick = seeded(23)
    const words = ["café", "naïve", "東京", "検索", "😀emoji", "straße", "plain", "words", "here", "ünïcödé", "zebra", "quartz"]
    const docs = Array.from({ length: 30 }, (_, i) => ({
      url: `https://l.example/${i}`,
      title: `Page ${i}`,
      text: Array.from({ length: 1500 + Math.floor(pick() * 6000) }, () => words[Math.floor(pick() * words.length)]!).join(pick() < 0.5 ? " " : "\n")
    }))
    const index = buildIndex(docs, { nearDuplicateBits: -1 })
    expect(index.parts.textPositions.length).toBeGreaterThan(40)
    let checked = 0
    for (const query of ["zebra quartz", "café zebra", "東京 quartz", "straße", "naïve plain zebra", "ünïcödé quartz"]) {
      for (const hit of index.search(query, 30).hits) {
        const doc = docs.findIndex((d) => d.url === hit.link)
        const plain = plainText(docs[doc]!.text, 0, docs[doc]!.text.length)
        const body = hit.snippet.replace(/^…/, "").replace(/…$/, "")
        expect(hit.snippet).not.toContain("\ufffd")
        expect(plain.includes(body), `${query}: ${hit.snippet}`).toBe(true)
        expect(hit.snippet.startsWith("…")).toBe(!plain.startsWith(body))
        expect(hit.snippet.endsWith("…")).toBe(!plain.endsWith(body))
        checked++
      }
    }
    expect(checked).toBeGreaterThan(100)
  })
})

describe("a stored field's piece", () => {
  it("is the text between the first characters starting at or after each end", () => {
    const pick = seeded(3)
    const pieces = ["a", "é", "東", "😀", " ", "\n"]
    for (let n = 0; n < 500; n++) {
      const text = Array.from({ length: 1 + Math.floor(pick() * 40) }, () => pieces[Math.floor(pick() * pieces.length)]!).join("")
      const writer = new StoredFieldsWriter(2)
      writer.add(["before", text])
      writer.add([text, "after"])
      const fields = writer.finish()
      const bytes = new TextEncoder().encode(text)
      // Each character's first byte, and the byte length: where a piece may begin and end.
      const starts: Array<number> = []
      for (let b = 0; b <= bytes.length; b++) if (b === bytes.length || (bytes[b]! & 0xc0) !== 0x80) starts.push(b)
      const from = Math.floor(pick() * (bytes.length + 2)) - 1
      const to = from + Math.floor(pick() * (bytes.length + 2))
      const first = starts.find((b) => b >= Math.max(0, from))!
      const last = Math.max(first, starts.find((b) => b >= Math.min(to, bytes.length))!)
      const expected = new TextDecoder().decode(bytes.subarray(first, last))
      expect(fields.getPart(0, 1, from, to), `${JSON.stringify(text)} ${from}-${to}`).toBe(expected)
      expect(fields.getPart(1, 0, from, to)).toBe(expected)
      expect(fields.byteLength(0, 1)).toBe(bytes.length)
    }
  })
})
