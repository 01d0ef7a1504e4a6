import { describe, expect, it } from "vitest"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { normalizeUrl } from "../../core/index/UrlNormalizer.ts"
import { buildIndex, links, seeded } from "./support.ts"

describe("URL normalisation", () => {
  it("gives one key to the spellings of one address", () => {
    const spellings = [
      "https://Example.COM/docs/page",
      "https://example.com:443/docs/page",
      "https://example.com/docs/page/",
      "https://example.com/docs/./x/../page",
      "https://example.com/docs/page?utm_source=news&utm_medium=mail",
      "https://example.com/docs/page?fbclid=abc#",
      "https://user:secret@example.com/docs/page",
      "  https://example.com./docs/page  "
    ]
    const keys = new Set(spellings.map((s) => normalizeUrl(s)?.key))
    expect([...keys]).toEqual(["https://example.com/docs/page"])
  })

  it("keeps what changes the page and the link's own path", () => {
    expect(normalizeUrl("http://example.com/a")?.key).not.toBe(normalizeUrl("https://example.com/a")?.key)
    expect(normalizeUrl("https://example.com/a?id=2&utm_source=x")?.key).toBe("https://example.com/a?id=2")
    expect(normalizeUrl("https://example.com:8443/a")?.key).toBe("https://example.com:8443/a")
    expect(normalizeUrl("https://example.com/a#install")?.key).toBe("https://example.com/a#install")
    expect(normalizeUrl("https://example.com/a/")?.link).toBe("https://example.com/a/")
    expect(normalizeUrl("https://EXAMPLE.com")?.key).toBe("https://example.com/")
  })

  it("refuses what is not an absolute http(s) URL", () => {
    for (const bad of ["", "example.com/a", "/relative", "ftp://example.com/", "javascript:alert(1)", "mailto:a@b.c", "http://"]) {
      expect(normalizeUrl(bad), bad).toBeUndefined()
    }
  })
})

describe("duplicates", () => {
  it("keeps one document per normalised URL, the last one added", () => {
    const builder = new IndexBuilder()
    expect(builder.add([{ url: "https://example.com/a/", title: "Old", text: "old version about walruses" }])).toEqual({ added: 1, duplicates: 0, rejected: [] })
    expect(builder.add([{ url: "https://EXAMPLE.com/a?utm_campaign=x", title: "New", text: "new version about walruses" }])).toEqual({ added: 0, duplicates: 1, rejected: [] })
    const index = builder.build()
    expect(index.documentCount).toBe(1)
    const hits = index.search("walruses", 10).hits
    expect(hits.map((h) => h.title)).toEqual(["New"])
  })

  it("collapses near-duplicate pages at different URLs to the best one", () => {
    const random = seeded(5)
    const words = Array.from({ length: 300 }, () => ["ocean", "tide", "moon", "wave", "shore", "sand", "salt", "wind"][Math.floor(random() * 8)]!)
    const article = `Tidal forces explained. ${words.join(" ")}`
    const mirror = `${article} Copyright the mirror site.` // a few words more
    const different = `Tidal forces explained. ${[...words].reverse().join(" ")}`
    const index = buildIndex([
      { url: "https://origin.example/tides", title: "Tides", text: article },
      { url: "https://mirror.example/tides", title: "Tides", text: mirror },
      { url: "https://other.example/tides", title: "Tides", text: different }
    ])
    const result = links(index, "tidal forces")
    expect(result).toHaveLength(2)
    expect(result).toContain("https://other.example/tides")
    expect(result.filter((l) => l.endsWith("origin.example/tides") || l.endsWith("mirror.example/tides"))).toHaveLength(1)
    // With collapsing off, all three are listed.
    const all = buildIndex([
      { url: "https://origin.example/tides", title: "Tides", text: article },
      { url: "https://mirror.example/tides", title: "Tides", text: mirror },
      { url: "https://other.example/tides", title: "Tides", text: different }
    ], { nearDuplicateBits: -1 })
    expect(links(all, "tidal forces")).toHaveLength(3)
  })

  it("never lists a page twice and still fills the page with distinct results", () => {
    const base = "Distributed consensus with Raft: leader election, log replication and safety. ".repeat(8)
    const docs = [
      ...Array.from({ length: 12 }, (_, i) => ({ url: `https://copies.example/${i}`, title: "Raft consensus", text: base })),
      ...Array.from({ length: 12 }, (_, i) => ({
        url: `https://unique.example/${i}`,
        title: `Consensus note ${i}`,
        text: `Consensus topic ${i}: ${Array.from({ length: 30 }, (_, j) => `w${(i * 37 + j * 11) % 101}`).join(" ")}`
      }))
    ]
    const hits = buildIndex(docs).search("raft consensus", 10).hits
    expect(hits).toHaveLength(10)
    expect(new Set(hits.map((h) => h.link)).size).toBe(10)
    expect(hits.filter((h) => h.link.startsWith("https://copies.example/"))).toHaveLength(1)
  })

  it("fills the page when copies fill whole skip blocks of the strongest word", () => {
    // 300 copies span the first skip blocks (128 postings each) of "raft" and score above every
    // other page: ranking must count them as one result from its first estimate of the 10th score on.
    const base = "Raft raft raft: leader election and log replication. ".repeat(4)
    const docs = [
      ...Array.from({ length: 300 }, (_, i) => ({ url: `https://copies.example/${String(i).padStart(3, "0")}`, title: "Raft", text: base })),
      ...Array.from({ length: 40 }, (_, i) => ({
        url: `https://unique.example/${i}`,
        title: `Note ${i}`,
        text: `Raft ${"election ".repeat(1 + (i % 5))}${Array.from({ length: 20 + i }, (_, j) => `w${(i * 37 + j * 11) % 101}`).join(" ")}`
      }))
    ]
    const index = buildIndex(docs, { proximity: 0 })
    const query = "raft election"
    // The reference: the uncollapsed ranking with every copy after the best one left out.
    const uncollapsed = index.rank(query, 400, { collapse: false }).map((r) => r.url)
    const firstCopy = uncollapsed.find((u) => u.startsWith("https://copies.example/"))
    const expected = uncollapsed.filter((u) => !u.startsWith("https://copies.example/") || u === firstCopy).slice(0, 10)
    expect(index.rank(query, 10).map((r) => r.url)).toEqual(expected)
    expect(links(index, query)).toEqual(expected)
    expect(expected.filter((u) => u.startsWith("https://unique.example/"))).toHaveLength(9)
  })
})
