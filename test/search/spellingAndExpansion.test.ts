/**
 * Did you mean and query expansion on the wires, against a real server on loopback over the
 * engine: webSearch's data and `extra.corrections`, explain's suggestions, `expand`, the 400s
 * naming the field, SearXNG's `corrections` and MCP web_search's text and structured content.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { toWebSearchData } from "../../core/search/SearchResult.ts"
import { LIVE_KEY, type LiveServer, postSearch, startLiveServer } from "./liveSearchServer.ts"

const page = (path: string, title: string, text: string) => ({ url: `https://docs.example.org/${path}`, title, text })
const filler = ["garden", "river", "music", "bread", "winter", "harbour", "copper", "violin", "meadow", "lantern", "pepper", "canyon"]
const docs = [
  page("forms/validation", "Form validation", "Validation of user input: every field is checked before the form is sent."),
  page("forms/fields", "Fields", "Each field has a type. Validation errors name the field and the rule it broke."),
  page("forms/schemas", "Schemas", "A schema lists the fields and their validation rules; the input is checked against it."),
  page("garden/thistles", "Thistles", "Thistles spread by seed; pull them before they flower in the spring."),
  page("garden/roses", "Roses", "Roses want sun and water; prune them in the spring."),
  page("howto/sorting", "Sorting HOWTO", "Sorting a list: sorted returns a new list ordered by a key function; the comparison uses each element's key."),
  page("library/list-sort", "list.sort", "The sort method orders the list in place; pass a key function and reverse to change the order."),
  page("library/sorted", "sorted", "sorted takes any iterable and a key function and returns a new sorted list in ascending order."),
  page("howto/key-functions", "Key functions", "A key function maps each element to the value compared: a lambda is the usual key, and the order follows it."),
  ...Array.from({ length: 60 }, (_, i) => page(`misc/${i}`, `Note ${i}`, Array.from({ length: 12 }, (_, k) => filler[(i * 7 + k * 5) % filler.length]).join(" ")))
]
const builder = new IndexBuilder()
builder.add(docs)
const index = builder.build()

let server: LiveServer
beforeAll(async () => {
  server = await startLiveServer({}, { _tag: "Layer", layer: EngineSearch.layer(index) })
})
afterAll(async () => {
  await server?.close()
})

describe("webSearch: did you mean", () => {
  it("answers a query that needs no correction as it always has: the engine's hits, extra null", async () => {
    const { status, body } = await postSearch(server.url, "webSearch", { keywords: "validation rules", num: 5 })
    expect(status).toBe(200)
    const plain = index.search("validation rules", 5)
    expect(body.data).toEqual(toWebSearchData(plain.query, plain.hits))
    expect(body.extra).toBeNull()
  })

  it("searches the corrected query and says what it corrected", async () => {
    const { status, body } = await postSearch(server.url, "webSearch", { keywords: "vaidation rules", num: 5 })
    expect(status).toBe(200)
    expect(body.data.query).toBe("validation rules")
    expect(body.data.organic[0].link).toMatch(/forms/)
    expect(body.extra).toEqual({ corrections: { query: "validation rules", searched: true, words: [{ from: "vaidation", to: "validation" }] } })
  })

  it("leaves a suggestion it did not search out of extra unless the request asks for explain", async () => {
    // "thistles" is on one page: with "spring" finding pages, the query is searched as typed.
    const plain = await postSearch(server.url, "webSearch", { keywords: "thisles spring" })
    expect(plain.body.data.query).toBe("thisles spring")
    expect(plain.body.extra).toBeNull()
    const explained = await postSearch(server.url, "webSearch", { keywords: "thisles spring", explain: true })
    expect(explained.body.extra.corrections).toEqual({ query: "thistles spring", searched: false, words: [{ from: "thisles", to: "thistles" }] })
    expect(explained.body.data.organic.map((r: { link: string }) => r.link)).toEqual(plain.body.data.organic.map((r: { link: string }) => r.link))
  })

  it("never corrects a quoted word", async () => {
    const { body } = await postSearch(server.url, "webSearch", { keywords: `"vaidation" rules` })
    expect(body.data.query).toBe(`"vaidation" rules`)
    expect(body.data.organic).toEqual([])
    expect(body.extra).toBeNull()
  })
})

describe("webSearch: expand", () => {
  it("adds the best pages' words to the query: a page in other words than the query's is found", async () => {
    const plain = await postSearch(server.url, "webSearch", { keywords: "sort list", num: 10 })
    const expanded = await postSearch(server.url, "webSearch", { keywords: "sort list", num: 10, expand: true })
    expect(expanded.status).toBe(200)
    const links = (body: any) => body.data.organic.map((r: { link: string }) => r.link)
    expect(links(plain.body)).not.toContain("https://docs.example.org/howto/key-functions")
    expect(links(expanded.body)).toContain("https://docs.example.org/howto/key-functions")
    expect(expanded.body.data.query).toBe("sort list")
    expect(await postSearch(server.url, "webSearch", { keywords: "sort list", num: 10, expand: false })).toEqual(plain)
  })

  it("keeps to the language asked: the pages are in English, so German finds none, expanded or not", async () => {
    const english = await postSearch(server.url, "webSearch", { keywords: "sort list", num: 10, expand: true, language: "en" })
    expect(english.body.data.organic.map((r: { link: string }) => r.link)).toContain("https://docs.example.org/howto/key-functions")
    for (const expand of [false, true]) {
      const german = await postSearch(server.url, "webSearch", { keywords: "sort list", num: 10, expand, language: "de" })
      expect(german.status).toBe(200)
      expect(german.body.data.organic).toEqual([])
    }
  })

  it("refuses an expand that is not a boolean, and expand on image search, naming the field", async () => {
    for (const expand of ["yes", 1, null]) {
      const { status, body } = await postSearch(server.url, "webSearch", { keywords: "sort", expand })
      expect(status).toBe(400)
      expect(JSON.stringify(body)).toMatch(/expand/)
      expect(JSON.stringify(body)).toMatch(/must be a boolean/)
    }
    const images = await postSearch(server.url, "imageSearch", { keywords: "sort", expand: true })
    expect(images.status).toBe(400)
    expect(JSON.stringify(images.body)).toMatch(/expand.*web search only/)
  })
})

describe("the other wires", () => {
  it("SearXNG lists the corrected query in corrections", async () => {
    const response = await fetch(`${server.url}/searxng/search?q=vaidation+rules&format=json`, { headers: { authorization: `Bearer ${LIVE_KEY}` } })
    expect(response.status).toBe(200)
    const body = await response.json() as any
    expect(body.corrections).toEqual(["validation rules"])
    expect(body.query).toBe("vaidation rules")
    const clean = await (await fetch(`${server.url}/searxng/search?q=validation+rules&format=json`, { headers: { authorization: `Bearer ${LIVE_KEY}` } })).json() as any
    expect(clean.corrections).toEqual([])
  })

  it("MCP web_search says what it corrected and takes expand", async () => {
    const client = new Client({ name: "periscope-test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${LIVE_KEY}` } } }))
    try {
      const corrected = await client.callTool({ name: "web_search", arguments: { query: "vaidation rules" } }) as any
      expect(corrected.isError).toBe(false)
      expect(corrected.content[0].text).toMatch(/^Spelling corrected: "vaidation" to "validation"/)
      expect(corrected.structuredContent.corrections).toEqual({ query: "validation rules", searched: true, words: [{ from: "vaidation", to: "validation" }] })
      const expanded = await client.callTool({ name: "web_search", arguments: { query: "sort list", expand: true } }) as any
      expect(expanded.structuredContent.results.map((r: { url: string }) => r.url)).toContain("https://docs.example.org/howto/key-functions")
      const bad = await client.callTool({ name: "web_search", arguments: { query: "sort", expand: "yes" } }).catch((error: unknown) => error)
      expect(String((bad as { message?: string }).message ?? JSON.stringify(bad))).toMatch(/expand/)
    } finally {
      await client.close()
    }
  })
})
