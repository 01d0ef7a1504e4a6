import { describe, expect, it } from "vitest"
import { parseQuery } from "../../core/index/QueryParser.ts"
import { buildIndex, links, seeded } from "./support.ts"

const docs = [
  { url: "https://docs.python.org/3/library/asyncio.html", title: "asyncio — Asynchronous I/O", text: "The event loop runs asynchronous tasks. Use asyncio.run to start the event loop." },
  { url: "https://docs.python.org/3/library/threading.html", title: "threading", text: "A loop over events in threads. Each thread has its own event handling." },
  { url: "https://docs.python.org/2/library/thread.html", title: "thread (legacy)", text: "The old event loop module for Python 2." },
  { url: "https://www.python.org/about/", title: "About Python", text: "Python has an event loop in asyncio." },
  { url: "https://nodejs.org/en/docs/", title: "Node.js docs", text: "The Node.js event loop is single threaded." },
  { url: "https://example.com/rings", title: "Books", text: "The Lord of the Rings is a novel. A lord wears rings." }
]
const index = buildIndex(docs)

describe("query language", () => {
  it("parses phrases, exclusions and site filters", () => {
    expect(parseQuery(`event "event loop" -threads -"old module" site:python.org -site:www.python.org`)).toEqual({
      words: "event",
      phrases: ["event loop"],
      excluded: ["threads", "old module"],
      sites: [{ host: "python.org", path: "" }],
      excludedSites: [{ host: "www.python.org", path: "" }]
    })
    expect(parseQuery(`"unclosed phrase`).phrases).toEqual(["unclosed phrase"])
    expect(parseQuery("- lone -- dash").words).toBe("- lone -- dash")
    expect(parseQuery("site:https://Docs.Python.org/3/library/").sites).toEqual([{ host: "docs.python.org", path: "/3/library" }])
  })

  it("matches quoted phrases exactly, in order", () => {
    expect(links(index, `"event loop"`)).toEqual(expect.arrayContaining([
      "https://docs.python.org/3/library/asyncio.html",
      "https://docs.python.org/2/library/thread.html",
      "https://www.python.org/about/",
      "https://nodejs.org/en/docs/"
    ]))
    // "A loop over events" has both words, but not as the phrase.
    expect(links(index, `"event loop"`)).not.toContain("https://docs.python.org/3/library/threading.html")
    expect(links(index, `"loop event"`)).toEqual([])
  })

  it("keeps stop-word gaps inside phrases", () => {
    expect(links(index, `"lord of the rings"`)).toEqual(["https://example.com/rings"])
    expect(links(index, `"lord rings"`)).toEqual([])
  })

  it("leaves out excluded words and phrases", () => {
    const all = links(index, "event loop")
    expect(all).toContain("https://nodejs.org/en/docs/")
    expect(links(index, "event loop -node.js")).not.toContain("https://nodejs.org/en/docs/")
    expect(links(index, "event loop -threaded")).not.toContain("https://nodejs.org/en/docs/")
    expect(links(index, `event loop -"single threaded"`)).not.toContain("https://nodejs.org/en/docs/")
    expect(links(index, `event loop -"threaded single"`)).toContain("https://nodejs.org/en/docs/")
    // Excluding a word no page has changes nothing.
    expect(links(index, "event loop -zzzz")).toEqual(all)
  })

  it("filters by site, subdomains and path included", () => {
    const python = links(index, "event loop site:python.org")
    expect(python.length).toBe(4)
    expect(python.every((l) => new URL(l).hostname.endsWith("python.org"))).toBe(true)
    expect(links(index, "event loop site:docs.python.org/3")).toEqual(expect.arrayContaining([
      "https://docs.python.org/3/library/asyncio.html",
      "https://docs.python.org/3/library/threading.html"
    ]))
    expect(links(index, "event loop site:docs.python.org/3")).toHaveLength(2)
    expect(links(index, "event loop site:python.org -site:docs.python.org")).toEqual(["https://www.python.org/about/"])
    expect(links(index, "event loop site:nodejs.org site:www.python.org").sort()).toEqual(["https://nodejs.org/en/docs/", "https://www.python.org/about/"])
    expect(links(index, "event site:org")).toHaveLength(5)
    expect(links(index, "event loop site:thon.org")).toEqual([]) // a host suffix must be whole labels
    expect(links(index, "event loop site:nowhere.example")).toEqual([])
  })

  it("compiles a query as the ranking sees it: the strongest word first, phrase words required", () => {
    const web = index.parts.web
    const compiled = index.compile(`loop loop rings "event loop" -threads`)!
    const ids = (words: ReadonlyArray<string>) => words.map((w) => web.lookup(w))
    // "loop" twice in the words and once in the phrase: query weight 3.
    const weights = new Map(compiled.terms.map((t) => [web.termText(t.termId), t.weight]))
    expect(weights).toEqual(new Map([["loop", 3], ["ring", 1], ["event", 1]]))
    const bounds = compiled.terms.map((t) => web.termMaxScore(t.termId, t.weight))
    expect(bounds).toEqual([...bounds].sort((a, b) => b - a))
    expect(compiled.phrases).toEqual([{ termIds: ids(["event", "loop"]), offsets: [0, 1] }])
    expect(compiled.excluded).toEqual([{ termIds: ids(["thread"]), offsets: [0] }])
    // Nothing can match: no known word, or a phrase with an unknown one.
    expect(index.compile("zzzz")).toBeUndefined()
    expect(index.compile(`event "event zzzz"`)).toBeUndefined()
  })

  it("answers any string without throwing", () => {
    const random = seeded(3)
    const alphabet = ` "-:siteORAND.+#/\\()[]{}*?~^!'’日本語검색é\u0000\ud800\n\t`
    const strings = [
      "", " ", "\"", "\"\"", "-", "--", "-\"\"", "site:", "site:-", "-site:", "\"-site:x\"", "site:a..b", "site:[::1]",
      "a".repeat(5000), "the the the", "\"the of and\"", "-the", "日本語", "😀", "x".repeat(70)
    ]
    for (let i = 0; i < 500; i++) {
      strings.push(Array.from({ length: Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(""))
    }
    for (const s of strings) {
      const answer = index.search(s, 10)
      expect(answer.query).toBe(s)
      for (const hit of answer.hits) {
        expect(typeof hit.title).toBe("string")
        expect(typeof hit.snippet).toBe("string")
      }
      expect(() => index.searchImages(s, 10)).not.toThrow()
    }
    expect(index.search("event", 0).hits).toEqual([])
    expect(index.search("event", -5).hits).toEqual([])
    expect(index.search("event", Number.NaN).hits).toEqual([])
    expect(index.search("the of and", 10).hits).toEqual([])
  })
})
