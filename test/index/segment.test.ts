/**
 * A snapshot with a segment of added pages beside it (core/index/SegmentedIndex.ts) answers as
 * one index holding both, scored with the statistics the design states (the whole's document
 * count and frequencies, the snapshot's average field lengths): the same pages, order and scores
 * as one index built from both pages and given those statistics; a segment page hides the
 * snapshot page with its URL; technical tokens read alike on both sides; links take steps.
 */
import { describe, expect, it } from "vitest"
import type { IndexDocument } from "../../core/index/Document.ts"
import type { EngineOptions } from "../../core/index/IndexBuilder.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { buildSegment } from "../../core/index/SegmentBuild.ts"
import { linkSegment, runToEnd, SegmentedIndex } from "../../core/index/SegmentedIndex.ts"
import { buildIndex, seeded } from "./support.ts"

const random = seeded(54)
const vocabulary = Array.from({ length: 1500 }, (_, i) => `v${i.toString(36)}`)
/** Zipf-like: a few words on most pages, most words on few. */
const word = () => vocabulary[Math.floor(random() ** 3 * vocabulary.length)]!
const words = (n: number) => Array.from({ length: n }, word).join(" ")
const page = (url: string): IndexDocument => ({ url, title: words(1 + Math.floor(random() * 4)), text: words(15 + Math.floor(random() * 120)) })
const query = () => {
  const n = 1 + Math.floor(random() * 4)
  const r = random()
  // Plain words mostly; a phrase, an exclusion or a site: now and then.
  if (r < 0.1) return `"${words(2)}" ${words(1)}`
  if (r < 0.2) return `${words(n)} -${word()}`
  if (r < 0.3) return `${words(n)} site:b.example`
  return words(n)
}

/** No near-duplicate collapsing: a build of both pages would cluster across the two, which a segment does not. */
const options: EngineOptions = { nearDuplicateBits: -1 }
const snapshotPages = Array.from({ length: 3000 }, (_, i) => page(`https://${i % 3 === 0 ? "a" : "b"}.example/p${i}`))
const addedPages = Array.from({ length: 150 }, (_, i) => page(`https://${i % 2 === 0 ? "a" : "c"}.example/added${i}`))
const snapshot = buildIndex(snapshotPages, options)
const link = (base: SearchIndex, added: ReadonlyArray<IndexDocument>) => runToEnd(linkSegment(base, buildSegment(added, base.options))) as SegmentedIndex

/** One index of both, scored with the statistics the segmented one states. */
const reference = (() => {
  const whole = buildIndex([...snapshotPages, ...addedPages], options)
  const statistics = (own: SearchIndex["parts"]["web"], averageLengths: ReadonlyArray<number>) => ({ documentCount: own.documentCount, otherDf: new Map(), averageLengths })
  return whole.withStatistics(statistics(whole.parts.web, snapshot.parts.web.meta.averageLengths), statistics(whole.parts.images, snapshot.parts.images.meta.averageLengths))
})()

/** Same pages in the same order and the same scores; pages whose scores differ by a rounding may trade places. */
const expectSameRanking = (got: ReadonlyArray<{ url: string; score: number }>, expected: ReadonlyArray<{ url: string; score: number }>, label: string) => {
  expect(got.map((r) => r.score).length, label).toBe(expected.length)
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b))
  for (let i = 0; i < expected.length; i++) expect(close(got[i]!.score, expected[i]!.score), `${label}: score ${i}`).toBe(true)
  for (let i = 0; i < expected.length;) {
    let j = i + 1
    while (j < expected.length && close(expected[j]!.score, expected[i]!.score)) j++
    expect(got.slice(i, j).map((r) => r.url).sort(), `${label}: results ${i}..${j - 1}`).toEqual(expected.slice(i, j).map((r) => r.url).sort())
    i = j
  }
}

describe("a segment of added pages beside a snapshot", () => {
  const segmented = link(snapshot, addedPages)

  it("ranks as one index of both pages with the stated statistics, proximity included", () => {
    let fromSegment = 0
    for (let q = 0; q < 300; q++) {
      const words = query()
      for (const k of [1, 10, 40]) {
        const expected = reference.rank(words, k)
        expectSameRanking(segmented.rank(words, k), expected, `${words} (${k})`)
        fromSegment += expected.filter((r) => r.url.includes("/added")).length
      }
    }
    // Both sides took part.
    expect(fromSegment).toBeGreaterThan(100)
  })

  it("answers searches with the same hits, snippets included", () => {
    for (let q = 0; q < 100; q++) {
      const words = query()
      const got = segmented.search(words, 10).hits
      const expected = reference.search(words, 10).hits
      expect(new Set(got.map((h) => JSON.stringify(h))), words).toEqual(new Set(expected.map((h) => JSON.stringify(h))))
    }
  })

  it("counts the pages of both and searches images of the snapshot", () => {
    expect(segmented.documentCount).toBe(snapshotPages.length + addedPages.length)
    const withImages = buildIndex([{ url: "https://a.example/img", title: "Lamp", text: "a lighthouse lamp", images: [{ url: "https://a.example/lamp.png", alt: "lighthouse lamp" }] }], options)
    const joined = link(withImages, [{ url: "https://c.example/new", title: "New", text: "harbour notes" }])
    expect(joined.searchImages("lighthouse lamp", 10).map((h) => h.url)).toEqual(["https://a.example/lamp.png"])
  })

  it("hides the snapshot's page when a page with its URL is added, its images too", () => {
    const base = buildIndex([
      { url: "https://a.example/same/", title: "Old version", text: "quixotic zeppelin facts", images: [{ url: "https://a.example/zep.png", alt: "zeppelin" }] },
      { url: "https://a.example/other", title: "Other", text: "zeppelin hangar" }
    ], options)
    const joined = link(base, [{ url: "https://a.example/same", title: "New version", text: "zeppelin timetable" }])
    expect(joined.documentCount).toBe(2)
    expect(joined.search("quixotic", 10).hits).toEqual([])
    expect(joined.search("zeppelin", 10).hits.map((h) => h.title).sort()).toEqual(["New version", "Other"])
    expect(joined.searchImages("zeppelin", 10)).toEqual([])
    expect(joined.page("https://a.example/same/", 100)?.title).toBe("New version")
    expect(joined.page("https://a.example/other", 100)?.title).toBe("Other")
  })

  it("reads a technical token the segment holds whole as that token on the snapshot's side too, not its parts", () => {
    const base = buildIndex([{ url: "https://a.example/c", title: "C", text: "the c language and its compiler" }], options)
    const joined = link(base, [{ url: "https://c.example/cpp", title: "C++", text: "c++ templates" }])
    expect(joined.search("c++", 10).hits.map((h) => h.link)).toEqual(["https://c.example/cpp"])
    expect(base.search("c++", 10).hits.map((h) => h.link)).toEqual(["https://a.example/c"])
  })

  it("scores the segment with its own averages when the snapshot is empty", () => {
    const joined = link(buildIndex([], options), addedPages)
    const alone = buildIndex(addedPages, options)
    for (let q = 0; q < 50; q++) {
      const words = query()
      expectSameRanking(joined.rank(words, 10), alone.rank(words, 10), words)
    }
  })

  it("is the snapshot itself when no page was added, and links in steps", () => {
    expect(runToEnd(linkSegment(snapshot, buildSegment([], snapshot.options)))).toBe(snapshot)
    let steps = 0
    const linking = linkSegment(snapshot, buildSegment(addedPages, snapshot.options))
    while (linking.next().done !== true) steps++
    expect(steps).toBeGreaterThan(1)
  })
})
