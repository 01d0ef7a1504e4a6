/** Weighted RRF and the URL-normalised merge on known lists. */
import { describe, expect, it } from "vitest"
import { cleanerUrl, pageKey } from "../../core/index/UrlNormalizer.ts"
import { betterTitle, fuseImages, fuseWeb } from "../../core/search/Fusion.ts"
import type { WebHit } from "../../core/search/SearchResult.ts"

const hit = (link: string, title = link, snippet = "", date: string | null = null): WebHit => ({ title, link, snippet, date })

describe("pageKey", () => {
  it("ignores scheme, host case, www., default port, fragment, tracking parameters, query order and a trailing slash", () => {
    const key = pageKey("http://example.com/path?a=1&b=2")
    for (const variant of [
      "https://WWW.Example.com:443/path/?b=2&a=1&utm_source=news#section",
      "https://example.com/path?b=2&gclid=x&a=1&fbclid=y",
      "http://www.example.com:80/path?a=1&b=2#top"
    ]) expect(pageKey(variant), variant).toBe(key)
  })

  it("keeps what makes another page: path case, other ports, other values", () => {
    const key = pageKey("https://example.com/path?a=1")
    expect(pageKey("https://example.com/Path?a=1")).not.toBe(key)
    expect(pageKey("https://example.com:8080/path?a=1")).not.toBe(key)
    expect(pageKey("https://example.com/path?a=2")).not.toBe(key)
    expect(pageKey("not a url")).toBe("not a url")
    expect(pageKey("https://example.com/path?a=1&spm=x")).toBe(key)
  })
})

describe("cleanerUrl", () => {
  it("https over http, then fewer tracking parameters, else the first", () => {
    expect(cleanerUrl("http://example.com/a", "https://example.com/a?utm_source=x")).toBe("https://example.com/a?utm_source=x")
    expect(cleanerUrl("https://example.com/a?utm_source=brave", "https://example.com/a")).toBe("https://example.com/a")
    expect(cleanerUrl("https://example.com/a?id=2&gclid=1&fbclid=2", "https://www.example.com/a/?gclid=1&id=2")).toBe("https://www.example.com/a/?gclid=1&id=2")
    expect(cleanerUrl("https://example.com/a", "https://www.example.com/a/")).toBe("https://example.com/a")
    // A query-looking fragment is no query.
    expect(cleanerUrl("https://example.com/a#x?utm_source=y", "https://example.com/a?utm_source=y")).toBe("https://example.com/a#x?utm_source=y")
  })
})

describe("fuseWeb", () => {
  it("weighted RRF with k = 60: sum of weight / (60 + rank)", () => {
    const fused = fuseWeb([
      { source: "A", weight: 1, hits: [hit("https://a.org"), hit("https://b.org"), hit("https://c.org")] },
      { source: "B", weight: 2, hits: [hit("https://c.org"), hit("https://d.org"), hit("https://a.org")] }
    ], 10)
    expect(fused.map((f) => f.hit.link)).toEqual(["https://c.org", "https://a.org", "https://d.org", "https://b.org"])
    expect(fused[0]!.score).toBeCloseTo(1 / 63 + 2 / 61, 12)
    expect(fused[1]!.score).toBeCloseTo(1 / 61 + 2 / 63, 12)
    expect(fused[2]!.score).toBeCloseTo(2 / 62, 12)
    expect(fused[3]!.score).toBeCloseTo(1 / 62, 12)
    expect(fused[0]!.sources).toEqual([{ source: "A", rank: 3 }, { source: "B", rank: 1 }])
  })

  it("equal weights and mirrored lists tie; ties go to the better rank, then first seen", () => {
    const fused = fuseWeb([
      { source: "A", weight: 1, hits: [hit("https://x.org"), hit("https://y.org")] },
      { source: "B", weight: 1, hits: [hit("https://y.org"), hit("https://x.org")] }
    ], 10)
    expect(fused.map((f) => f.hit.link)).toEqual(["https://x.org", "https://y.org"])
  })

  it("cuts at the limit", () => {
    const fused = fuseWeb([{ source: "A", weight: 1, hits: ["1", "2", "3", "4"].map((n) => hit(`https://e.org/${n}`)) }], 2)
    expect(fused.map((f) => f.hit.link)).toEqual(["https://e.org/1", "https://e.org/2"])
  })

  it("merges duplicates: best title, longest snippet, https link, every source with its rank", () => {
    const fused = fuseWeb([
      { source: "brave", weight: 1, hits: [hit("http://www.example.com/page?utm_source=x", "Example page about cats and…", "short", null)] },
      { source: "serper", weight: 1, hits: [hit("https://other.org"), hit("https://example.com/page#intro", "Example page", "a much longer snippet about cats", "2025-03-01")] },
      { source: "local", weight: 1, hits: [hit("https://example.com/page/", "Example", "mid snippet", "2025-03-01T10:00:00Z")] }
    ], 10)
    expect(fused).toHaveLength(2)
    const merged = fused[0]!
    expect(merged.hit).toEqual({
      title: "Example page",
      link: "https://example.com/page#intro",
      snippet: "a much longer snippet about cats",
      date: "2025-03-01T10:00:00Z"
    })
    expect(merged.sources).toEqual([{ source: "brave", rank: 1 }, { source: "serper", rank: 2 }, { source: "local", rank: 1 }])
  })

  it("links the cleanest URL any source gave, whichever source came first", () => {
    const fused = fuseWeb([
      { source: "brave", weight: 1, hits: [hit("https://www.example.com/page/?utm_source=brave&id=7")] },
      { source: "serper", weight: 1, hits: [hit("http://example.com/page?id=7")] },
      { source: "tavily", weight: 1, hits: [hit("https://example.com/page?id=7")] }
    ], 10)
    expect(fused.map((f) => f.hit.link)).toEqual(["https://example.com/page?id=7"])
  })

  it("a source listing one page twice counts it once, at its better rank", () => {
    const fused = fuseWeb([{ source: "A", weight: 1, hits: [hit("https://a.org/x"), hit("https://a.org/x/")] }], 10)
    expect(fused).toHaveLength(1)
    expect(fused[0]!.score).toBeCloseTo(1 / 61, 12)
  })

  it("betterTitle prefers a whole title to a cut one, then the longer", () => {
    expect(betterTitle("A long title that was cut...", "A title")).toBe("A title")
    expect(betterTitle("Short", "Longer title")).toBe("Longer title")
    expect(betterTitle("", "Only")).toBe("Only")
  })
})

describe("fuseImages", () => {
  it("fuses by the image URL and keeps the first known source page", () => {
    const fused = fuseImages([
      { source: "A", weight: 1, hits: [{ url: "https://i.org/a.jpg", refUrl: "", title: "" }] },
      { source: "B", weight: 1, hits: [{ url: "https://i.org/b.jpg", refUrl: "https://p.org/b", title: "B" }, { url: "http://www.i.org/a.jpg", refUrl: "https://p.org/a", title: "A cat" }] }
    ], 10)
    expect(fused.map((f) => f.hit)).toEqual([
      { url: "https://i.org/a.jpg", refUrl: "https://p.org/a", title: "A cat" },
      { url: "https://i.org/b.jpg", refUrl: "https://p.org/b", title: "B" }
    ])
  })
})
