import { describe, expect, it } from "vitest"
import { plainText } from "../../core/index/Snippet.ts"
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
