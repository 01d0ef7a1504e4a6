/**
 * Live web search over HTTP: a Periscope Node server whose config lists providers served
 * by loopback stand-ins. The seed's request still gets the seed's envelope; options,
 * explain, all-failing (502, code "500") and a client going away (every upstream request
 * aborted) as a client sees them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { type LiveServer, postSearch, startLiveServer } from "./liveSearchServer.ts"

const docs: ReadonlyArray<IndexDocument> = Array.from({ length: 14 }, (_, i) => ({
  url: `https://local.example/page-${i}`,
  title: `Local page ${i} about rivers`,
  text: `rivers and lakes, page ${i}`,
  date: "2026-01-10"
}))

const BRAVE_KEY = "brave-secret-key-9876543210"
let brave: StandIn
let serper: StandIn
let server: LiveServer
let localOnly: LiveServer

beforeAll(async () => {
  brave = await startStandIn("brave", Array.from({ length: 12 }, (_, i) => ({ title: `Brave rivers ${i}`, url: `https://brave.example/${i}`, snippet: `brave result ${i}` })))
  serper = await startStandIn("serper", [{ title: "Local page 0 about rivers", url: "https://www.local.example/page-0/", snippet: "the same page, seen by serper with a longer snippet than local" }])
  process.env.PERISCOPE_TEST_BRAVE_KEY = BRAVE_KEY
  server = await startLiveServer({
    deadlineMs: 1500,
    providers: [
      { name: "brave", kind: "brave", baseUrl: brave.url, apiKeyEnv: "PERISCOPE_TEST_BRAVE_KEY", weight: 1, timeoutMs: 1000 },
      { name: "serper", kind: "serper", baseUrl: serper.url }
    ]
  }, { _tag: "Layer", layer: FixtureSearch.layer(docs) })
  localOnly = await startLiveServer({}, { _tag: "Layer", layer: FixtureSearch.layer(docs) })
})
afterAll(async () => {
  await server?.close()
  await localOnly?.close()
  await brave?.close()
  await serper?.close()
  delete process.env.PERISCOPE_TEST_BRAVE_KEY
})

describe("the seed's request is unaffected", () => {
  it("no provider configured: exactly the local answer, num default 10, extra null", async () => {
    const { status, body } = await postSearch(localOnly.url, "webSearch", { keywords: "rivers" })
    expect(status).toBe(200)
    expect(body).toEqual({ success: true, code: "200", message: "success", exception: null, data: FixtureSearch.make(docs).web({ keywords: "rivers", num: 10 }), extra: null })
    expect(body.data.organic).toHaveLength(10)
  })

  it("providers configured: the same envelope, 10 fused results, positions 1..10, extra null", async () => {
    const { status, body } = await postSearch(server.url, "webSearch", { keywords: "rivers" })
    expect(status).toBe(200)
    expect(Object.keys(body)).toEqual(["success", "code", "message", "exception", "data", "extra"])
    expect([body.success, body.code, body.message, body.exception, body.extra]).toEqual([true, "200", "success", null, null])
    expect(body.data.query).toBe("rivers")
    expect(body.data.organic).toHaveLength(10)
    expect(body.data.organic.map((r: any) => r.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    // Listed by local and serper: first, once, with the longer snippet.
    expect(body.data.organic[0]).toMatchObject({ link: "https://local.example/page-0", snippet: "the same page, seen by serper with a longer snippet than local" })
    expect(brave.last!.headers["x-subscription-token"]).toBe(BRAVE_KEY)
  })
})

describe("options and provenance", () => {
  it("explain: per source status, ms and results; per result its sources and ranks", async () => {
    const { body } = await postSearch(server.url, "webSearch", { keywords: "rivers lakes", num: 5, explain: true })
    expect(body.data.organic).toHaveLength(5)
    expect(body.extra.sources.map((s: any) => [s.name, s.kind, s.status])).toEqual([["local", "local", "ok"], ["brave", "brave", "ok"], ["serper", "serper", "ok"]])
    for (const s of body.extra.sources) expect(s.ms).toBeGreaterThanOrEqual(0)
    expect(body.extra.results).toHaveLength(5)
    expect(body.extra.results[0]).toMatchObject({ position: 1, sources: expect.arrayContaining([{ source: "local", rank: 1 }]) })
    expect(["miss", "hit"]).toContain(body.extra.cache)
    expect(JSON.stringify(body)).not.toContain(BRAVE_KEY)
  })

  it("a failing provider leaves a partial answer; explain names it", async () => {
    brave.behave({ kind: "serverError" })
    try {
      const { status, body } = await postSearch(server.url, "webSearch", { keywords: "partial rivers", explain: true })
      expect(status).toBe(200)
      expect(body.success).toBe(true)
      expect(body.extra.sources.find((s: any) => s.name === "brave")).toMatchObject({ status: "failed", error: { reason: "unavailable" } })
      expect(body.data.organic.length).toBeGreaterThan(0)
    } finally {
      brave.behave({ kind: "ok" })
    }
  })

  it("every selected source failing: HTTP 502, code \"500\", the reasons in the message", async () => {
    brave.behave({ kind: "rateLimited", retryAfter: "1" })
    serper.behave({ kind: "unauthorized" })
    try {
      const { status, body } = await postSearch(server.url, "webSearch", { keywords: "all fail", sources: ["brave", "serper"] })
      expect(status).toBe(502)
      expect(body).toMatchObject({ success: false, code: "500", data: null, exception: { type: "BackendError" } })
      expect(body.message).toMatch(/every search source failed: brave: rate_limited .*serper: unauthorized/)
    } finally {
      brave.behave({ kind: "ok" })
      serper.behave({ kind: "ok" })
      // Wait out the 1 s suspension brave's 429 asked for.
      await new Promise((r) => setTimeout(r, 1100))
    }
  })

  it("image search with options", async () => {
    brave.images = [{ url: "https://img.example/r.jpg", refUrl: "https://brave.example/r", title: "A river" }]
    const { status, body } = await postSearch(server.url, "imageSearch", { keywords: "river", sources: ["brave"], safeSearch: "moderate" })
    expect(status).toBe(200)
    expect(body.data).toEqual([{ url: "https://img.example/r.jpg", refUrl: "https://brave.example/r", title: "A river" }])
    expect(brave.last!.query.get("safesearch")).toBe("strict")
  })
})

describe("cancellation", () => {
  it("a client that goes away aborts every upstream request", async () => {
    brave.behave({ kind: "hang" })
    serper.behave({ kind: "hang" })
    const braveAborted = brave.aborted, serperAborted = serper.aborted
    const braveSeen = brave.requests, serperSeen = serper.requests
    const controller = new AbortController()
    const request = postSearch(server.url, "webSearch", { keywords: "going away" }, controller.signal).catch((e) => e)
    const until = Date.now() + 3000
    while ((brave.requests === braveSeen || serper.requests === serperSeen) && Date.now() < until) await new Promise((r) => setTimeout(r, 5))
    controller.abort()
    await request
    try {
      await brave.waitAborted(braveAborted + 1, 1000)
      await serper.waitAborted(serperAborted + 1, 1000)
    } finally {
      brave.behave({ kind: "ok" })
      serper.behave({ kind: "ok" })
    }
  })
})
