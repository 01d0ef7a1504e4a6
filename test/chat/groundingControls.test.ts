/**
 * Grounded chat's controls over real sockets: our server, the OpenAI model stand-in, a SearXNG
 * stand-in that records what it was asked (and ignores the domains, so the filter seen is
 * ours), and a site whose long page has its relevant passage deep inside. Allowed domains
 * (OpenAI's filters shape), recency, max_results, OpenRouter's web plugin, the web_search
 * server tool's own domains and freshness, highlights in place of a page's opening, and bad
 * values refused with their field.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { MockUpstream, Scenario } from "../support/mockUpstream.ts"
import type { StandIn } from "../support/searchProviders.ts"
import { authHeaders, type RunningServer } from "../support/servers.ts"
import { type GroundedWorld, htmlPage, type Site, startGroundedWorld } from "./groundingHarness.ts"

let upstream: MockUpstream
const queue: Array<Scenario> = []
let searx: StandIn
let site: Site
let server: RunningServer
let world: GroundedWorld

const filler = (label: string, n: number) =>
  Array.from({ length: n }, (_, i) => `<p>${label} ${i + 1} describes the history of the harbour and its ships in some detail.</p>`).join("")

const pagesOf = (siteUrl: string) => [
  { title: "Harbour guide", url: `${siteUrl}/guide`, snippet: "A guide to the harbour.", date: "2026-01-02" },
  { title: "Tides elsewhere", url: "https://tides.example/today", snippet: "Tide tables for the harbour." },
  { title: "Docs tides", url: "https://docs.tides.example/high-water", snippet: "When high water comes to the harbour." },
  { title: "Ferries", url: "https://ferries.example/harbour", snippet: "Ferries leave the harbour hourly." }
]

beforeAll(async () => {
  world = await startGroundedWorld({
    "/guide": htmlPage("Harbour guide", `${filler("Section", 60)}<p>The lighthouse keeper lights the lamp at dusk. Ships wait outside the bar until high tide.</p>${filler("Part", 20)}`)
  }, pagesOf, () => queue.shift() ?? { content: "Noted [1]." })
  ;({ upstream, site, searx, server } = world)
})
afterAll(async () => {
  await world?.close()
})
beforeEach(() => {
  queue.length = 0
  searx.pages = pagesOf(site.url)
})

const ask = (content: string, extra: Record<string, unknown> = {}) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }], ...extra })
  })

const chatBodies = () => upstream.requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body)
const hostsOf = (results: ReadonlyArray<{ readonly url: string }>) => results.map((r) => new URL(r.url).hostname).sort()

describe("web_search_options", () => {
  it("filters.allowed_domains: the provider asked for those sites, and only they are given, subdomains included", async () => {
    const body = await (await ask("high water in the harbour", { web_search_options: { filters: { allowed_domains: ["tides.example"] } } })).json() as any
    expect(body.periscope_grounding).toMatchObject({ retrieval: "ok", sources: 2 })
    expect(hostsOf(body.search_results)).toEqual(["docs.tides.example", "tides.example"])
    expect(searx.last!.query.get("q")).toBe("high water in the harbour site:tides.example")
  })

  it("search_recency_filter: the search's freshness; max_results: how many sources", async () => {
    const body = await (await ask("harbour", { web_search_options: { search_recency_filter: "week", max_results: 2 } })).json() as any
    expect(searx.last!.query.get("time_range")).toBe("week")
    expect(body.search_results).toHaveLength(2)
    expect(body.periscope_grounding.sources).toBe(2)
  })

  it("a read page is given as its passages most relevant to the question, not its opening", async () => {
    await ask("when does the lighthouse keeper light the lamp", { web_search_options: { search_context_size: "medium", filters: { allowed_domains: ["127.0.0.1"] } } })
    const system: string = chatBodies().at(-1).messages[0].content
    expect(system).toContain("The lighthouse keeper lights the lamp at dusk. Ships wait outside the bar until high tide.")
    // The page's opening is not given: its first 4,000 characters are all about the harbour's history.
    expect(system).not.toContain("Section 1 describes")
    expect(system).not.toContain("Section 2 describes")
  })
})

describe("OpenRouter's web plugin", () => {
  it("grounds the request: its max_results, its search_prompt in place of ours, its engine as the one source", async () => {
    const response = await ask("ferries from the harbour", { plugins: [{ id: "web", max_results: 3, search_prompt: "Some web results follow; use them.", engine: "searx" }] })
    expect(response.status).toBe(200)
    const body = await response.json() as any
    expect(body.periscope_grounding).toMatchObject({ retrieval: "ok", sources: 3 })
    const sent = chatBodies().at(-1)
    expect(sent.plugins).toBeUndefined()
    expect(sent.messages[0].content).toMatch(/^Some web results follow; use them\.\n\n\[1\] /)
  })

  it("an engine that is no source here: every source is searched, and the note says so", async () => {
    const body = await (await ask("ferries", { plugins: [{ id: "web", engine: "exa" }] })).json() as any
    expect(body.periscope_grounding.retrieval).toBe("ok")
    expect(body.periscope_grounding.note).toContain("engine exa is not a search source here (local, searx); every source was searched")
  })
})

describe("the web_search server tool", () => {
  const call = (args: Record<string, unknown>): Scenario => ({ toolCalls: [{ name: "web_search", arguments: JSON.stringify(args) }] })
  const toolResult = () => chatBodies().at(-1).messages.at(-1).content as string

  it("takes the model's domains and freshness", async () => {
    queue.push(call({ query: "tides", allowed_domains: ["tides.example"], blocked_domains: ["docs.tides.example"], freshness: "month" }))
    const body = await (await ask("what are the tides", { tools: [{ type: "web_search" }] })).json() as any
    expect(body.periscope_grounding).toMatchObject({ tool_calls: 1 })
    expect(searx.last!.query.get("q")).toBe("tides site:tides.example -site:docs.tides.example")
    expect(searx.last!.query.get("time_range")).toBe("month")
    const result = toolResult()
    expect(result).toMatch(/^Results for "tides" \(on tides\.example; not on docs\.tides\.example; from the past month\); cite them by number as \[k\]:/)
    expect(result).toContain("https://tides.example/today")
    expect(result).not.toContain("docs.tides.example/high-water")
  })

  it("stays within the request's allowed domains, and tells the model when its own lie outside them", async () => {
    queue.push(call({ query: "ferries", allowed_domains: ["ferries.example"] }))
    await ask("ferries", { tools: [{ type: "web_search" }], web_search_options: { filters: { allowed_domains: ["tides.example"] } } })
    expect(toolResult()).toBe("allowed_domains: none of these is among the sites this conversation may search (tides.example).")
    queue.push(call({ query: "high water", allowed_domains: ["docs.tides.example"] }))
    await ask("high water", { tools: [{ type: "web_search" }], web_search_options: { filters: { allowed_domains: ["tides.example"] } } })
    expect(searx.last!.query.get("q")).toBe("high water site:docs.tides.example")
  })

  it("bad arguments are told to the model", async () => {
    queue.push(call({ query: "x", allowed_domains: ["not a domain"] }))
    await ask("x", { tools: [{ type: "web_search" }] })
    expect(toolResult()).toBe("web_search: \"allowed_domains[0]\" must be a domain name such as example.com, got \"not a domain\"")
    queue.push(call({ query: "x", freshness: "hour" }))
    await ask("x", { tools: [{ type: "web_search" }] })
    expect(toolResult()).toBe("web_search: \"freshness\" must be one of day, week, month, year")
  })

  it("offers the model the new parameters", async () => {
    queue.push({ content: "ok" })
    await ask("x", { tools: [{ type: "web_search" }] })
    const tool = chatBodies().at(-1).tools.find((t: any) => t.function.name === "web_search")
    expect(Object.keys(tool.function.parameters.properties)).toEqual(["query", "allowed_domains", "blocked_domains", "freshness"])
  })
})

describe("bad values: 400 naming the field", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ["a domain that is not one", { web_search_options: { filters: { allowed_domains: ["tides.example", "not a domain"] } } }, "web_search_options.filters.allowed_domains[1]"],
    ["too many domains", { web_search_options: { filters: { allowed_domains: Array.from({ length: 21 }, (_, i) => `d${i}.example`) } } }, "web_search_options.filters.allowed_domains"],
    ["an hour's recency", { web_search_options: { search_recency_filter: "hour" } }, "web_search_options.search_recency_filter"],
    ["max_results 0", { web_search_options: { max_results: 0 } }, "web_search_options.max_results"],
    ["another plugin", { plugins: [{ id: "file-parser" }] }, "plugins[0].id"],
    ["the plugin's max_results 21", { plugins: [{ id: "web", max_results: 21 }] }, "plugins[0].max_results"],
    ["an engine name with spaces", { plugins: [{ id: "web", engine: "my engine" }] }, "plugins[0].engine"]
  ]
  for (const [name, extra, param] of cases) {
    it(name, async () => {
      const response = await ask("harbour", extra)
      expect(response.status).toBe(400)
      const body = await response.json() as any
      expect(body.error).toMatchObject({ type: "invalid_request_error", param })
      expect(body.error.message.startsWith(`${param}: `)).toBe(true)
    })
  }
})
