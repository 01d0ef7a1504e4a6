import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { EngineSearch, SearchEngine } from "../../core/backends/EngineSearch.ts"
import { encodeSnapshot, SnapshotError } from "../../core/index/Snapshot.ts"
import { ImageSearch } from "../../core/search/ImageSearch.ts"
import { WebSearch } from "../../core/search/WebSearch.ts"
import { sampleDocuments } from "./corpus.ts"
import { buildIndex } from "./support.ts"

const pages = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    url: `https://${topic}.example/${i}`,
    title: `${topic} page ${i}`,
    text: `All about ${topic} and shared words, part ${i}. ${`${topic}${i} `.repeat(i + 1)}`,
    images: [{ url: `https://${topic}.example/${i}.png`, alt: `${topic} picture ${i}` }]
  }))

describe("EngineSearch layer", () => {
  const index = buildIndex(sampleDocuments)

  it("answers WebSearch and ImageSearch from the engine", async () => {
    const program = Effect.gen(function*() {
      const web = yield* (yield* WebSearch).search({ keywords: "event loop", num: 10 })
      const images = yield* (yield* ImageSearch).search({ keywords: "diagram", num: 10 })
      return { web, images }
    })
    const { web, images } = await Effect.runPromise(program.pipe(Effect.provide(EngineSearch.layer(index))))
    expect(web.query).toBe("event loop")
    expect(web.organic.map((r) => r.position)).toEqual([1, 2])
    expect(web.organic.map((r) => r.link).sort()).toEqual(["https://docs.python.org/3/library/asyncio.html", "https://nodejs.org/en/learn/event-loop"])
    expect(web.organic.find((r) => r.link.includes("python"))?.date).toBe("2024-03-01")
    expect(images).toEqual([{ url: "https://docs.python.org/3/_images/loop.png", refUrl: "https://docs.python.org/3/library/asyncio.html", title: "Event loop diagram", width: 640, height: 480 }])
  })

  it("starts from snapshot bytes, and refuses a damaged snapshot at startup", async () => {
    const bytes = encodeSnapshot(index)
    const ok = await Effect.runPromise(
      Effect.gen(function*() {
        return yield* (yield* WebSearch).search({ keywords: "C++", num: 3 })
      }).pipe(
        Effect.provide(EngineSearch.layerFromSnapshot(Effect.succeed(bytes)))
      )
    )
    expect(ok.organic[0]?.link).toBe("https://cpp.example.com/templates")
    const exit = await Effect.runPromiseExit(
      Effect.gen(function*() {
        return yield* WebSearch
      }).pipe(Effect.provide(EngineSearch.layerFromSnapshot(Effect.succeed(bytes.subarray(0, 100)))))
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(exit)).toContain("truncated")
  })

  it("swaps snapshots under load without failing or mixing a request", async () => {
    const a = buildIndex(pages("alpha", 30))
    const b = buildIndex(pages("beta", 30))
    const bytesA = encodeSnapshot(a)
    const bytesB = encodeSnapshot(b)
    const expectedA = JSON.stringify(a.search("shared words", 10).hits)
    const expectedB = JSON.stringify(b.search("shared words", 10).hits)
    expect(expectedA).not.toBe(expectedB)

    const program = Effect.gen(function*() {
      const engine = yield* SearchEngine
      const web = yield* WebSearch
      const images = yield* ImageSearch
      const query = (i: number) =>
        Effect.gen(function*() {
          yield* Effect.yieldNow
          if (i % 5 === 0) return { kind: "images" as const, answer: JSON.stringify(yield* images.search({ keywords: "picture", num: 10 })) }
          const data = yield* web.search({ keywords: "shared words", num: 10 })
          return { kind: "web" as const, answer: JSON.stringify(data.organic.map(({ position: _, ...hit }) => hit)) }
        })
      const reload = (round: number) =>
        Effect.gen(function*() {
          for (let i = 0; i < round % 7; i++) yield* Effect.yieldNow // land somewhere among the round's queries
          if (round === 30) {
            // A damaged snapshot in the middle is refused; the current index stays.
            const refused = yield* Effect.flip(engine.reload(bytesA.subarray(0, bytesA.length - 10)))
            expect(refused).toBeInstanceOf(SnapshotError)
            return
          }
          yield* engine.reload(round % 2 === 0 ? bytesB : bytesA)
        })
      const answers: Array<{ kind: "web" | "images"; answer: string }> = []
      for (let round = 0; round < 60; round++) {
        const [batch] = yield* Effect.all([
          Effect.forEach(Array.from({ length: 50 }, (_, i) => i), query, { concurrency: "unbounded" }),
          reload(round)
        ], { concurrency: "unbounded" })
        answers.push(...batch)
      }
      return answers
    })
    const answers = await Effect.runPromise(program.pipe(Effect.provide(EngineSearch.layer(a))))
    expect(answers).toHaveLength(3000) // none failed
    const web = answers.filter((x) => x.kind === "web").map((x) => x.answer)
    // Every answer is wholly one index's answer, and both indexes answered during the run.
    expect(web.filter((x) => x !== expectedA && x !== expectedB)).toEqual([])
    expect(web.some((x) => x === expectedA)).toBe(true)
    expect(web.some((x) => x === expectedB)).toBe(true)
    const imageAnswers = new Set(answers.filter((x) => x.kind === "images").map((x) => x.answer))
    expect([...imageAnswers].every((x) => x === JSON.stringify(a.searchImages("picture", 10)) || x === JSON.stringify(b.searchImages("picture", 10)))).toBe(true)
  })

  it("serves no results from an empty index until a snapshot arrives", async () => {
    const program = Effect.gen(function*() {
      const web = yield* WebSearch
      const before = yield* web.search({ keywords: "event loop", num: 10 })
      const summary = yield* (yield* SearchEngine).reload(encodeSnapshot(index))
      const after = yield* web.search({ keywords: "event loop", num: 10 })
      return { before, summary, after }
    })
    const { before, summary, after } = await Effect.runPromise(program.pipe(Effect.provide(EngineSearch.layer(EngineSearch.emptyIndex()))))
    expect(before.organic).toEqual([])
    expect(summary).toEqual({ documents: 5, images: 3 })
    expect(after.organic).toHaveLength(2)
  })
})
