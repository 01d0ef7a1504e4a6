/**
 * Tavily's own JS client (@tavily/core) against /tavily on a real server in this process:
 * `tavily({ apiKey, apiBaseURL: "<server>/tavily" })`, as a user switches an agent over. The
 * index is the fixture's pages fused with a SearXNG stand-in listing pages of a loopback site
 * (on two hosts) and one on example.org; webFetch may read the loopback site.
 */
import { tavily } from "@tavily/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { InProcessServer } from "../support/servers.ts"
import { ALPHA_PARAGRAPHS, sourcesEchoChat, startWireServer, startWireWorld, WIRE_KEY, type WireWorld } from "./wireServers.ts"

let world: WireWorld
let server: InProcessServer
let noModel: InProcessServer

beforeAll(async () => {
  world = await startWireWorld()
  server = await startWireServer({ config: world.config, chat: sourcesEchoChat })
  // No chat model at all: the built-in grounded model off, no upstream.
  noModel = await startWireServer({ config: { ...world.config, chat: { grounded: false } } })
})

afterAll(async () => {
  await server?.close()
  await noModel?.close()
  await world?.close()
})

const client = (base = server.url, apiKey = WIRE_KEY) => tavily({ apiKey, apiBaseURL: `${base}/tavily` })

const hostOf = (url: string) => new URL(url).hostname

describe("@tavily/core search", () => {
  it("gets results in Tavily's shape: title, url, content, score falling with rank, response time, request id", async () => {
    const lane = server.answeredInLane()
    const answer = await client().search("telescope", { maxResults: 5 })
    expect(answer.query).toBe("telescope")
    expect(answer.results.length).toBeGreaterThan(0)
    expect(answer.results.length).toBeLessThanOrEqual(5)
    for (const result of answer.results) {
      expect(result).toMatchObject({ title: expect.any(String), url: expect.stringMatching(/^https?:\/\//), content: expect.any(String), score: expect.any(Number) })
      expect(result.score).toBeGreaterThan(0.5)
      expect(result.score).toBeLessThanOrEqual(1)
      expect(result.rawContent).toBeNull()
    }
    const scores = answer.results.map((r) => r.score)
    expect(scores).toEqual([...scores].sort((a, b) => b - a))
    expect(answer.results.find((r) => r.url === world.alphaUrl)?.publishedDate).toBe("2026-11-20")
    expect(answer.responseTime).toBeGreaterThanOrEqual(0)
    expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.images).toEqual([])
    expect(answer.answer).toBeNull()
    // The hot route went through the Node server's express lane.
    expect(server.answeredInLane()).toBe(lane + 1)
  })

  it("includeRawContent reads each page's main content through webFetch (Markdown; text without its markup)", async () => {
    const markdown = await client().search("telescope", { includeRawContent: "markdown", includeDomains: [hostOf(world.alphaUrl)] })
    expect(markdown.results.map((r) => r.url)).toEqual([world.alphaUrl])
    const raw = markdown.results[0]!.rawContent!
    expect(raw).toContain("# Alpha telescope")
    expect(raw).toContain(ALPHA_PARAGRAPHS[1])
    // The page's navigation and footer are not its main content.
    expect(raw).not.toContain("Copyright footer text")
    const text = await client().search("telescope", { includeRawContent: "text", includeDomains: [hostOf(world.alphaUrl)] })
    expect(text.results[0]!.rawContent).toContain(ALPHA_PARAGRAPHS[2])
    expect(text.results[0]!.rawContent).not.toContain("# Alpha")
  })

  it("a page that cannot be read has rawContent null, and the answer says so", async () => {
    const response = await fetch(`${server.url}/tavily/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${WIRE_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "gamma", include_raw_content: true, include_domains: ["example.org"] })
    })
    const body = await response.json() as any
    expect(response.status).toBe(200)
    expect(body.results.map((r: any) => [r.url, r.raw_content])).toEqual([[world.gammaUrl, null]])
    expect(body.notes).toEqual([expect.stringMatching(/^1 of 1 pages could not be read/)])
  })

  it("includeDomains keeps only those sites, excludeDomains leaves sites out (the stand-in ignores site: words: the filter is ours)", async () => {
    const only = await client().search("telescope reactor", { maxResults: 10, includeDomains: ["localhost"] })
    expect(only.results.map((r) => r.url)).toEqual([world.betaUrl])
    const without = await client().search("telescope reactor search", { maxResults: 10, excludeDomains: ["periscope.invalid", "example.org"] })
    expect(without.results.length).toBeGreaterThan(0)
    for (const r of without.results) expect(["127.0.0.1", "localhost"]).toContain(hostOf(r.url))
    // The sources were asked with the words too: the stand-in saw them in its query.
    expect(world.standIn.last?.query.get("q")).toBe("telescope reactor search -site:periscope.invalid -site:example.org")
  })

  it("searchDepth advanced: each result's content is the page's passages most relevant to the query", async () => {
    const basic = await client().search("cooling detector infrared", { includeDomains: [hostOf(world.alphaUrl)] })
    expect(basic.results[0]!.content).toBe("The alpha telescope collects light from distant galaxies.")
    const advanced = await client().search("cooling detector infrared", { searchDepth: "advanced", chunksPerSource: 1, includeDomains: [hostOf(world.alphaUrl)] })
    expect(advanced.results[0]!.content).toContain("cooling system keeps the detector")
  })

  it("includeAnswer: grounded chat with the default model, its sources kept to includeDomains", async () => {
    const answer = await client().search("beta reactor", { includeAnswer: true, includeDomains: ["localhost"] })
    expect(answer.answer).toBe(`Grounded on: ${world.betaUrl}`)
    expect(answer.results.map((r) => r.url)).toEqual([world.betaUrl])
  })

  it("includeAnswer with no chat model configured: answer null and a note", async () => {
    const answer = await client(noModel.url).search("telescope", { includeAnswer: "advanced" })
    expect(answer.answer).toBeNull()
    expect(answer.results.length).toBeGreaterThan(0)
    const response = await fetch(`${noModel.url}/tavily/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${WIRE_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "telescope", include_answer: true })
    })
    expect((await response.json() as any).notes).toEqual(["include_answer: no chat model is configured on this server, so answer is null"])
  })

  it("includeImages with descriptions: an image search with the same query", async () => {
    const answer = await client().search("telescope", { includeImages: true, includeImageDescriptions: true, excludeDomains: ["periscope.invalid"] })
    expect(answer.images).toEqual([{ url: "https://example.org/img/telescope.png", description: "A telescope" }])
  })

  it("errors come back as Tavily's detail.error, which the client throws", async () => {
    await expect(client(server.url, "not-a-key").search("telescope")).rejects.toThrow("Authorization: invalid API key")
    await expect(client().search("telescope", { maxResults: 50 })).rejects.toThrow("max_results: must be an integer from 0 to 20, got 50")
    // The client sends options it does not know as they are: a misspelt one is named, not ignored.
    await expect(client().search("telescope", { include_domain: ["a.com"] })).rejects.toThrow("include_domain: is not a known key (did you mean \"include_domains\"?)")
  })
})

describe("@tavily/core extract", () => {
  it("reads the good URLs and lists the refused one in failedResults, without failing the others", async () => {
    const refused = "http://169.254.169.254/latest/meta-data/"
    const answer = await client().extract([world.alphaUrl, world.betaUrl, refused], { format: "text", includeImages: true })
    expect(answer.results.map((r) => r.url)).toEqual([world.alphaUrl, world.betaUrl])
    expect(answer.results[0]!.rawContent).toContain(ALPHA_PARAGRAPHS[0])
    expect(answer.results[0]!.rawContent).not.toContain("#")
    expect(answer.results[0]!.images).toEqual([`${world.site.origin}/alpha-diagram.png`])
    expect(answer.results[1]!.rawContent).toContain("molten salt")
    expect(answer.failedResults).toEqual([{ url: refused, error: expect.stringMatching(/link-local/) }])
    expect(answer.responseTime).toBeGreaterThanOrEqual(0)
  })

  it("with a query: each page's passages most relevant to it", async () => {
    const answer = await client().extract([world.alphaUrl], { query: "tour on Saturdays", chunksPerSource: 1 })
    expect(answer.results[0]!.rawContent).toBe(ALPHA_PARAGRAPHS[2])
  })
})

describe("older clients: the key as api_key in the body", () => {
  it("is admitted like the bearer key, and a wrong one is refused in Tavily's shape", async () => {
    const post = (body: unknown) =>
      fetch(`${server.url}/tavily/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    const ok = await post({ api_key: WIRE_KEY, query: "telescope", max_results: 1 })
    expect(ok.status).toBe(200)
    expect((await ok.json() as any).results).toHaveLength(1)
    const wrong = await post({ api_key: "tvly-not-ours", query: "telescope" })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get("www-authenticate")).toBe("Bearer")
    expect(await wrong.json()).toEqual({ detail: { error: "Authorization: invalid API key" } })
  })
})
