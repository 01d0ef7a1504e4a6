/**
 * The warm-up an opened index answers before it serves (core/index/WarmUp.ts): queries of words
 * from its own page titles, as many as asked or as fit in the time given, answering nothing
 * differently afterwards; an index without pages or titles is warmed without an error.
 */
import { describe, expect, it } from "vitest"
import { warmUp, warmUpQuery } from "../../core/index/WarmUp.ts"
import { buildIndex, seeded } from "./support.ts"

const random = seeded(7)
const vocabulary = Array.from({ length: 300 }, (_, i) => `word${i}`)
const words = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(random() * random() * vocabulary.length)]!)
const pages = Array.from({ length: 400 }, (_, i) => ({
  url: `https://warm.example/${i}`,
  title: words(1 + (i % 5)).join(" "),
  text: words(40).join(" "),
  images: i % 10 === 0 ? [{ url: `https://warm.example/${i}.png`, alt: words(2).join(" ") }] : []
}))
const index = buildIndex(pages)

describe("warming an index up", () => {
  it("makes its queries of the words of page titles, one title's or two titles'", () => {
    const titleWords = new Set(pages.flatMap((p) => p.title.split(" ")))
    const lengths = new Set<number>()
    for (let i = 0; i < 200; i++) {
      const query = warmUpQuery(index, i).split(" ").filter((w) => w !== "")
      expect(query.length, `query ${i}`).toBeGreaterThan(0)
      expect(query.length).toBeLessThanOrEqual(4)
      for (const word of query) expect(titleWords.has(word), word).toBe(true)
      lengths.add(query.length)
    }
    // Short and long queries both, not one title's first word over and over.
    expect([...lengths].sort()).toEqual([1, 2, 3, 4])
    expect(new Set(Array.from({ length: 200 }, (_, i) => warmUpQuery(index, i))).size).toBeGreaterThan(100)
    expect(warmUpQuery(index, 17)).toBe(warmUpQuery(buildIndex(pages), 17))
  })

  it("answers as many queries as asked, or none when given no time", () => {
    expect(warmUp(index, { maxQueries: 25, maxMs: 60_000 }).queries).toBe(25)
    expect(warmUp(index, { maxQueries: 25, maxMs: 0 }).queries).toBe(0)
  })

  it("stops when its time is up", () => {
    const report = warmUp(index, { maxQueries: Number.MAX_SAFE_INTEGER, maxMs: 50 })
    expect(report.queries).toBeGreaterThan(0)
    expect(report.queries).toBeLessThan(Number.MAX_SAFE_INTEGER)
    expect(report.ms).toBeGreaterThanOrEqual(50)
  })

  it("leaves every answer as it was", () => {
    const queries = Array.from({ length: 30 }, (_, i) => warmUpQuery(index, 1000 + i))
    const fresh = buildIndex(pages)
    const before = queries.map((q) => [fresh.search(q, 10), fresh.searchImages(q, 10)])
    warmUp(fresh, { maxQueries: 500, maxMs: 60_000 })
    expect(queries.map((q) => [fresh.search(q, 10), fresh.searchImages(q, 10)])).toEqual(before)
  })

  it("warms an index without pages, or whose pages have no title, without an error", () => {
    expect(warmUp(buildIndex([]), { maxQueries: 10, maxMs: 1_000 })).toMatchObject({ queries: 0 })
    const untitled = buildIndex([{ url: "https://warm.example/a", title: "", text: "only text here" }])
    expect(warmUpQuery(untitled, 0)).toBe("")
    expect(warmUp(untitled, { maxQueries: 10, maxMs: 1_000 }).queries).toBe(10)
  })
})
