/**
 * Search results that carry their page (`content`), over real sockets: our Node server with
 * the embedded engine over a few pages of a loopback site, a SearXNG stand-in listing other
 * pages of it (one missing, one that never answers), and the site. The index's pages are read
 * from its stored text (the site never sees them asked for); the provider's through webFetch;
 * a page not read keeps its snippet and extra.unread says why. A request without the option is
 * answered byte for byte as before; bad values are 400s naming the field.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Layer } from "effect"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPeriscope } from "../../adapters/embed/index.ts"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { htmlPage, type Site, startSite } from "../chat/groundingHarness.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { type RunningServer, serveInProcess, TEST_KEY } from "../support/servers.ts"

const filler = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => `Paragraph ${i + 1} is about ${topic} in general and says nothing in particular about it.`).join("\n\n")

/** A long stored page whose one passage about pruning lies deep inside it. */
const STORED_TEXT = [
  filler("the garden", 30),
  "Pruning tomatoes: remove the side shoots every week. Pruned plants ripen their fruit sooner.",
  filler("the shed", 30)
].join("\n\n")

const DEADLINE_MS = 5000

let site: Site
let searx: StandIn

/** The pages the provider lists: one on the site, one gone. */
const livePages = () => [
  { title: "Live A", url: `${site.url}/live-a`, snippet: "Tomatoes grown on stakes need pruning." },
  { title: "Gone", url: `${site.url}/missing`, snippet: "A page about pruning tomatoes that is gone." }
]
let server: RunningServer
let localOnly: RunningServer

const localDocs: ReadonlyArray<IndexDocument> = [
  { url: "https://local.example/water", title: "Watering", text: "Water tomatoes at the root in the morning. Wet leaves invite blight." },
  { url: "https://local.example/soil", title: "Soil", text: "Tomatoes like loose soil rich in compost. Lime raises the pH of acid soil." }
]

beforeAll(async () => {
  site = await startSite({
    "/live-a": htmlPage("Live A", "<p>Tomatoes grown on stakes need pruning too.</p><p>Pruning opens the plant to the sun and air, so tomatoes dry after rain.</p>"),
    "/hang": "hang"
  })
  const builder = new IndexBuilder()
  builder.add([{ url: `${site.url}/stored-1`, title: "Stored tomato notes", text: STORED_TEXT }])
  searx = await startStandIn("searxng", livePages())
  const settings = settingsOf({
    // Long enough for a page read on a busy machine (the first read starts the extraction threads).
    search: { providers: [{ name: "searx", kind: "searxng", baseUrl: searx.url }], cache: { maxEntries: 0 }, deadlineMs: DEADLINE_MS },
    fetch: { allowPrivateAddresses: true, cacheTtlSeconds: 0 }
  })
  server = await serveInProcess(appLayer(settings, recordsFromPlainKeys([TEST_KEY]), { search: { _tag: "Layer", layer: EngineSearch.layer(builder.build()) } }).pipe(
    Layer.provide(nodePlatform),
    Layer.orDie
  ))
  localOnly = await serveInProcess(appLayer(settingsOf({}), recordsFromPlainKeys([TEST_KEY]), { search: { _tag: "Layer", layer: FixtureSearch.layer(localDocs) } }).pipe(
    Layer.provide(nodePlatform),
    Layer.orDie
  ))
})

afterAll(async () => {
  await server?.close()
  await localOnly?.close()
  await searx?.close()
  await site?.close()
})

const post = async (url: string, path: "webSearch" | "imageSearch", body: unknown) => {
  const response = await fetch(`${url}/api/search/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, text, body: JSON.parse(text) as any }
}

const byPath = (organic: ReadonlyArray<any>) => new Map(organic.map((r) => [new URL(r.link).pathname, r]))

describe("a request without content is answered as before", () => {
  it("byte for byte: the local engine's envelope, and content snippet changes nothing", async () => {
    const plain = await post(localOnly.url, "webSearch", { keywords: "tomatoes soil" })
    const expected = { success: true, code: "200", message: "success", exception: null, data: FixtureSearch.make(localDocs).web({ keywords: "tomatoes soil", num: 10 }), extra: null }
    expect(plain.text).toBe(JSON.stringify(expected))
    expect((await post(localOnly.url, "webSearch", { keywords: "tomatoes soil", content: "snippet" })).text).toBe(plain.text)
  })

  it("with a provider: the same results with and without content, content the one field added", async () => {
    const plain = await post(server.url, "webSearch", { keywords: "pruning tomatoes", content: "snippet" })
    expect(plain.body.data.organic.every((r: any) => !("content" in r))).toBe(true)
    const read = await post(server.url, "webSearch", { keywords: "pruning tomatoes", content: "highlights" })
    expect(read.body.data.organic.map(({ content: _content, ...rest }: any) => rest)).toEqual(plain.body.data.organic)
    for (const r of read.body.data.organic) expect(Object.keys(r)).toEqual(["title", "link", "snippet", "position", "date", "content"])
  })
})

describe("highlights", () => {
  it("an index page's passage comes from its stored text, deep in the page; the site is never asked for it", async () => {
    const before = site.requested.length
    const { status, body } = await post(server.url, "webSearch", { keywords: "pruning tomatoes side shoots", content: "highlights" })
    expect(status).toBe(200)
    const stored = byPath(body.data.organic).get("/stored-1")
    expect(stored.content).toContain("Pruning tomatoes: remove the side shoots every week. Pruned plants ripen their fruit sooner.")
    expect(stored.content.length).toBeLessThanOrEqual(1500)
    expect(stored.content).not.toContain("Paragraph 1 is about the garden")
    expect(site.requested.slice(before)).not.toContain("/stored-1")
  })

  it("a provider's page is read through webFetch; a missing one and one that never answers keep their snippet and say why", async () => {
    searx.pages = [...livePages(), { title: "Slow", url: `${site.url}/hang`, snippet: "A page about pruning tomatoes that never answers." }]
    const started = Date.now()
    const { status, body } = await post(server.url, "webSearch", { keywords: "pruning tomatoes", content: "highlights" }).finally(() => {
      searx.pages = livePages()
    })
    expect(status).toBe(200)
    // Within the request's deadline, the page that hangs included.
    expect(Date.now() - started).toBeLessThan(DEADLINE_MS + 2000)
    const results = byPath(body.data.organic)
    expect(results.get("/live-a").content).toBe("Live A\nTomatoes grown on stakes need pruning too.\nPruning opens the plant to the sun and air, so tomatoes dry after rain.")
    expect(results.get("/missing").content).toBe(results.get("/missing").snippet)
    expect(results.get("/hang").content).toBe(results.get("/hang").snippet)
    const unread = new Map(body.extra.unread.map((u: any) => [new URL(u.link).pathname, u]))
    expect(unread.get("/missing")).toMatchObject({ position: results.get("/missing").position, reason: "http_status", message: expect.stringContaining("404") })
    expect(unread.get("/hang")).toMatchObject({ position: results.get("/hang").position, reason: "timeout" })
    expect(unread.has("/live-a")).toBe(false)
    expect(unread.has("/stored-1")).toBe(false)
  }, 3 * DEADLINE_MS)
})

describe("markdown and text", () => {
  it("the page's main content, cut to maxCharsPerResult at a line or a space", async () => {
    const { body } = await post(server.url, "webSearch", { keywords: "pruning tomatoes", content: "markdown", maxCharsPerResult: 2000, sources: ["searx"] })
    const live = byPath(body.data.organic).get("/live-a")
    expect(live.content).toContain("# Live A")
    expect(live.content).toContain("Pruning opens the plant to the sun and air")
    const text = await post(server.url, "webSearch", { keywords: "pruning tomatoes", content: "text", maxCharsPerResult: 300, sources: ["local"] })
    const stored = byPath(text.body.data.organic).get("/stored-1")
    expect(stored.content.length).toBeLessThanOrEqual(300)
    expect(stored.content.length).toBeGreaterThan(200)
    expect(STORED_TEXT.startsWith(stored.content)).toBe(true)
  })

  it("maxTokens: one budget for all the results' content, counted in o200k_base tokens", async () => {
    const all = await post(server.url, "webSearch", { keywords: "pruning tomatoes", content: "text", sources: ["local", "searx"] })
    const whole = all.body.data.organic.reduce((n: number, r: any) => n + countTokens(r.content), 0)
    const budget = Math.floor(whole / 3)
    const { body } = await post(server.url, "webSearch", { keywords: "pruning tomatoes", content: "text", maxTokens: budget, sources: ["local", "searx"] })
    const counts = body.data.organic.map((r: any) => countTokens(r.content))
    expect(counts.reduce((a: number, b: number) => a + b, 0)).toBeLessThanOrEqual(budget)
    // The short contents stay whole; the long stored page takes the rest.
    const short = body.data.organic.filter((r: any) => new URL(r.link).pathname !== "/stored-1")
    for (const r of short) expect(r.content).toBe(all.body.data.organic.find((a: any) => a.link === r.link).content)
    expect(countTokens(byPath(body.data.organic).get("/stored-1").content)).toBeGreaterThan(budget / 2)
  })
})

describe("bad content options: 400 naming the field", () => {
  const cases: ReadonlyArray<readonly [string, "webSearch" | "imageSearch", Record<string, unknown>, string]> = [
    ["an unknown mode", "webSearch", { content: "html" }, "content: must be snippet, highlights, markdown or text"],
    ["maxCharsPerResult 0", "webSearch", { content: "text", maxCharsPerResult: 0 }, "maxCharsPerResult: must be an integer from 1 to 100000"],
    ["maxTokens not an integer", "webSearch", { content: "highlights", maxTokens: 1.5 }, "maxTokens: must be an integer from 1 to 200000"],
    ["maxTokens without content", "webSearch", { maxTokens: 100 }, "maxTokens: applies only with content highlights, markdown or text"],
    ["maxCharsPerResult with snippets", "webSearch", { content: "snippet", maxCharsPerResult: 100 }, "maxCharsPerResult: applies only with content highlights, markdown or text"],
    ["content on an image search", "imageSearch", { content: "highlights" }, "content: applies to web search only (images carry no page text)"]
  ]
  for (const [name, path, options, message] of cases) {
    it(name, async () => {
      const { status, body } = await post(localOnly.url, path, { keywords: "tomatoes", ...options })
      expect(status).toBe(400)
      expect(body).toMatchObject({ success: false, code: "400", data: null })
      expect(body.message.startsWith(message)).toBe(true)
    })
  }
})

describe("the other faces", () => {
  it("MCP web_search: content as text and in structuredContent", async () => {
    const client = new Client({ name: "periscope-test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TEST_KEY}` } } }))
    try {
      const result: any = await client.callTool({ name: "web_search", arguments: { query: "pruning tomatoes side shoots", content: "highlights", sources: ["local"] } })
      expect(result.isError).toBe(false)
      expect(result.structuredContent.results[0].content).toContain("remove the side shoots every week")
      expect(result.content[0].text).toContain("remove the side shoots every week")
      const refused: any = await client.callTool({ name: "web_search", arguments: { query: "tomatoes", maxTokens: 10 } }).catch((e) => e)
      expect(String(refused.message)).toContain("maxTokens: applies only with content highlights, markdown or text")
    } finally {
      await client.close()
    }
  })

  it("the embed library: results carry content from the documents' text", async () => {
    const periscope = createPeriscope({ search: { documents: localDocs } })
    try {
      const data = await periscope.webSearch({ keywords: "blight leaves", content: "highlights" })
      expect(data.organic[0]!.content).toBe("Water tomatoes at the root in the morning. Wet leaves invite blight.")
      await expect(periscope.imageSearch({ keywords: "tomatoes", content: "text" } as any)).rejects.toMatchObject({ status: 400, param: "content" })
    } finally {
      await periscope.close()
    }
  })
})
