/**
 * The federated search over the local engine and loopback provider stand-ins: fusion,
 * the deadline, suspension and probing (TestClock), all sources failing, cancellation
 * reaching every upstream request, single-flight through the cache, and provenance.
 */
import { Effect, Exit, Fiber, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { federatedLayer, type ProviderSettings } from "../../core/backends/search/SearchProviders.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { defaultFederationSettings, FederatedSearch, type FederationSettings } from "../../core/search/FederatedSearch.ts"
import type { ExplainExtra } from "../../core/search/Provenance.ts"
import type { SearchQuery } from "../../core/search/SearchQuery.ts"
import { ResultCache } from "../../core/store/ResultCache.ts"
import { type StandIn, type StandInKind, startStandIn } from "../support/searchProviders.ts"

const docs: ReadonlyArray<IndexDocument> = [
  { url: "https://local.example/effect-guide", title: "Effect guide", text: "An effect guide for typescript developers", date: "2026-01-14", lang: "de" },
  { url: "https://shared.example/page", title: "Shared page", text: "effect typescript shared between local and providers", date: "2025-06-01" },
  { url: "https://local.example/undated", title: "Undated effect notes", text: "effect notes without a date" }
]

const standIns: Record<string, StandIn> = {}
beforeAll(async () => {
  standIns.brave = await startStandIn("brave", [
    { title: "Brave first", url: "https://brave.example/1", snippet: "brave one", date: "2026-01-13T00:00:00" },
    { title: "Shared page", url: "https://www.shared.example/page/?utm_source=brave", snippet: "the longest snippet of the shared page, from brave, with more words" }
  ])
  standIns.serper = await startStandIn("serper", [
    { title: "Serper first", url: "https://serper.example/1", snippet: "serper one", date: "2 days ago" },
    { title: "Shared page", url: "https://shared.example/page", snippet: "short" }
  ])
  standIns.tavily = await startStandIn("tavily", [{ title: "Tavily first", url: "https://tavily.example/1", snippet: "tavily one" }])
  standIns.exa = await startStandIn("exa", [{ title: "Exa first", url: "https://exa.example/1", snippet: "exa one" }])
})
afterAll(async () => {
  for (const s of Object.values(standIns)) await s.close()
})
afterEach(() => {
  for (const s of Object.values(standIns)) s.behave({ kind: "ok" })
})

const settingsOf = (kinds: ReadonlyArray<StandInKind>, overrides: Partial<ProviderSettings> = {}): Array<ProviderSettings> =>
  kinds.map((kind) => ({ name: kind, kind, baseUrl: standIns[kind]!.url, weight: 1, timeoutMs: 2000, ...overrides }))

const layerOf = (
  providers: ReadonlyArray<ProviderSettings>,
  settings: Partial<FederationSettings> = {},
  cache: Layer.Layer<ResultCache> = ResultCache.layer({ capacity: 100 })
) =>
  federatedLayer(providers, { ...defaultFederationSettings, ...settings }).pipe(
    Layer.provide(Layer.mergeAll(FixtureSearch.layer(docs), cache, FetchHttpClient.layer))
  )

const q = (extra: Partial<SearchQuery> = {}): SearchQuery => ({ keywords: "effect typescript", num: 10, ...extra })

const runIn = <A, E>(layer: Layer.Layer<FederatedSearch>, body: (f: FederatedSearch["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flatMap(Effect.service(FederatedSearch), body).pipe(Effect.provide(layer)))

describe("fusion of the local engine and providers", () => {
  it("one answer from every source, duplicates merged, provenance per source and per result", async () => {
    const answer = await runIn(layerOf(settingsOf(["brave", "serper"])), (f) => f.web(q({ explain: true })))
    const links = answer.data.organic.map((r) => r.link)
    // The shared page is listed by all three: first, once, with the longest snippet.
    expect(links[0]).toBe("https://shared.example/page")
    expect(answer.data.organic[0]!.snippet).toBe("the longest snippet of the shared page, from brave, with more words")
    expect(new Set(links)).toEqual(new Set([
      "https://shared.example/page", "https://local.example/effect-guide", "https://local.example/undated", "https://brave.example/1", "https://serper.example/1"
    ]))
    expect(answer.data.organic.map((r) => r.position)).toEqual([1, 2, 3, 4, 5])
    expect(answer.data.query).toBe("effect typescript")
    const extra = answer.extra as ExplainExtra
    expect(extra.cache).toBe("miss")
    expect(extra.sources.map((s) => [s.name, s.status, s.results])).toEqual([["local", "ok", 3], ["brave", "ok", 2], ["serper", "ok", 2]])
    expect(extra.results[0]!.sources.map((s) => s.source).sort()).toEqual(["brave", "local", "serper"])
    expect(extra.results).toHaveLength(5)
  })

  it("a page several providers list links the cleanest URL any of them gave", async () => {
    // Brave answers first in the fusion's order and gives the page with a tracking parameter; Serper gives it clean.
    const answer = await runIn(layerOf(settingsOf(["brave", "serper"])), (f) => f.web(q({ sources: ["brave", "serper"], explain: true })))
    const shared = answer.data.organic.filter((r) => r.title === "Shared page")
    expect(shared.map((r) => r.link)).toEqual(["https://shared.example/page"])
    expect(shared[0]!.snippet).toBe("the longest snippet of the shared page, from brave, with more words")
    const position = shared[0]!.position
    expect((answer.extra as ExplainExtra).results[position - 1]!.sources).toEqual([{ source: "brave", rank: 2 }, { source: "serper", rank: 2 }])
  })

  it("no option sent: no extra, and the local engine alone answers exactly as before", async () => {
    const withProviders = await runIn(layerOf(settingsOf(["brave"])), (f) => f.web(q()))
    expect(withProviders.extra).toBeNull()
    const localOnly = await runIn(layerOf([]), (f) => f.web(q()))
    const engine = FixtureSearch.make(docs).web(q())
    expect(localOnly.data).toEqual(engine)
    expect(localOnly.extra).toBeNull()
    expect(localOnly.data.organic).toHaveLength(3)
  })

  it("sources picks the backends; an unknown name is refused naming its index", async () => {
    const layer = layerOf(settingsOf(["brave", "serper"]))
    const answer = await runIn(layer, (f) => f.web(q({ sources: ["serper"], explain: true })))
    expect((answer.extra as ExplainExtra).sources.map((s) => s.name)).toEqual(["serper"])
    expect(answer.data.organic.map((r) => r.link)).toEqual(["https://serper.example/1", "https://shared.example/page"])
    const exit = await Effect.runPromiseExit(Effect.flatMap(Effect.service(FederatedSearch), (f) => f.web(q({ sources: ["brave", "bing"] }))).pipe(Effect.provide(layer)))
    expect(Exit.isFailure(exit) && String(exit.cause)).toContain("sources[1]: names no configured source, got \"bing\"; configured: local, brave, serper")
  })

  it("options a source cannot apply are said in extra even without explain; freshness filtered our side; the local index applies language", async () => {
    const answer = await runIn(layerOf(settingsOf(["tavily"])), (f) => f.web(q({ language: "de", freshness: { from: "2026-01-01", to: "2026-12-31" } })))
    expect(answer.extra).toEqual({
      unapplied: [
        { source: "local", option: "freshness", handling: "filtered", detail: "filtered our side by publish date; undated pages left out" },
        { source: "tavily", option: "language", handling: "ignored", detail: "Tavily has no language parameter" }
      ]
    })
    // Local pages outside the range, undated or in another language are gone; Tavily applied freshness itself.
    expect(answer.data.organic.map((r) => r.link)).toEqual(["https://local.example/effect-guide", "https://tavily.example/1"])
    expect(standIns.tavily!.last!.body).toMatchObject({ start_date: "2026-01-01", end_date: "2026-12-31" })
  })

  it("image search skips providers without one and reports them", async () => {
    const answer = await runIn(layerOf(settingsOf(["brave", "exa"])), (f) => f.images(q({ explain: true, sources: ["brave", "exa"] })))
    expect((answer.extra as ExplainExtra).sources.map((s) => [s.name, s.status])).toEqual([["brave", "ok"], ["exa", "unsupported"]])
  })
})

describe("resilience", () => {
  it("a slow provider is cut at the deadline, its request aborted, the rest answered", async () => {
    standIns.exa!.behave({ kind: "slow", ms: 5000 })
    const abortedBefore = standIns.exa!.aborted
    const started = Date.now()
    const answer = await runIn(layerOf(settingsOf(["brave", "exa"]), { deadlineMs: 400 }), (f) => f.web(q({ explain: true })))
    expect(Date.now() - started).toBeLessThan(2000)
    const extra = answer.extra as ExplainExtra
    expect(extra.sources.map((s) => [s.name, s.status, s.error?.reason])).toEqual([["local", "ok", undefined], ["brave", "ok", undefined], ["exa", "failed", "timeout"]])
    expect(answer.data.organic.length).toBeGreaterThan(0)
    await standIns.exa!.waitAborted(abortedBefore + 1)
  })

  it("a 429 provider is suspended for its Retry-After, skipped, then probed again", async () => {
    const brave = standIns.brave!
    brave.behave({ kind: "rateLimited", retryAfter: "120" })
    const before = brave.requests
    const statuses = await Effect.runPromise(Effect.gen(function*() {
      const f = yield* FederatedSearch
      const first = yield* f.web(q({ explain: true }))
      const second = yield* f.web(q({ explain: true, keywords: "effect guide" }))
      yield* TestClock.adjust("119 seconds")
      const third = yield* f.web(q({ explain: true, keywords: "effect notes" }))
      brave.behave({ kind: "ok" })
      yield* TestClock.adjust("2 seconds")
      const probe = yield* f.web(q({ explain: true, keywords: "shared page" }))
      const after = yield* f.web(q({ explain: true, keywords: "guide" }))
      return [first, second, third, probe, after].map((a) => (a.extra as ExplainExtra).sources.find((s) => s.name === "brave")!)
    }).pipe(Effect.provide(Layer.merge(layerOf(settingsOf(["brave"])), TestClock.layer()))))
    expect(statuses.map((s) => s.status)).toEqual(["failed", "suspended", "suspended", "ok", "ok"])
    expect(statuses[0]!.error).toMatchObject({ reason: "rate_limited", retryAfterMs: 120_000 })
    expect(statuses[1]!.suspendedUntil).toBe(new Date(120_000).toISOString())
    // Three requests reached the provider: the one answered 429, the probe, and a normal one after it.
    expect(brave.requests - before).toBe(3)
  })

  it("a CAPTCHA page suspends for an hour, a 403 for 180 s", async () => {
    standIns.serper!.behave({ kind: "captcha" })
    standIns.tavily!.behave({ kind: "forbidden" })
    const until = await Effect.runPromise(Effect.gen(function*() {
      const f = yield* FederatedSearch
      yield* f.web(q())
      const next = yield* f.web(q({ explain: true, keywords: "other" }))
      return (next.extra as ExplainExtra).sources.filter((s) => s.status === "suspended").map((s) => [s.name, s.suspendedUntil])
    }).pipe(Effect.provide(Layer.merge(layerOf(settingsOf(["serper", "tavily"])), TestClock.layer()))))
    expect(until).toEqual([["serper", new Date(3_600_000).toISOString()], ["tavily", new Date(180_000).toISOString()]])
  })

  it("every source failing is a SearchBackendError upstream (HTTP 502) listing the reasons", async () => {
    standIns.brave!.behave({ kind: "serverError" })
    standIns.tavily!.behave({ kind: "unauthorized" })
    const exit = await Effect.runPromiseExit(
      Effect.flatMap(Effect.service(FederatedSearch), (f) => f.web(q({ sources: ["brave", "tavily"] }))).pipe(Effect.provide(layerOf(settingsOf(["brave", "tavily"]))))
    )
    expect(Exit.isFailure(exit)).toBe(true)
    const text = Exit.isFailure(exit) ? String(exit.cause) : ""
    expect(text).toContain("SearchBackendError")
    expect(text).toContain("every search source failed: brave: unavailable")
    expect(text).toContain("tavily: unauthorized")
  })

  it("interrupting the request aborts every upstream request", async () => {
    standIns.brave!.behave({ kind: "hang" })
    standIns.serper!.behave({ kind: "hang" })
    const braveAborted = standIns.brave!.aborted, serperAborted = standIns.serper!.aborted
    const braveSeen = standIns.brave!.requests, serperSeen = standIns.serper!.requests
    await Effect.runPromise(Effect.gen(function*() {
      const f = yield* FederatedSearch
      const fiber = yield* Effect.forkChild(f.web(q({ keywords: "hang please" })))
      // Wait until both providers have the request, then go away like a client would.
      while (standIns.brave!.requests === braveSeen || standIns.serper!.requests === serperSeen) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layerOf(settingsOf(["brave", "serper"]), { deadlineMs: 30_000 }))))
    await standIns.brave!.waitAborted(braveAborted + 1)
    await standIns.serper!.waitAborted(serperAborted + 1)
  })
})

describe("result cache", () => {
  it("100 concurrent identical queries make one upstream call; a later one is a cache hit", async () => {
    standIns.serper!.behave({ kind: "slow", ms: 100 })
    const before = standIns.serper!.requests
    const [answers, later] = await runIn(layerOf(settingsOf(["serper"])), (f) =>
      Effect.all([
        Effect.forEach(Array.from({ length: 100 }, () => q({ keywords: "single flight", explain: true })), (query) => f.web(query), { concurrency: "unbounded" }),
        Effect.void
      ]).pipe(Effect.flatMap(([answers]) => Effect.map(f.web(q({ keywords: "single flight", explain: true })), (later) => [answers, later] as const))))
    expect(standIns.serper!.requests - before).toBe(1)
    const outcomes = answers.map((a) => (a.extra as ExplainExtra).cache)
    expect(outcomes.filter((o) => o === "miss")).toHaveLength(1)
    expect(outcomes.filter((o) => o === "hit")).toHaveLength(99)
    expect((later.extra as ExplainExtra).cache).toBe("hit")
    // Every answer is the same one.
    expect(new Set(answers.map((a) => JSON.stringify(a.data))).size).toBe(1)
  })

  it("explain does not split the cache; other options do", async () => {
    const before = standIns.serper!.requests
    await runIn(layerOf(settingsOf(["serper"])), (f) =>
      Effect.gen(function*() {
        yield* f.web(q({ keywords: "split" }))
        yield* f.web(q({ keywords: "split", explain: true }))
        yield* f.web(q({ keywords: "split", freshness: "day" }))
      }))
    expect(standIns.serper!.requests - before).toBe(2)
  })

  it("a failed answer is not cached; entries expire after their TTL", async () => {
    const serper = standIns.serper!
    serper.behave({ kind: "serverError" })
    const before = serper.requests
    await Effect.runPromise(Effect.gen(function*() {
      const f = yield* FederatedSearch
      yield* Effect.exit(f.web(q({ keywords: "ttl", sources: ["serper"] })))
      serper.behave({ kind: "ok" })
      yield* f.web(q({ keywords: "ttl", sources: ["serper"] }))
      yield* f.web(q({ keywords: "ttl", sources: ["serper"] }))
      yield* TestClock.adjust("601 seconds")
      yield* f.web(q({ keywords: "ttl", sources: ["serper"] }))
    }).pipe(Effect.provide(Layer.merge(layerOf(settingsOf(["serper"])), TestClock.layer()))))
    expect(serper.requests - before).toBe(3)
  })
})
