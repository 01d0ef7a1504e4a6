/**
 * MCP over Streamable HTTP at /mcp, driven by the reference client
 * (@modelcontextprotocol/sdk's Client over StreamableHTTPClientTransport) against
 * a real Node server on loopback: initialize, the tool listing, every tool with
 * good and bad arguments, failures as isError results, keys, limits, the Origin
 * check, progress and cancellation reaching a slow upstream provider.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { type InProcessServer, serveInProcess, startInProcess, TEST_KEY } from "../support/servers.ts"

const LIMITED_KEY = "mcp-limited-key-0123456789"
const SLOW_KEY = "mcp-slow-provider-key-0123"

let server: InProcessServer
let limited: InProcessServer
let slowServer: InProcessServer
let slow: StandIn

beforeAll(async () => {
  server = await startInProcess()
  // Two requests a minute: the third tool call is refused.
  limited = await serveInProcess(appLayer(settingsOf({}), recordsFromPlainKeys([LIMITED_KEY], 2), {
    search: { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) },
    chatModel: ScriptedChat.layer(unconfiguredChat)
  }).pipe(Layer.provide(nodePlatform), Layer.orDie))
  slow = await startStandIn("serper", [{ title: "Slow page", url: "https://slow.example/1", snippet: "slow" }])
  process.env.PERISCOPE_TEST_SERPER_KEY = "serper-key"
  slowServer = await serveInProcess(appLayer(
    settingsOf({ search: { deadlineMs: 20_000, providers: [{ name: "serper", kind: "serper", baseUrl: slow.url, apiKeyEnv: "PERISCOPE_TEST_SERPER_KEY", timeoutMs: 20_000 }] } }),
    recordsFromPlainKeys([SLOW_KEY], 1_000),
    { search: { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) }, chatModel: ScriptedChat.layer(unconfiguredChat) }
  ).pipe(Layer.provide(nodePlatform), Layer.orDie))
})
afterAll(async () => {
  await Promise.all([server?.close(), limited?.close(), slowServer?.close()])
  await slow?.close()
  delete process.env.PERISCOPE_TEST_SERPER_KEY
})

const connect = async (url: string, key = TEST_KEY) => {
  const client = new Client({ name: "periscope-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return client
}

const withClient = async <A>(f: (client: Client) => Promise<A>, url = server.url, key = TEST_KEY): Promise<A> => {
  const client = await connect(url, key)
  try {
    return await f(client)
  } finally {
    await client.close()
  }
}

const textOf = (result: any): string => result.content.map((c: any) => c.text).join("")

describe("initialize and tools/list", () => {
  it("negotiates the client's protocol version, names the server and lists the five tools with annotations and schemas", async () => {
    await withClient(async (client) => {
      expect(client.getServerVersion()).toMatchObject({ name: "periscope", title: "Periscope" })
      expect(client.getServerCapabilities()).toMatchObject({ tools: {} })
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual(["web_search", "image_search", "web_fetch", "map_site", "answer"])
      for (const tool of tools) {
        expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: true })
        expect(tool.annotations?.title, tool.name).toMatch(/\w/)
        expect(tool.inputSchema.type, tool.name).toBe("object")
        expect(tool.outputSchema?.type, tool.name).toBe("object")
        expect(tool.description!.length, tool.name).toBeGreaterThan(60)
      }
      const search = tools.find((t) => t.name === "web_search")!
      expect(search.inputSchema.required).toEqual(["query"])
      expect(Object.keys(search.inputSchema.properties ?? {})).toEqual([
        "query", "num", "freshness", "language", "region", "safeSearch", "sources", "includeDomains", "excludeDomains", "content", "maxCharsPerResult", "maxTokens", "expand"
      ])
    })
  })

  it("issues no session: the answer to initialize carries no Mcp-Session-Id", async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("mcp-session-id")).toBeNull()
    expect(await response.json()).toMatchObject({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18" } })
  })
})

describe("tools/call", () => {
  it("web_search: numbered results as text, the same data as structuredContent (checked by the client against the outputSchema)", async () => {
    await withClient(async (client) => {
      const result: any = await client.callTool({ name: "web_search", arguments: { query: "chat completions", num: 3 } })
      expect(result.isError).toBe(false)
      const rows = result.structuredContent.results
      expect(rows.length).toBeGreaterThan(0)
      expect(rows.length).toBeLessThanOrEqual(3)
      const text = textOf(result)
      for (const row of rows) {
        expect(text).toContain(`[${row.position}] ${row.title}`)
        expect(text).toContain(`URL: ${row.url}`)
      }
      // The same search over REST gives the same pages in the same order.
      const rest = await fetch(`${server.url}/api/search/webSearch`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ keywords: "chat completions", num: 3 })
      }).then((r) => r.json() as Promise<any>)
      expect(rows.map((r: any) => r.url)).toEqual(rest.data.organic.map((r: any) => r.link))
    })
  })

  it("image_search: image and page URLs, as text and structured", async () => {
    await withClient(async (client) => {
      const result: any = await client.callTool({ name: "image_search", arguments: { query: "periscope", num: 2 } })
      expect(result.isError).toBe(false)
      expect(result.structuredContent.images.length).toBeGreaterThan(0)
      for (const image of result.structuredContent.images) {
        expect(textOf(result)).toContain(`Image: ${image.imageUrl}`)
        expect(textOf(result)).toContain(`Page: ${image.pageUrl}`)
      }
    })
  })

  it("answer: a grounded answer with numbered sources and citations that point at them", async () => {
    await withClient(async (client) => {
      const result: any = await client.callTool({ name: "answer", arguments: { question: "What does Periscope do?" } })
      expect(result.isError).toBe(false)
      const { answer, sources, citations } = result.structuredContent
      expect(answer.length).toBeGreaterThan(0)
      expect(sources.length).toBeGreaterThan(0)
      const urls = new Set(sources.map((s: any) => s.url))
      for (const citation of citations) expect(urls.has(citation.url)).toBe(true)
      expect(textOf(result)).toContain(`[1] ${sources[0].title} - ${sources[0].url}`)
    })
  })

  it("no results: isError with a sentence the model can act on", async () => {
    await withClient(async (client) => {
      const result: any = await client.callTool({ name: "web_search", arguments: { query: "qqqzzzxxyy unmatched" } })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toMatch(/^No results for "qqqzzzxxyy unmatched"\. Try/)
    })
  })

  it("web_fetch of a refused address: isError naming why, no connection made", async () => {
    await withClient(async (client) => {
      const result: any = await client.callTool({ name: "web_fetch", arguments: { url: `${server.url}/healthz` } })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toMatch(/^This address may not be fetched: .*Use a public http\(s\) URL\.$/)
    })
  })

  it("bad arguments are protocol errors -32602 naming the argument and the rule, as REST words them", async () => {
    await withClient(async (client) => {
      const cases: ReadonlyArray<[string, Record<string, unknown>, RegExp]> = [
        ["web_search", { query: "x", num: 101 }, /num: must be an integer from 1 to 100, got 101/],
        ["web_search", { query: "  " }, /query: must be a non-empty string of at most 1000 characters/],
        ["web_search", {}, /query: /],
        ["web_search", { query: "x", freshness: "hour" }, /freshness: must be day, week, month, year/],
        ["web_search", { query: "x", sources: ["nowhere"] }, /sources\[0\]/],
        ["web_fetch", { url: "ftp://example.com/" }, /url: /],
        ["web_fetch", { url: "https://example.com/", format: "pdf" }, /format: must be markdown, text or html/],
        ["answer", { question: "" }, /question: must be a non-empty question/],
        ["no_such_tool", {}, /Unknown tool: "no_such_tool"/]
      ]
      for (const [name, args, message] of cases) {
        const error = await client.callTool({ name, arguments: args }).then(() => undefined, (e: unknown) => e)
        expect(error, `${name} ${JSON.stringify(args)}`).toBeInstanceOf(McpError)
        expect((error as McpError).code, `${name} ${JSON.stringify(args)}`).toBe(-32602)
        expect((error as McpError).message, `${name} ${JSON.stringify(args)}`).toMatch(message)
      }
    })
  })

  it("progress: a client that asks for it gets notifications/progress before the result", async () => {
    await withClient(async (client) => {
      const seen: Array<string | undefined> = []
      const result: any = await client.callTool({ name: "web_search", arguments: { query: "chat" } }, undefined, {
        onprogress: (p) => void seen.push(p.message)
      })
      expect(result.isError).toBe(false)
      expect(seen).toEqual(["searching"])
    })
  })
})

describe("keys, limits and the HTTP edge", () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })

  it("refuses a request without a valid key: 401 with WWW-Authenticate: Bearer and a JSON-RPC error; the client fails to connect", async () => {
    const response = await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { authorization: "Bearer wrong-key" })
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toBe("Bearer")
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Authorization: invalid API key" } })
    await expect(connect(server.url, "wrong-key")).rejects.toThrow()
  })

  it("charges each tool call to the key's limit; a refused call is an isError result with the retry time", async () => {
    await withClient(async (client) => {
      for (let i = 0; i < 2; i++) expect((await client.callTool({ name: "web_search", arguments: { query: "chat" } }) as any).isError).toBe(false)
      const refused: any = await client.callTool({ name: "web_search", arguments: { query: "chat" } })
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toMatch(/rate limit of 2 requests per minute exceeded .*retry after \d+ s/)
      // Listing tools is not a tool call: still answered.
      expect((await client.listTools()).tools.length).toBe(5)
    }, limited.url, LIMITED_KEY)
  })

  it("checks Origin: another site's page is refused 403, the server's own loopback origin is served", async () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" }
    const evil = await post(list, { origin: "http://evil.example" })
    expect(evil.status).toBe(403)
    expect((await evil.json() as any).error.code).toBe(-32600)
    const own = await post(list, { origin: server.url })
    expect(own.status).toBe(200)
  })

  it("answers the protocol's edge cases with the protocol's errors", async () => {
    expect((await post("{not json")).status).toBe(400)
    expect(await (await post("{not json")).json()).toMatchObject({ error: { code: -32700 } })
    expect(await (await post({ jsonrpc: "2.0", id: 7, method: "resources/list" })).json()).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32601, message: "Method not found: resources/list" } })
    expect(await (await post({ jsonrpc: "1.0", id: 8, method: "ping" })).json()).toMatchObject({ id: 8, error: { code: -32600 } })
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202)
    expect((await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-protocol-version": "1999-01-01" })).status).toBe(400)
    expect((await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { accept: "text/html" })).status).toBe(406)
    expect((await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "content-type": "text/plain" })).status).toBe(415)
    expect((await post([])).status).toBe(400)
    // A batch under 2025-03-26 is answered in one array; later revisions refuse it.
    const batch = [{ jsonrpc: "2.0", id: 1, method: "ping" }, { jsonrpc: "2.0", id: 2, method: "tools/list" }]
    const answered = await (await post(batch, { "mcp-protocol-version": "2025-03-26" })).json() as Array<any>
    expect(answered.map((a) => a.id)).toEqual([1, 2])
    expect((await post(batch, { "mcp-protocol-version": "2025-06-18" })).status).toBe(400)
    const get = await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${TEST_KEY}` } })
    expect([get.status, get.headers.get("allow")]).toEqual([405, "POST"])
  })
})

describe("cancellation", () => {
  const postSlow = (body: unknown) =>
    fetch(`${slowServer.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${SLOW_KEY}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(body)
    })

  it("a notifications/cancelled sent on its own request interrupts the call: the provider's request is closed, the call answers -32800", async () => {
    slow.behave({ kind: "hang" })
    try {
      const before = { requests: slow.requests, aborted: slow.aborted }
      const call = postSlow({ jsonrpc: "2.0", id: "call-1", method: "tools/call", params: { name: "web_search", arguments: { query: "slow", sources: ["serper"] } } })
      while (slow.requests === before.requests) await new Promise((r) => setTimeout(r, 10))
      const cancel = await postSlow({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "call-1", reason: "no longer needed" } })
      expect(cancel.status).toBe(202)
      await slow.waitAborted(before.aborted + 1, 5_000)
      expect(await (await call).json()).toEqual({ jsonrpc: "2.0", id: "call-1", error: { code: -32800, message: "Request cancelled" } })
    } finally {
      slow.behave({ kind: "ok" })
    }
  })

  it("the client's abort (notifications/cancelled from the SDK) interrupts the search in flight: the slow provider sees its request closed", async () => {
    slow.behave({ kind: "hang" })
    try {
      await withClient(async (client) => {
        const before = { requests: slow.requests, aborted: slow.aborted }
        const controller = new AbortController()
        const call = client.callTool({ name: "web_search", arguments: { query: "slow things", sources: ["serper"] } }, undefined, { signal: controller.signal })
        while (slow.requests === before.requests) await new Promise((r) => setTimeout(r, 10))
        controller.abort("the user changed their mind")
        await expect(call).rejects.toThrow()
        await slow.waitAborted(before.aborted + 1, 5_000)
      }, slowServer.url, SLOW_KEY)
    } finally {
      slow.behave({ kind: "ok" })
    }
  })
})
