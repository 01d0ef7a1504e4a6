/**
 * The Tavily and SearXNG wires as /openapi.json tells them, and everywhere the contract is
 * served: every answer (successes and errors of each status) matches the schema the document
 * gives it; the request schemas are closed as the decoders are; SearXNG's parameters are
 * documented on the GET; the embed library's fetch handler answers the routes; and Periscope's
 * own Tavily provider client federates one Periscope through another's /tavily.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPeriscope } from "../../adapters/embed/index.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import type { InProcessServer } from "../support/servers.ts"
import { startWireServer, startWireWorld, WIRE_KEY, type WireWorld } from "./wireServers.ts"

type Json = Record<string, any>

let world: WireWorld
let server: InProcessServer
let doc: Json

beforeAll(async () => {
  world = await startWireWorld()
  server = await startWireServer({ config: world.config })
  doc = await (await fetch(`${server.url}/openapi.json`, { headers: { authorization: `Bearer ${WIRE_KEY}` } })).json() as Json
})

afterAll(async () => {
  await server?.close()
  await world?.close()
})

const pointerSegment = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1")

/** Validates a value against the schema of one response of the document (JSON Schema 2020-12, as OpenAPI 3.1 uses). */
const validate = (path: string, method: string, status: number, value: unknown): Array<string> => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addSchema({ ...doc, $id: "openapi.json" })
  const check = ajv.getSchema(`openapi.json#/paths/${pointerSegment(path)}/${method}/responses/${status}/content/application~1json/schema`)
  if (check === undefined) throw new Error(`no schema for ${method} ${path} ${status}`)
  return check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
}

const call = async (method: string, path: string, options: { body?: string; contentType?: string; key?: string | null } = {}) => {
  const headers: Record<string, string> = {}
  if (options.key !== null) headers.authorization = `Bearer ${options.key ?? WIRE_KEY}`
  if (options.contentType !== undefined) headers["content-type"] = options.contentType
  const response = await fetch(server.url + path, { method, headers, ...(options.body === undefined ? {} : { body: options.body }) })
  return { status: response.status, json: await response.json() as unknown }
}

describe("the document", () => {
  it("has both wires' operations, their bodies closed as their decoders are, SearXNG's parameters on the GET", () => {
    expect(Object.keys(doc.paths["/tavily/search"])).toEqual(["post"])
    expect(Object.keys(doc.paths["/tavily/extract"])).toEqual(["post"])
    expect(Object.keys(doc.paths["/searxng/search"]).sort()).toEqual(["get", "post"])
    for (const name of ["TavilySearchRequest", "TavilyExtractRequest", "SearxngSearchParameters"]) expect(doc.components.schemas[name].additionalProperties).toBe(false)
    expect(doc.paths["/searxng/search"].post.requestBody.content["application/x-www-form-urlencoded"].schema.$ref).toBe("#/components/schemas/SearxngSearchParameters")
    const parameters = doc.paths["/searxng/search"].get.parameters as Array<Json>
    expect(parameters.find((p) => p.name === "q")).toMatchObject({ in: "query", required: true })
    expect(parameters.map((p) => p.name)).toEqual(expect.arrayContaining(["format", "categories", "engines", "language", "pageno", "time_range", "safesearch", "theme"]))
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).sort()
    expect(statuses("/tavily/search", "post")).toEqual(["200", "400", "401", "413", "415", "429", "500", "502", "503", "504"])
    expect(statuses("/tavily/extract", "post")).toEqual(["200", "400", "401", "413", "415", "429", "500", "503"])
    expect(statuses("/searxng/search", "get")).toEqual(["200", "400", "401", "429", "500", "502", "503", "504"])
    expect(statuses("/searxng/search", "post")).toEqual(["200", "400", "401", "413", "415", "429", "500", "502", "503", "504"])
    expect(doc.paths["/searxng/search"].post.responses["415"].description).toBe("Content-Type is not application/x-www-form-urlencoded")
  })

  it("every answer matches the schema the document gives for its status", async () => {
    const json = "application/json"
    const form = "application/x-www-form-urlencoded"
    const cases: Array<readonly [method: string, path: string, options: Parameters<typeof call>[2], status: number]> = [
      ["POST", "/tavily/search", { body: JSON.stringify({ query: "telescope" }), contentType: json }, 200],
      ["POST", "/tavily/search", {
        body: JSON.stringify({ query: "telescope", include_raw_content: true, include_images: true, include_image_descriptions: true, include_favicon: true, include_usage: true, include_answer: true, search_depth: "advanced" }),
        contentType: json
      }, 200],
      ["POST", "/tavily/search", { body: JSON.stringify({ query: "telescope", max_results: 99 }), contentType: json }, 400],
      ["POST", "/tavily/search", { body: JSON.stringify({ query: "telescope" }), contentType: json, key: null }, 401],
      ["POST", "/tavily/search", { body: "query=x", contentType: "text/plain" }, 415],
      ["POST", "/tavily/extract", { body: JSON.stringify({ urls: [world.alphaUrl, "http://10.0.0.1/"], include_images: true, include_usage: true }), contentType: json }, 200],
      ["POST", "/tavily/extract", { body: JSON.stringify({ urls: [] }), contentType: json }, 400],
      ["GET", "/searxng/search?q=telescope&format=json", {}, 200],
      ["GET", "/searxng/search?q=telescope&categories=general,images,news", {}, 200],
      ["GET", "/searxng/search?format=json", {}, 400],
      ["GET", "/searxng/search?q=telescope", { key: null }, 401],
      ["POST", "/searxng/search", { body: "q=telescope&format=json", contentType: form }, 200],
      ["POST", "/searxng/search", { body: "{}", contentType: json }, 415]
    ]
    for (const [method, path, options, status] of cases) {
      const answer = await call(method, path, options)
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.json).slice(0, 300)}`).toBe(status)
      const documented = path.split("?")[0]!
      expect(validate(documented, method.toLowerCase(), status, answer.json), `${method} ${path} ${status}`).toEqual([])
    }
  })
})

describe("the embed library's fetch handler", () => {
  it("answers /tavily/search and /searxng/search as the server does, keys included", async () => {
    const periscope = createPeriscope({ apiKeys: ["embed-key-0123456789"] })
    try {
      const tavily = await periscope.fetch(new Request("http://embedded/tavily/search", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "web search", max_results: 2, api_key: "embed-key-0123456789" })
      }))
      expect(tavily.status).toBe(200)
      expect((await tavily.json() as any).results.map((r: any) => r.url)).toEqual(["https://periscope.invalid/docs/web-search", "https://periscope.invalid/docs/image-search"])
      const searxng = await periscope.fetch(new Request("http://embedded/searxng/search?q=web+search&format=json", { headers: { authorization: "Bearer embed-key-0123456789" } }))
      expect(searxng.status).toBe(200)
      expect((await searxng.json() as any).results[0]).toMatchObject({ url: "https://periscope.invalid/docs/web-search", engine: "local" })
      // No socket, no peer address: the private-network setting could not open the route here.
      const keyless = await periscope.fetch(new Request("http://embedded/searxng/search?q=web"))
      expect(keyless.status).toBe(401)
      expect(await keyless.json()).toEqual({ error: expect.stringMatching(/missing API key/) })
    } finally {
      await periscope.close()
    }
  })
})

describe("Periscope's Tavily provider client against another Periscope's /tavily", () => {
  it("federates the other server's search through its Tavily wire, with the key it is configured with", async () => {
    process.env.WIRES_PEER_TAVILY_KEY = WIRE_KEY
    const front = await startWireServer({
      config: { search: { providers: [{ name: "peer", kind: "tavily", baseUrl: `${server.url}/tavily`, apiKeyEnv: "WIRES_PEER_TAVILY_KEY" }] } },
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
      expect(body.extra.sources).toEqual([expect.objectContaining({ name: "peer", kind: "tavily", status: "ok" })])
      expect(body.data.organic.map((r: any) => r.link).sort()).toEqual([world.alphaUrl, world.betaUrl, world.gammaUrl].sort())
    } finally {
      await front.close()
      delete process.env.WIRES_PEER_TAVILY_KEY
    }
  })
})
