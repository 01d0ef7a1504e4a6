/**
 * Domain filters (includeDomains, excludeDomains): each provider asked in its own terms
 * (what every loopback stand-in received), the query limits of those that read `site:`
 * words, our side's check of whatever a source returns (subdomains in, look-alike hosts
 * out), the local engine, `site:` in keywords, image search, and bad values refused by name.
 */
import { Effect, Exit, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { makeProvider } from "../../core/backends/search/SearchProviders.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { domainFilterOf, passesDomainFilter, withSiteWords } from "../../core/search/DomainFilter.ts"
import type { SearchQuery } from "../../core/search/SearchQuery.ts"
import type { SearchProvider } from "../../core/search/SearchProvider.ts"
import { type StandIn, type StandInKind, startStandIn } from "../support/searchProviders.ts"
import { type LiveServer, postSearch, startLiveServer } from "./liveSearchServer.ts"

const kinds: ReadonlyArray<StandInKind> = ["searxng", "brave", "serper", "tavily", "exa", "iflow"]
const standIns = new Map<StandInKind, StandIn>()
/** Pages on the asked sites, a subdomain of one, a look-alike host and an excluded path: the stand-ins ignore the filter. */
const pages = [
  { title: "Docs rivers", url: "https://docs.rivers.example/guide", snippet: "rivers guide" },
  { title: "Rivers home", url: "https://rivers.example/", snippet: "rivers home" },
  { title: "Look-alike", url: "https://notrivers.example/rivers", snippet: "rivers elsewhere" },
  { title: "Lakes", url: "https://lakes.example/rivers", snippet: "rivers and lakes" },
  { title: "Lakes blog", url: "https://lakes.example/blog/rivers", snippet: "rivers in the blog" }
]

beforeAll(async () => {
  for (const kind of kinds) standIns.set(kind, await startStandIn(kind, pages, [
    { url: "https://img.example/a.jpg", refUrl: "https://rivers.example/photos", title: "A river" },
    { url: "https://img.example/b.jpg", refUrl: "https://elsewhere.example/photos", title: "Another river" }
  ]))
})
afterAll(async () => {
  for (const s of standIns.values()) await s.close()
})

const run = <A, E>(effect: Effect.Effect<A, E, import("effect/http").HttpClient.HttpClient>) =>
  Effect.runPromiseExit(effect.pipe(Effect.provide(FetchHttpClient.layer))).then((exit) => {
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    return exit.value
  })

const providerOf = (kind: StandInKind, forwardOptions?: boolean): Effect.Effect<SearchProvider, never, import("effect/http").HttpClient.HttpClient> =>
  makeProvider({ name: kind, kind, baseUrl: standIns.get(kind)!.url, weight: 1, timeoutMs: 2000, forwardOptions })

const query = (extra: Partial<SearchQuery> = {}): SearchQuery => ({
  keywords: "rivers",
  num: 10,
  includeDomains: ["rivers.example", "https://lakes.example/"],
  excludeDomains: ["lakes.example/blog", "ads.example"],
  ...extra
})

describe("each provider asked in its own terms", () => {
  it("Brave, SearXNG: site: words with OR for the sites to include and -site: for those to leave out", async () => {
    for (const kind of ["brave", "searxng"] as const) {
      const answer = await run(Effect.flatMap(providerOf(kind), (p) => p.web(query())))
      expect(standIns.get(kind)!.last!.query.get("q"), kind).toBe("rivers site:rivers.example OR site:lakes.example -site:lakes.example/blog -site:ads.example")
      expect(answer.unapplied, kind).toEqual([])
    }
  })

  it("Serper: the same words in its body's q", async () => {
    await run(Effect.flatMap(providerOf("serper"), (p) => p.web(query())))
    expect(standIns.get("serper")!.last!.body).toMatchObject({ q: "rivers site:rivers.example OR site:lakes.example -site:lakes.example/blog -site:ads.example" })
  })

  it("Tavily and Exa: their own parameters, host names; a site with a path is checked on our side", async () => {
    const tavily = await run(Effect.flatMap(providerOf("tavily"), (p) => p.web(query())))
    expect(standIns.get("tavily")!.last!.body).toMatchObject({ query: "rivers", include_domains: ["rivers.example", "lakes.example"], exclude_domains: ["ads.example"] })
    expect(tavily.unapplied).toEqual([{ option: "excludeDomains", handling: "filtered", detail: "Tavily takes host names: the sites with a path were left out on our side" }])
    const exa = await run(Effect.flatMap(providerOf("exa"), (p) => p.web(query({ excludeDomains: ["ads.example"] }))))
    expect(standIns.get("exa")!.last!.body).toMatchObject({ query: "rivers", includeDomains: ["rivers.example", "lakes.example"], excludeDomains: ["ads.example"] })
    expect(exa.unapplied).toEqual([])
  })

  it("a Periscope peer gets the lists as fields; the seed's provider (forwardOptions false) gets site: words", async () => {
    const iflow = standIns.get("iflow")!
    await run(Effect.flatMap(providerOf("iflow"), (p) => p.web(query())))
    expect(iflow.last!.body).toEqual({ keywords: "rivers", num: 10, includeDomains: ["rivers.example", "lakes.example"], excludeDomains: ["lakes.example/blog", "ads.example"] })
    await run(Effect.flatMap(providerOf("iflow", false), (p) => p.web(query())))
    expect(iflow.last!.body).toEqual({ keywords: "rivers site:rivers.example OR site:lakes.example -site:lakes.example/blog -site:ads.example", num: 10 })
  })

  it("within a provider's query limit: the sites to include all or none, the others filtered on our side and said so", async () => {
    const many = Array.from({ length: 40 }, (_, i) => `site-number-${i}.example`)
    const answer = await run(Effect.flatMap(providerOf("brave"), (p) => p.web(query({ includeDomains: many, excludeDomains: ["ads.example"] }))))
    const q = standIns.get("brave")!.last!.query.get("q")!
    expect(q).toBe("rivers -site:ads.example")
    expect(answer.unapplied).toEqual([{
      option: "includeDomains",
      handling: "filtered",
      detail: "Brave's query takes at most 400 characters and 50 words: the sites did not fit and were not sent; its results are filtered our side by host"
    }])
    // Google's 32 words: 10 sites (19 words with their ORs) fit beside "rivers", 20 do not.
    await run(Effect.flatMap(providerOf("serper"), (p) => p.web(query({ includeDomains: many.slice(0, 10), excludeDomains: undefined }))))
    expect((standIns.get("serper")!.last!.body as any).q.split(" ")).toHaveLength(20)
    const excluded = await run(Effect.flatMap(providerOf("serper"), (p) => p.web(query({ includeDomains: undefined, excludeDomains: many }))))
    expect((standIns.get("serper")!.last!.body as any).q.split(" ")).toHaveLength(32)
    expect(excluded.unapplied[0]).toMatchObject({ option: "excludeDomains", handling: "filtered", detail: expect.stringContaining("31 of 40 sites were sent as -site:") })
  })

  it("the site: words as the local engine and the providers read them", () => {
    const filter = domainFilterOf({ includeDomains: ["a.example"], excludeDomains: ["b.example"] })!
    expect(withSiteWords("x", filter, { maxChars: 100 })).toEqual({ keywords: "x site:a.example -site:b.example", includeSent: true, excludeSent: 1 })
    expect(withSiteWords("x", filter, { maxChars: 10 })).toEqual({ keywords: "x", includeSent: false, excludeSent: 0 })
  })
})

describe("our side's check", () => {
  it("a domain covers its subdomains and the pages under its path, never a look-alike host", () => {
    const filter = domainFilterOf({ includeDomains: ["rivers.example", "*.lakes.example", "docs.example/guide"] })!
    const passes = (url: string) => passesDomainFilter(url, filter)
    expect(["https://rivers.example/", "https://docs.rivers.example/a", "https://RIVERS.example./x", "https://lakes.example/", "https://docs.example/guide/intro"].map(passes)).toEqual([true, true, true, true, true])
    expect(["https://notrivers.example/", "https://rivers.example.evil/", "https://docs.example/guides", "not a url"].map(passes)).toEqual([false, false, false, false])
  })
})

describe("over HTTP: the federation, the local engine and image search", () => {
  let server: LiveServer
  beforeAll(async () => {
    const builder = new IndexBuilder()
    builder.add([
      { url: "https://rivers.example/local", title: "Local rivers", text: "rivers run to the sea" },
      { url: "https://www.rivers.example/more", title: "More rivers", text: "rivers and their deltas" },
      { url: "https://lakes.example/blog/local", title: "Blog rivers", text: "rivers seen from a blog" },
      { url: "https://other.example/rivers", title: "Other rivers", text: "rivers of another site" }
    ])
    server = await startLiveServer({
      cache: { maxEntries: 0 },
      providers: [
        { name: "brave", kind: "brave", baseUrl: standIns.get("brave")!.url },
        { name: "tavily", kind: "tavily", baseUrl: standIns.get("tavily")!.url }
      ]
    }, { _tag: "Layer", layer: EngineSearch.layer(builder.build()) })
  })
  afterAll(async () => {
    await server?.close()
  })

  const hosts = (organic: ReadonlyArray<{ readonly link: string }>) => organic.map((r) => new URL(r.link).host + new URL(r.link).pathname).sort()

  it("whatever the providers return, only the asked sites are answered; the query echo is the keywords", async () => {
    const { status, body } = await postSearch(server.url, "webSearch", { keywords: "rivers", includeDomains: ["rivers.example", "lakes.example"], excludeDomains: ["lakes.example/blog"] })
    expect(status).toBe(200)
    expect(body.data.query).toBe("rivers")
    expect(hosts(body.data.organic)).toEqual([
      "docs.rivers.example/guide", "lakes.example/rivers", "rivers.example/", "rivers.example/local", "www.rivers.example/more"
    ])
  })

  it("the local engine alone: the filter as its own site: words", async () => {
    const { body } = await postSearch(server.url, "webSearch", { keywords: "rivers", sources: ["local"], excludeDomains: ["rivers.example"] })
    expect(hosts(body.data.organic)).toEqual(["lakes.example/blog/local", "other.example/rivers"])
    const kept = await postSearch(server.url, "webSearch", { keywords: "rivers", sources: ["local"], includeDomains: ["www.rivers.example"] })
    expect(hosts(kept.body.data.organic)).toEqual(["www.rivers.example/more"])
  })

  it("site: in the keywords keeps working as before", async () => {
    const { body } = await postSearch(server.url, "webSearch", { keywords: "rivers site:other.example", sources: ["local"] })
    expect(hosts(body.data.organic)).toEqual(["other.example/rivers"])
    expect(body.extra).toBeNull()
  })

  it("image search: images kept by the page they are on", async () => {
    const { status, body } = await postSearch(server.url, "imageSearch", { keywords: "river", sources: ["brave"], includeDomains: ["rivers.example"] })
    expect(status).toBe(200)
    expect(body.data).toEqual([{ url: "https://img.example/a.jpg", refUrl: "https://rivers.example/photos", title: "A river" }])
    expect(standIns.get("brave")!.last!.query.get("q")).toBe("river site:rivers.example")
  })

  const bad: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ["an empty list", { includeDomains: [] }, "includeDomains: must be an array of 1 to 50 domain names"],
    ["more than 50", { excludeDomains: Array.from({ length: 51 }, (_, i) => `d${i}.example`) }, "excludeDomains: must be an array of 1 to 50 domain names"],
    ["not a domain", { includeDomains: ["rivers.example", "not a domain"] }, "includeDomains[1]: must be a domain name"],
    ["a query in it", { includeDomains: ["rivers.example/?q=1"] }, "includeDomains[0]: must be a domain name"],
    ["not a list", { excludeDomains: "rivers.example" }, "excludeDomains: must be an array of 1 to 50 domain names"]
  ]
  for (const [name, options, message] of bad) {
    it(`400 naming the field: ${name}`, async () => {
      const { status, body } = await postSearch(server.url, "webSearch", { keywords: "rivers", ...options })
      expect(status).toBe(400)
      expect(body).toMatchObject({ success: false, code: "400", data: null })
      expect(body.message.startsWith(message), body.message).toBe(true)
    })
  }
})
