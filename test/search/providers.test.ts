/**
 * Each provider client against a loopback stand-in answering in that provider's documented
 * shape: our request mapped to its parameters, its answer mapped to our results (ISO and
 * relative dates), and its error bodies and headers mapped to typed reasons, without the key.
 */
import { Effect, Exit, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeProvider, type ProviderSettings } from "../../core/backends/search/SearchProviders.ts"
import type { SearchQuery } from "../../core/search/SearchQuery.ts"
import type { ProviderError, SearchProvider } from "../../core/search/SearchProvider.ts"
import { type StandIn, type StandInKind, type StandInPage, startStandIn } from "../support/searchProviders.ts"

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0)
const KEY = "secret-key-0123456789abcdef"

const pages: ReadonlyArray<StandInPage> = [
  { title: "Effect documentation", url: "https://www.effect.website/docs/", snippet: "Effect is a TypeScript library", date: "2026-01-10T08:00:00" },
  { title: "Effect on GitHub", url: "https://github.com/Effect-TS/effect", snippet: "Build robust applications", date: "3 days ago" },
  { title: "An undated page", url: "https://example.org/a", snippet: "no date here" }
]
const images = [
  { url: "https://img.example.org/cat.jpg", refUrl: "https://example.org/cats", title: "A cat" },
  { url: "https://img.example.org/dog.jpg", refUrl: "https://example.org/dogs", title: "A dog" }
]

/** Runs with a fixed clock (relative dates) over fetch. */
const run = <A, E>(effect: Effect.Effect<A, E, import("effect/http").HttpClient.HttpClient>) =>
  Effect.runPromiseExit(
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      return yield* effect
    }).pipe(Effect.provide(Layer.mergeAll(FetchHttpClient.layer, TestClock.layer())))
  )

const ok = async <A, E>(effect: Effect.Effect<A, E, import("effect/http").HttpClient.HttpClient>): Promise<A> => {
  const exit = await run(effect)
  if (Exit.isFailure(exit)) throw new Error(`expected success, got ${String(exit.cause)}`)
  return exit.value
}

const failed = async <A>(effect: Effect.Effect<A, ProviderError, import("effect/http").HttpClient.HttpClient>): Promise<ProviderError> => {
  const exit = await run(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (reason === undefined || reason._tag !== "Fail") throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return reason.error
}

const kinds: ReadonlyArray<StandInKind> = ["searxng", "brave", "serper", "tavily", "exa", "iflow"]
const standIns = new Map<StandInKind, StandIn>()
const providerOf = (kind: StandInKind, extra: Partial<ProviderSettings> = {}): Effect.Effect<SearchProvider, never, import("effect/http").HttpClient.HttpClient> =>
  makeProvider({ name: `my-${kind}`, kind, baseUrl: standIns.get(kind)!.url, apiKey: Redacted.make(KEY), weight: 1, timeoutMs: 2000, ...extra })

const query = (extra: Partial<SearchQuery> = {}): SearchQuery => ({ keywords: "effect typescript", num: 10, ...extra })

beforeAll(async () => {
  for (const kind of kinds) standIns.set(kind, await startStandIn(kind, pages, images))
})
afterAll(async () => {
  for (const s of standIns.values()) await s.close()
})

describe("answers mapped to our results", () => {
  for (const kind of kinds) {
    it(`${kind}: titles, links, snippets and ISO dates (absolute and relative)`, async () => {
      const standIn = standIns.get(kind)!
      standIn.behave({ kind: "ok" })
      const answer = await ok(Effect.flatMap(providerOf(kind), (p) => p.web(query())))
      expect(answer.hits.map((h) => h.link)).toEqual(pages.map((p) => p.url))
      expect(answer.hits[0]!.title).toBe("Effect documentation")
      // Brave wraps a word in <strong>; it is stripped.
      expect(answer.hits[0]!.snippet).toMatch(/^Effect is a TypeScript library/)
      expect(answer.hits[0]!.date).toBe("2026-01-10T08:00:00")
      expect(answer.hits[1]!.date).toBe("2026-01-12")
      expect(answer.hits[2]!.date).toBeNull()
      expect(answer.unapplied).toEqual([])
    })
  }

  it("num is honoured and capped at the provider's maximum", async () => {
    const brave = standIns.get("brave")!
    await ok(Effect.flatMap(providerOf("brave"), (p) => p.web(query({ num: 50 }))))
    expect(brave.last!.query.get("count")).toBe("20")
    const answer = await ok(Effect.flatMap(providerOf("serper"), (p) => p.web(query({ num: 2 }))))
    expect(answer.hits).toHaveLength(2)
    expect(standIns.get("serper")!.last!.body).toMatchObject({ q: "effect typescript", num: 2 })
  })

  it("image search where the provider has one; Tavily and Exa say unsupported", async () => {
    for (const kind of ["searxng", "brave", "serper", "iflow"] as const) {
      const answer = await ok(Effect.flatMap(providerOf(kind), (p) => p.image(query())))
      expect(answer.hits, kind).toEqual(images)
    }
    for (const kind of ["tavily", "exa"] as const) {
      const error = await failed(Effect.flatMap(providerOf(kind), (p) => p.image(query())))
      expect(error.reason).toBe("unsupported")
    }
  })
})

describe("our options mapped to each provider's parameters", () => {
  const all = query({ freshness: "week", language: "de", region: "AT", safeSearch: "strict" })

  it("searxng: time_range, language-region, safesearch 0/1/2, format json", async () => {
    await ok(Effect.flatMap(providerOf("searxng"), (p) => p.web(all)))
    const q = standIns.get("searxng")!.last!.query
    expect(Object.fromEntries(q)).toMatchObject({ q: "effect typescript", format: "json", time_range: "week", language: "de-AT", safesearch: "2", categories: "general" })
    // A date range SearXNG cannot express: filtered our side, and said so.
    const ranged = await ok(Effect.flatMap(providerOf("searxng"), (p) => p.web(query({ freshness: { from: "2026-01-01", to: "2026-01-11" } }))))
    expect(ranged.unapplied).toEqual([expect.objectContaining({ option: "freshness", handling: "filtered" })])
    expect(standIns.get("searxng")!.last!.query.get("time_range")).toBeNull()
  })

  it("brave: freshness pw and date ranges, search_lang, country, safesearch, token header", async () => {
    await ok(Effect.flatMap(providerOf("brave"), (p) => p.web(all)))
    const last = standIns.get("brave")!.last!
    expect(Object.fromEntries(last.query)).toMatchObject({ freshness: "pw", search_lang: "de", country: "AT", safesearch: "strict" })
    expect(last.headers["x-subscription-token"]).toBe(KEY)
    await ok(Effect.flatMap(providerOf("brave"), (p) => p.web(query({ freshness: { from: "2025-01-01", to: "2025-06-30" } }))))
    expect(standIns.get("brave")!.last!.query.get("freshness")).toBe("2025-01-01to2025-06-30")
  })

  it("serper: tbs qdr and cdr, hl, gl; no safe search, said so", async () => {
    const answer = await ok(Effect.flatMap(providerOf("serper"), (p) => p.web(all)))
    const last = standIns.get("serper")!.last!
    expect(last.body).toMatchObject({ q: "effect typescript", tbs: "qdr:w", hl: "de", gl: "at" })
    expect(last.headers["x-api-key"]).toBe(KEY)
    expect(answer.unapplied).toEqual([{ option: "safeSearch", handling: "ignored", detail: "Serper has no safe-search parameter" }])
    await ok(Effect.flatMap(providerOf("serper"), (p) => p.web(query({ freshness: { from: "2025-01-01", to: "2025-06-30" } }))))
    expect(standIns.get("serper")!.last!.body).toMatchObject({ tbs: "cdr:1,cd_min:1/1/2025,cd_max:6/30/2025" })
  })

  it("tavily: time_range, start_date/end_date, bearer key; language, region, safeSearch reported ignored", async () => {
    const answer = await ok(Effect.flatMap(providerOf("tavily"), (p) => p.web(all)))
    const last = standIns.get("tavily")!.last!
    expect(last.body).toMatchObject({ query: "effect typescript", max_results: 10, time_range: "week" })
    expect(last.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(answer.unapplied.map((u) => [u.option, u.handling])).toEqual([["language", "ignored"], ["region", "ignored"], ["safeSearch", "ignored"]])
    await ok(Effect.flatMap(providerOf("tavily"), (p) => p.web(query({ freshness: { from: "2025-01-01", to: "2025-06-30" } }))))
    expect(standIns.get("tavily")!.last!.body).toMatchObject({ start_date: "2025-01-01", end_date: "2025-06-30" })
  })

  it("exa: startPublishedDate from our clock, numResults, x-api-key, highlights as snippet", async () => {
    const answer = await ok(Effect.flatMap(providerOf("exa"), (p) => p.web(query({ freshness: "week", num: 3 }))))
    const last = standIns.get("exa")!.last!
    expect(last.body).toMatchObject({ query: "effect typescript", numResults: 3, startPublishedDate: "2026-01-08T00:00:00.000Z" })
    expect(last.headers["x-api-key"]).toBe(KEY)
    expect(answer.hits[0]!.snippet).toBe("Effect is a TypeScript library")
  })

  it("iflow: our options forwarded to a Periscope peer; not to the seed's provider", async () => {
    const peer = await ok(Effect.flatMap(providerOf("iflow"), (p) => p.web(all)))
    expect(standIns.get("iflow")!.last!.body).toEqual({ keywords: "effect typescript", num: 10, freshness: "week", language: "de", region: "AT", safeSearch: "strict" })
    expect(standIns.get("iflow")!.last!.path).toBe("/api/search/webSearch")
    expect(peer.unapplied).toEqual([])
    const seed = await ok(Effect.flatMap(providerOf("iflow", { forwardOptions: false }), (p) => p.web(all)))
    expect(standIns.get("iflow")!.last!.body).toEqual({ keywords: "effect typescript", num: 10 })
    expect(seed.unapplied.map((u) => [u.option, u.handling])).toEqual([["freshness", "filtered"], ["language", "ignored"], ["region", "ignored"], ["safeSearch", "ignored"]])
  })
})

describe("errors mapped to typed reasons, keys never in messages", () => {
  for (const kind of kinds) {
    it(`${kind}: 429 rate_limited, 403 blocked, CAPTCHA blocked, bad key unauthorized, 500 unavailable, not JSON bad_response`, async () => {
      const standIn = standIns.get(kind)!
      try {
        standIn.behave({ kind: "rateLimited", retryAfter: "30" })
        const limited = await failed(Effect.flatMap(providerOf(kind), (p) => p.web(query())))
        expect(limited.reason).toBe("rate_limited")
        expect(limited.retryAfterMs).toBe(30_000)
        expect(limited.provider).toBe(`my-${kind}`)

        standIn.behave({ kind: "forbidden" })
        expect((await failed(Effect.flatMap(providerOf(kind), (p) => p.web(query())))).reason).toBe("blocked")

        standIn.behave({ kind: "captcha" })
        const captcha = await failed(Effect.flatMap(providerOf(kind), (p) => p.web(query())))
        expect([captcha.reason, captcha.captcha]).toEqual(["blocked", true])

        standIn.behave({ kind: "unauthorized" })
        const refused = await failed(Effect.flatMap(providerOf(kind), (p) => p.web(query())))
        expect(refused.reason).toBe("unauthorized")

        standIn.behave({ kind: "serverError" })
        expect((await failed(Effect.flatMap(providerOf(kind), (p) => p.web(query())))).reason).toBe("unavailable")

        standIn.behave({ kind: "notJson" })
        const notJson = await failed(Effect.flatMap(providerOf(kind), (p) => p.web(query())))
        expect(notJson.reason).toBe("bad_response")

        for (const e of [limited, captcha, refused, notJson]) expect(JSON.stringify(e) + e.message).not.toContain(KEY)
      } finally {
        standIn.behave({ kind: "ok" })
      }
    })
  }

  it("brave: without Retry-After, the reset of the exhausted X-RateLimit window", async () => {
    const brave = standIns.get("brave")!
    brave.behave({ kind: "rateLimited" })
    try {
      const error = await failed(Effect.flatMap(providerOf("brave"), (p) => p.web(query())))
      expect(error.retryAfterMs).toBe(1000)
      expect(error.message).toContain("Request rate limit exceeded for plan.")
    } finally {
      brave.behave({ kind: "ok" })
    }
  })

  it("an unreachable provider is unavailable", async () => {
    const error = await failed(Effect.flatMap(makeProvider({ name: "gone", kind: "brave", baseUrl: "http://127.0.0.1:1", weight: 1, timeoutMs: 1000 }), (p) => p.web(query())))
    expect(error.reason).toBe("unavailable")
  })
})
