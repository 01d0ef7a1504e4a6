/**
 * /searxng/search as SearXNG's callers ask it, against real servers in this process: the exact
 * requests of Open WebUI's SearXNG retrieval (backend/open_webui/retrieval/web/searxng.py: GET
 * with q, format, pageno, safesearch, language, time_range, categories, theme, image_proxy, an
 * HTML Accept header and no key) and of LangChain's SearxSearchWrapper (GET with language=en,
 * format=json, q, engines and categories, the caller's headers), SearXNG's documented POST form,
 * and Periscope's own SearXNG provider client federating one Periscope through another.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { startStandIn, type StandIn } from "../support/searchProviders.ts"
import type { InProcessServer } from "../support/servers.ts"
import { startWireServer, startWireWorld, WIRE_KEY, type WireWorld } from "./wireServers.ts"

let world: WireWorld
let failing: StandIn
/** Key required (the default). */
let keyed: InProcessServer
/** searxng.openOnPrivateNetwork: callers on loopback need no key. */
let open: InProcessServer

beforeAll(async () => {
  world = await startWireWorld()
  failing = await startStandIn("searxng")
  failing.behave({ kind: "rateLimited", retryAfter: "120" })
  const providers = [...world.config.search!.providers!, { name: "flaky", kind: "searxng" as const, baseUrl: failing.url }]
  keyed = await startWireServer({ config: { ...world.config, search: { providers } } })
  open = await startWireServer({ config: { ...world.config, searxng: { openOnPrivateNetwork: true } } })
})

afterAll(async () => {
  await keyed?.close()
  await open?.close()
  await failing?.close()
  await world?.close()
})

/** Open WebUI's request, parameter for parameter and header for header. */
const openWebUi = (base: string, query: string) => {
  const params = new URLSearchParams({
    q: query,
    format: "json",
    pageno: "1",
    safesearch: "1",
    language: "en-US",
    time_range: "",
    categories: "",
    theme: "simple",
    image_proxy: "0"
  })
  return fetch(`${base}/searxng/search?${params}`, {
    headers: {
      "User-Agent": "Cakumi (https://github.com/open-webui/open-webui) RAG Bot",
      Accept: "text/html",
      "Accept-Encoding": "gzip, deflate",
      "Accept-Language": "en-US,en;q=0.5",
      Connection: "keep-alive"
    }
  })
}

/** LangChain's SearxSearchWrapper.results(): its default params, q, the engines and categories joined by commas, the caller's headers. */
const langChain = (base: string, query: string, options: { engines?: ReadonlyArray<string>; categories?: ReadonlyArray<string>; headers?: Record<string, string> } = {}) => {
  const params: Record<string, string> = { language: "en", format: "json", q: query }
  if (options.engines !== undefined && options.engines.length > 0) params.engines = options.engines.join(",")
  if (options.categories !== undefined && options.categories.length > 0) params.categories = options.categories.join(",")
  return fetch(`${base}/searxng/search?${new URLSearchParams(params)}`, { headers: options.headers ?? {} })
}

const bearer = { Authorization: `Bearer ${WIRE_KEY}` }

describe("Open WebUI's request", () => {
  it("is answered without a key from loopback when the route is open to the private network, sorted by score as Open WebUI sorts", async () => {
    const lane = open.answeredInLane()
    const response = await openWebUi(open.url, "telescope")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    const body = await response.json() as any
    expect(body.query).toBe("telescope")
    expect(body.results.length).toBeGreaterThan(0)
    // What Open WebUI reads: url, title, content, and score to sort by; our order is already by score.
    const sorted = [...body.results].sort((a: any, b: any) => b.score - a.score)
    expect(sorted.map((r: any) => r.url)).toEqual(body.results.map((r: any) => r.url))
    for (const r of body.results) expect(r).toMatchObject({ url: expect.any(String), title: expect.any(String), content: expect.any(String) })
    expect(body.results.map((r: any) => r.url)).toContain(world.alphaUrl)
    expect(open.answeredInLane()).toBe(lane + 1)
  })

  it("is refused in SearXNG's error shape when the route needs a key (the default)", async () => {
    const response = await openWebUi(keyed.url, "telescope")
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toBe("Bearer")
    expect(await response.json()).toEqual({ error: "Authorization: missing API key; send the header \"Authorization: Bearer <API_KEY>\"" })
  })

  it("on the open route a wrong key is still refused", async () => {
    const response = await fetch(`${open.url}/searxng/search?q=telescope&format=json`, { headers: { Authorization: "Bearer wrong" } })
    expect(response.status).toBe(401)
  })
})

describe("LangChain's SearxSearchWrapper", () => {
  it("gets the fields results() reads: title, url, content, engines and category, with the key in its headers", async () => {
    const response = await langChain(keyed.url, "telescope", { headers: bearer })
    expect(response.status).toBe(200)
    const body = await response.json() as any
    const alpha = body.results.find((r: any) => r.url === world.alphaUrl)
    expect(alpha).toMatchObject({
      title: "Alpha telescope",
      content: "The alpha telescope collects light from distant galaxies.",
      engine: "web",
      engines: ["web"],
      positions: [1],
      category: "general",
      publishedDate: "2026-11-20",
      template: "default.html",
      parsed_url: ["http", new URL(world.alphaUrl).host, "/alpha.html", "", "", ""]
    })
    // run() reads answers first: present and empty.
    expect(body.answers).toEqual([])
    // The provider that keeps answering 429 is listed as SearXNG lists an engine that failed.
    expect(body.unresponsive_engines).toEqual([["flaky", expect.stringMatching(/too many requests$/)]])
  })

  it("engines selects the sources by name; categories images answers images", async () => {
    const local = await (await langChain(keyed.url, "web search", { engines: ["local"], headers: bearer })).json() as any
    expect(local.results.length).toBeGreaterThan(0)
    for (const r of local.results) expect(r.engines).toEqual(["local"])
    const images = await (await langChain(keyed.url, "telescope", { engines: ["web"], categories: ["images"], headers: bearer })).json() as any
    expect(images.results).toEqual([expect.objectContaining({
      url: world.gammaUrl,
      title: "A telescope",
      category: "images",
      template: "images.html",
      img_src: "https://example.org/img/telescope.png",
      thumbnail_src: "https://example.org/img/telescope.png",
      source: "example.org"
    })])
  })
})

describe("SearXNG's own requests", () => {
  it("a POST form is answered like the same GET; the form's values win over the query string's", async () => {
    const get = await (await fetch(`${keyed.url}/searxng/search?q=telescope&format=json&engines=web`, { headers: bearer })).json() as any
    const post = await fetch(`${keyed.url}/searxng/search?q=ignored`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/x-www-form-urlencoded" },
      body: "q=telescope&format=json&engines=web"
    })
    expect(post.status).toBe(200)
    const body = await post.json() as any
    expect(body.query).toBe("telescope")
    expect(body.results.map((r: any) => r.url)).toEqual(get.results.map((r: any) => r.url))
  })

  it("pageno pages through the results ten at a time", async () => {
    const documents = Array.from({ length: 25 }, (_, i) => ({
      url: `https://pages.example/${i + 1}`,
      title: `Page ${i + 1}`,
      // Fewer repeats of the word further down, so the ranking is the documents' order.
      text: `${"paging ".repeat(30 - i)}document number ${i + 1}`,
      date: null
    }))
    const server = await startWireServer({ documents })
    try {
      const page = async (n: number) =>
        (await (await fetch(`${server.url}/searxng/search?q=paging&format=json&pageno=${n}`, { headers: bearer })).json() as any).results.map((r: any) => r.url)
      const all = [...await page(1), ...await page(2), ...await page(3)]
      expect(all).toHaveLength(25)
      expect(new Set(all).size).toBe(25)
      expect(await page(1)).toHaveLength(10)
      expect(await page(3)).toHaveLength(5)
      expect(await page(4)).toEqual([])
    } finally {
      await server.close()
    }
  })
})

describe("Periscope's SearXNG provider client against another Periscope's /searxng", () => {
  it("federates the other server's search through its SearXNG wire (open to loopback, no key)", async () => {
    const front = await startWireServer({
      config: { search: { providers: [{ name: "peer", kind: "searxng", baseUrl: `${open.url}/searxng` }] } },
      keys: recordsFromPlainKeys(["front-key-0123456789"], 1_000_000)
    })
    try {
      const response = await fetch(`${front.url}/api/search/webSearch`, {
        method: "POST",
        headers: { authorization: "Bearer front-key-0123456789", "content-type": "application/json" },
        body: JSON.stringify({ keywords: "telescope", sources: ["peer"], num: 5, explain: true })
      })
      const body = await response.json() as any
      expect(response.status).toBe(200)
      expect(body.extra.sources).toEqual([expect.objectContaining({ name: "peer", kind: "searxng", status: "ok" })])
      expect(body.data.organic.map((r: any) => r.link)).toContain(world.alphaUrl)
    } finally {
      await front.close()
    }
  })
})
