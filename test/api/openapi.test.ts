/**
 * /openapi.json checked three ways, all against the real Node server on loopback
 * (fixture search, a scripted chat model, webFetch of a loopback site):
 * - Redocly's `recommended` ruleset finds no error in it;
 * - a client generated from it by @hey-api/openapi-ts calls every endpoint from a
 *   small TypeScript file with no casts; tsc type-checks that file, node runs it;
 * - it agrees with the server: each request body it calls valid is answered, each
 *   bound it documents is the one the decoder enforces (at the bound: not refused;
 *   one step past it: 400 naming the field), bodies with unknown fields are answered,
 *   and every answer (the stream's events too) matches the schema it documents.
 */
import { execFile, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { systemResolver } from "../../adapters/node/sources/crawl/AddressGuard.ts"
import { NodePageFetcher } from "../../adapters/node/sources/crawl/NodePageFetcher.ts"
import * as UndiciHttpClient from "../../adapters/node/undiciHttpClient.ts"
import { SSE_DATA_EXTENSION, SSE_END_EXTENSION } from "../../core/api/OpenApiDocument.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { contentText } from "../../core/chat/ChatRequest.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { send, serveSite, type Site } from "../fetch/support.ts"
import { serveInProcess, root } from "../support/servers.ts"

const KEY = "openapi-test-key-0123456789"
const OUT = resolve(root, "test-output/openapi")
/**
 * @hey-api/openapi-ts prints its code with the TypeScript 5/6 compiler API, which the
 * project's TypeScript 7 (native) package no longer has: the generator gets TypeScript 6
 * from the `typescript-6` alias (npm:typescript@6.0.3), or from PERISCOPE_TYPESCRIPT_6.
 */
const TYPESCRIPT_6 = process.env.PERISCOPE_TYPESCRIPT_6 ?? resolve(root, "node_modules/typescript-6/lib/typescript.js")

type Json = Record<string, any>

let site: Site
let server: { readonly url: string; close(): Promise<void> }
let doc: Json

const PAGE = "<html><head><title>Loopback page</title></head><body><main><h1>Loopback page</h1>" +
  "<p>A page served on loopback for the OpenAPI client test, long enough to be the main content of the page.</p></main></body></html>"

/** The real Node server in this process: fixture search, a scripted chat model, webFetch allowed to reach the loopback site. */
const startServer = async (siteHost: string) => {
  const platform = Layer.mergeAll(
    NodeFileSystem.layer,
    UndiciHttpClient.layer,
    NodePageFetcher.layer({ allow: false, resolve: systemResolver })
  )
  const services = appLayer(settingsOf({ fetch: { allowHosts: [siteHost] } }), recordsFromPlainKeys([KEY], 1_000_000), {
    search: { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) },
    chatModel: ScriptedChat.layer({
      models: ["scripted-1"],
      replies: (request) => ({ content: `Hello! You said: ${contentText(request.messages[request.messages.length - 1]!.content)}` })
    })
  }).pipe(Layer.provide(platform), Layer.orDie)
  return serveInProcess(services)
}

beforeAll(async () => {
  site = await serveSite({ "/page.html": send(PAGE, "text/html; charset=utf-8") })
  server = await startServer(site.host)
  const response = await fetch(`${server.url}/openapi.json`, { headers: { authorization: `Bearer ${KEY}` } })
  expect(response.status).toBe(200)
  doc = await response.json() as Json
})

afterAll(async () => {
  await server?.close()
  await site?.close()
})

const call = async (method: string, path: string, body?: unknown, key: string | null = KEY) => {
  const headers: Record<string, string> = {}
  if (key !== null) headers.authorization = `Bearer ${key}`
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const text = await response.text()
  const contentType = response.headers.get("content-type") ?? ""
  return { status: response.status, contentType, text, json: contentType.includes("json") ? JSON.parse(text) : undefined }
}

/** Every operation of the document: path, method and the operation object. */
const operations = (): Array<{ path: string; method: string; op: Json }> =>
  Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ path, method, op: op as Json })))

const resolveRef = (schema: Json): Json =>
  typeof schema.$ref === "string" ? doc.components.schemas[schema.$ref.split("/").pop()!] : schema

// ---------------------------------------------------------------------------

describe("the document", () => {
  it("has no error under Redocly's recommended ruleset, and only the warnings explained here", async () => {
    const config = await createConfig({ extends: ["recommended"] })
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "/openapi.json", config })
    const errors = problems.filter((p) => p.severity === "error")
    expect(errors.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([])
    const warnings = problems.filter((p) => p.severity === "warn").map((p) => `${p.ruleId} ${p.location[0]?.pointer}`).sort()
    expect(warnings).toEqual([
      // The health probes answer no 4xx: they read no body and need no key (503 is their only failure).
      "operation-4xx-response #/paths/~1healthz/get/responses",
      "operation-4xx-response #/paths/~1readyz/get/responses",
      "operation-4xx-response #/paths/~1version/get/responses",
      // Used by the event streams' x-sse-data extension, which linters do not follow (OpenAPI 3.1 has no field for an event's schema).
      "no-unused-components #/components/schemas/ChatCompletionChunk",
      "no-unused-components #/components/schemas/ResponseStreamEvent"
    ].sort())
  })

  it("declares servers, the MIT license and the bearer scheme, applied to every endpoint but the probes", () => {
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }])
    expect(doc.info.license).toEqual({ name: "MIT", identifier: "MIT" })
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "Bearer" })
    for (const { path, op } of operations()) {
      const probe = ["/healthz", "/readyz", "/version"].includes(path)
      expect(op.security, path).toEqual(probe ? [] : [{ bearer: [] }])
      if (!probe) expect(op.responses["401"]?.headers?.["WWW-Authenticate"], path).toBeDefined()
    }
  })

  it("lists every status each endpoint answers with", () => {
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).sort()
    const search = ["200", "400", "401", "413", "415", "429", "500", "502", "503", "504"]
    expect(statuses("/api/search/webSearch", "post")).toEqual(search)
    expect(statuses("/api/search/imageSearch", "post")).toEqual(search)
    expect(statuses("/api/search/webFetch", "post")).toEqual([...search, "403", "501"].sort())
    expect(statuses("/api/search/map", "post")).toEqual([...search, "403"].sort())
    expect(statuses("/v1/chat/completions", "post")).toEqual([...search, "404"].sort())
    expect(statuses("/v1/responses", "post")).toEqual([...search, "404"].sort())
    for (const path of ["/v1/embeddings", "/v1/rerank"]) expect(statuses(path, "post")).toEqual([...search, "404"].sort())
    expect(statuses("/v1/models", "get")).toEqual(["200", "401", "429", "500", "503"])
    expect(statuses("/openapi.json", "get")).toEqual(["200", "401", "429", "500", "503"])
    for (const probe of ["/healthz", "/version", "/readyz"]) expect(statuses(probe, "get")).toEqual(["200", "503"])
    for (const { path, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        expect(response.description, `${path} ${status}`).not.toMatch(/^(SearchErrorEnvelope|OpenAIErrorBody|TavilyErrorBody|SearxngErrorBody)$/)
        if (status === "429") expect(response.headers?.["Retry-After"], path).toBeDefined()
      }
    }
  })

  it("leaves request bodies open (the decoder ignores unknown keys) and keeps answers closed", () => {
    const requestSchemas = ["SearchRequest", "WebFetchRequest", "MapRequest", "ChatCompletionRequest", "JsonRpcMessage", "EmbeddingsRequest", "RerankRequest"]
    for (const name of requestSchemas) expect(JSON.stringify(doc.components.schemas[name]), name).not.toContain("additionalProperties\":false")
    for (const { path, op } of operations()) {
      const schema = op.requestBody?.content?.["application/json"]?.schema
      if (schema !== undefined && path !== "/v1/responses" && !path.startsWith("/tavily/")) expect(requestSchemas, path).toContain(schema.$ref?.split("/").pop())
    }
    // The Responses API refuses unknown fields, as OpenAI's does (test/wires/responsesBadInputs.test.ts), but for the input items a client echoes back.
    expect(doc.paths["/v1/responses"].post.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/ResponseCreateRequest")
    expect(doc.components.schemas.ResponseCreateRequest.additionalProperties).toBe(false)
    expect(JSON.stringify(doc.components.schemas.ResponseInputItem)).not.toContain("additionalProperties\":false")
    // Tavily's and SearXNG's wires refuse unknown fields too (test/wires/badInputs.test.ts).
    for (const name of ["TavilySearchRequest", "TavilyExtractRequest", "SearxngSearchParameters"]) expect(doc.components.schemas[name]?.additionalProperties, name).toBe(false)
    expect(doc.components.schemas.ChatCompletionResponse.additionalProperties).toBe(false)
  })

  it("describes the event stream: text/event-stream, each event's data a chat.completion.chunk or an error, then [DONE]", () => {
    const media = doc.paths["/v1/chat/completions"].post.responses["200"].content["text/event-stream"]
    expect(media.schema.type).toBe("string")
    expect(media[SSE_DATA_EXTENSION].anyOf.map((s: Json) => s.$ref)).toEqual(["#/components/schemas/ChatCompletionChunk", "#/components/schemas/OpenAIErrorBody"])
    expect(media[SSE_END_EXTENSION]).toBe("[DONE]")
    expect(doc.components.schemas.ChatCompletionChunk.properties.object).toEqual({ type: "string", enum: ["chat.completion.chunk"] })
  })

  it("is behind the key, like the API", async () => {
    const answer = await call("GET", "/openapi.json", undefined, null)
    expect(answer.status).toBe(401)
    expect(answer.json).toMatchObject({ success: false, code: "90402" })
  })
})

// ---------------------------------------------------------------------------

const GENERATE = `
import { registerHooks } from "node:module"
import { pathToFileURL } from "node:url"
const [input, output, typescript] = process.argv.slice(2)
const url = pathToFileURL(typescript).href
registerHooks({
  resolve: (specifier, context, next) =>
    specifier === "typescript" ? { url, format: "commonjs", shortCircuit: true } : next(specifier, context)
})
const { createClient } = await import("@hey-api/openapi-ts")
await createClient({
  input,
  output: { path: output, importFileExtension: ".ts" },
  plugins: ["@hey-api/client-fetch", "@hey-api/typescript", "@hey-api/sdk"],
  logs: { level: "silent" }
})
`

/** The calling code: what a user of the generated client writes. No casts, no any. */
const callsSource = (baseUrl: string, key: string, pageUrl: string) => `
import { client } from "./client/client.gen.ts"
import {
  chatCompletions, chatModels, healthHealthz, healthReadyz, healthVersion, metaOpenapi,
  searchImageSearch, searchMap, searchWebFetch, searchWebSearch
} from "./client/sdk.gen.ts"
import type { ChatCompletionRequest, SearchRequest } from "./client/types.gen.ts"

client.setConfig({ baseUrl: ${JSON.stringify(baseUrl)}, auth: ${JSON.stringify(key)} })

const query: SearchRequest = { keywords: "web search", num: 3 }
const web = await searchWebSearch({ body: query, throwOnError: true })
const images = await searchImageSearch({ body: { keywords: "image search" }, throwOnError: true })
const page = await searchWebFetch({ body: { url: ${JSON.stringify(pageUrl)}, format: "text", maxChars: 5000 }, throwOnError: true })
// One url gives one page; urls a list.
const pageData = page.data.data
if (Array.isArray(pageData)) throw new Error("one url answered a list")
const map = await searchMap({ body: { url: ${JSON.stringify(pageUrl)}, limit: 10 }, throwOnError: true })
const request: ChatCompletionRequest = { model: "scripted-1", messages: [{ role: "user", content: "hi there" }], temperature: 0.2, n: 1 }
const completion = await chatCompletions({ body: request, throwOnError: true })
const models = await chatModels({ throwOnError: true })
const health = await healthHealthz({ throwOnError: true })
const ready = await healthReadyz({ throwOnError: true })
const version = await healthVersion({ throwOnError: true })
const spec = await metaOpenapi({ throwOnError: true })
const refused = await searchWebSearch({ body: { keywords: "x", num: 101 } })

const firstChoice = completion.data.choices[0]
console.log(JSON.stringify({
  web: web.data.data.organic.map((result) => ({ link: result.link, position: result.position, date: result.date })),
  webQuery: web.data.data.query,
  images: images.data.data.map((image) => image.url),
  page: { title: pageData.title, content: pageData.content, url: pageData.url, fromCache: pageData.fromCache },
  map: { urls: map.data.data.urls, truncated: map.data.data.truncated },
  chat: { object: completion.data.object, content: firstChoice === undefined ? null : firstChoice.message.content, total: completion.data.usage.total_tokens },
  models: models.data.data.map((model) => model.id),
  health: health.data.status,
  ready: ready.data.status,
  version: version.data.name,
  openapi: spec.data["openapi"],
  refused: { status: refused.response === undefined ? null : refused.response.status, code: refused.error === undefined ? null : refused.error.code, message: refused.error === undefined ? null : refused.error.message }
}))
`

const TSCONFIG = {
  compilerOptions: {
    target: "es2023",
    module: "nodenext",
    moduleResolution: "nodenext",
    lib: ["es2023", "dom"],
    strict: true,
    noUncheckedIndexedAccess: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true
  },
  files: ["calls.ts"]
}

// A devDependency: `npm install` always brings it, so its absence is a broken install, not a skip.
if (!existsSync(TYPESCRIPT_6)) throw new Error(`no TypeScript 6 at ${TYPESCRIPT_6}: run npm install (devDependency "typescript-6": "npm:typescript@6.0.3")`)

describe("a client generated by @hey-api/openapi-ts", () => {
  let calls: Json

  beforeAll(() => {
    rmSync(OUT, { recursive: true, force: true })
    mkdirSync(OUT, { recursive: true })
    writeFileSync(resolve(OUT, "openapi.json"), JSON.stringify(doc, null, 2))
    writeFileSync(resolve(OUT, "generate.mjs"), GENERATE)
    const generated = spawnSync(process.execPath, ["generate.mjs", "openapi.json", "client", TYPESCRIPT_6], { cwd: OUT, encoding: "utf8", timeout: 120_000 })
    expect(generated.status, generated.stderr + generated.stdout).toBe(0)
    writeFileSync(resolve(OUT, "package.json"), JSON.stringify({ type: "module", private: true }))
    writeFileSync(resolve(OUT, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2))
    writeFileSync(resolve(OUT, "calls.ts"), callsSource(server.url, KEY, `${site.origin}/page.html`))
  }, 180_000)

  it("generates an SDK function for every operation", () => {
    const sdk = readFileSync(resolve(OUT, "client/sdk.gen.ts"), "utf8")
    for (const name of ["searchWebSearch", "searchImageSearch", "searchWebFetch", "chatCompletions", "chatModels", "metaOpenapi", "healthHealthz", "healthReadyz", "healthVersion"]) {
      expect(sdk).toContain(`export const ${name} =`)
    }
    // The open request bodies and the documented bounds reach the generated types.
    const types = readFileSync(resolve(OUT, "client/types.gen.ts"), "utf8")
    expect(types).toMatch(/export type ChatCompletionRequest = \{/)
    expect(types).toMatch(/export type ChatCompletionChunk = \{/)
  })

  it("type-checks the calling code (no casts, no any) with tsc: zero errors", () => {
    const source = readFileSync(resolve(OUT, "calls.ts"), "utf8")
    expect(source).not.toMatch(/\bas\s+[A-Za-z{[]|\bany\b|@ts-|!\./)
    const tsc = spawnSync(process.execPath, [resolve(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: OUT, encoding: "utf8", timeout: 120_000 })
    expect(tsc.stdout + tsc.stderr).toBe("")
    expect(tsc.status).toBe(0)
  }, 120_000)

  it("calls every endpoint of the real server and gets its answers", async () => {
    // Asynchronously: the server answers from this process.
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = execFile(process.execPath, ["calls.ts"], { cwd: OUT, encoding: "utf8", timeout: 60_000 }, (_error, stdout, stderr) =>
        done({ code: child.exitCode, stdout, stderr }))
    })
    expect(run.code, run.stderr).toBe(0)
    calls = JSON.parse(run.stdout)
    expect(calls.web.length).toBeGreaterThan(0)
    expect(calls.web.length).toBeLessThanOrEqual(3)
    expect(calls.web[0]).toMatchObject({ link: "https://periscope.invalid/docs/web-search", position: 1 })
    expect(calls.webQuery).toBe("web search")
    expect(calls.images).toContain("https://periscope.invalid/img/image-search.png")
    expect(calls.page).toMatchObject({ title: "Loopback page", url: `${site.origin}/page.html`, fromCache: false })
    expect(calls.page.content).toContain("A page served on loopback")
    expect(calls.map).toEqual({ urls: [`${site.origin}/page.html`], truncated: null })
    expect(calls.chat).toMatchObject({ object: "chat.completion", content: "Hello! You said: hi there" })
    expect(calls.chat.total).toBeGreaterThan(0)
    expect(calls.models).toEqual(["scripted-1"])
    expect(calls).toMatchObject({ health: "ok", ready: "ready", version: "periscope", openapi: "3.1.0" })
    expect(calls.refused).toEqual({ status: 400, code: "400", message: "num: must be an integer from 1 to 100, got 101" })
  })
})

// ---------------------------------------------------------------------------

/** Validates values against the document's own schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses). */
const validatorOf = () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addSchema({ ...doc, $id: "openapi.json" })
  return (pointer: string, value: unknown) => {
    const validate = ajv.getSchema(`openapi.json#${pointer}`)
    if (validate === undefined) throw new Error(`no schema at ${pointer}`)
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
  }
}
const pointerSegment = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1")
const responsePointer = (path: string, method: string, status: number, contentType = "application/json") =>
  `/paths/${pointerSegment(path)}/${method}/responses/${status}/content/${pointerSegment(contentType)}/schema`

/** A documented bound of a request schema: where (a dotted path, `[]` for items, `|i` for an anyOf branch) and what. */
interface Bound {
  readonly path: string
  readonly keyword: string
  readonly value: number | string
  readonly node: Json
}

const KEYWORDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems"]

const boundsOf = (schema: Json, path = ""): Array<Bound> => {
  const node = resolveRef(schema)
  const own = KEYWORDS.filter((k) => node[k] !== undefined).map((keyword) => ({ path, keyword, value: node[keyword], node }))
  const properties = Object.entries(node.properties ?? {}).flatMap(([key, value]) => boundsOf(value as Json, path === "" ? key : `${path}.${key}`))
  const items = node.items === undefined ? [] : boundsOf(node.items, `${path}[]`)
  const branches = (node.anyOf ?? []).flatMap((branch: Json, i: number) => boundsOf(branch, `${path}|${i}`))
  return [...own, ...properties, ...items, ...branches]
}

/** The value at a bound and one step past it; undefined for a kind of bound no probe is written for. */
const probeValues = (bound: Bound, element: () => unknown): readonly [inside: unknown, outside: unknown] | undefined => {
  const integer = bound.node.type === "integer"
  const step = integer ? 1 : 0.001
  const v = bound.value
  switch (bound.keyword) {
    case "minimum":
      return [v, (v as number) - step]
    case "maximum":
      return [v, (v as number) + step]
    case "exclusiveMinimum":
      return [(v as number) + step, v]
    case "exclusiveMaximum":
      return [(v as number) - step, v]
    case "minLength":
      return [element(), ""]
    case "maxLength":
      return ["a".repeat(v as number), "a".repeat((v as number) + 1)]
    case "minItems":
      return [Array.from({ length: v as number }, element), Array.from({ length: (v as number) - 1 }, element)]
    case "maxItems":
      return [Array.from({ length: v as number }, element), Array.from({ length: (v as number) + 1 }, element)]
  }
  return undefined
}

interface Endpoint {
  readonly path: string
  readonly schema: string
  readonly base: Json
  /** A valid element for a path's array (or a valid string for minLength). */
  readonly elements: Record<string, () => unknown>
  /** Bodies for bounds the generic rules cannot build (nested paths, patterns, URLs). */
  readonly special: Record<string, readonly [inside: Json, outside: Json]>
}

let toolCount = 0
const ENDPOINTS = (): ReadonlyArray<Endpoint> => {
  const pageUrl = `${site.origin}/page.html`
  const chatBase = { model: "scripted-1", messages: [{ role: "user", content: "hi" }] }
  return [
    {
      path: "/api/search/webSearch",
      schema: "SearchRequest",
      base: { keywords: "web search" },
      elements: { keywords: () => "a", sources: () => "local", includeDomains: () => "example.com", excludeDomains: () => "example.com" },
      special: {
        "keywords:pattern": [{ keywords: " web " }, { keywords: "   " }],
        // Content's bounds apply with content (without it they are refused whatever their value).
        "maxCharsPerResult:minimum": [{ keywords: "web", content: "highlights", maxCharsPerResult: 1 }, { keywords: "web", content: "highlights", maxCharsPerResult: 0 }],
        "maxCharsPerResult:maximum": [
          { keywords: "web", content: "text", maxCharsPerResult: 100_000 },
          { keywords: "web", content: "text", maxCharsPerResult: 100_001 }
        ],
        "maxTokens:minimum": [{ keywords: "web", content: "highlights", maxTokens: 1 }, { keywords: "web", content: "highlights", maxTokens: 0 }],
        "maxTokens:maximum": [{ keywords: "web", content: "highlights", maxTokens: 200_000 }, { keywords: "web", content: "highlights", maxTokens: 200_001 }],
        ...Object.fromEntries((["includeDomains", "excludeDomains"] as const).flatMap((field) => [
          [`${field}[]:maxLength`, [
            { keywords: "web", [field]: [`${"a".repeat(61)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}`] },
            { keywords: "web", [field]: [`${"a".repeat(62)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}`] }
          ]],
          [`${field}[]:pattern`, [{ keywords: "web", [field]: ["docs.example.com/guide"] }, { keywords: "web", [field]: ["not a domain"] }]]
        ])),
        // Rules of core/search/SearchQuery.ts, probed once the document states them as patterns.
        "language:pattern": [{ keywords: "web", language: "en" }, { keywords: "web", language: "english" }],
        "region:pattern": [{ keywords: "web", region: "US" }, { keywords: "web", region: "USA" }],
        "sources[]:pattern": [{ keywords: "web", sources: ["local"] }, { keywords: "web", sources: ["bad name"] }],
        "freshness|1.from:pattern": [
          { keywords: "web", freshness: { from: "2024-01-01", to: "2024-12-31" } },
          { keywords: "web", freshness: { from: "2024-13-01", to: "2024-12-31" } }
        ],
        "freshness|1.to:pattern": [
          { keywords: "web", freshness: { from: "2024-01-01", to: "2024-12-31" } },
          { keywords: "web", freshness: { from: "2024-01-01", to: "2024-12-32" } }
        ]
      }
    },
    {
      path: "/api/search/webFetch",
      schema: "WebFetchRequest",
      base: { url: pageUrl },
      elements: { url: () => pageUrl },
      special: {
        // The longest URL allowed is still the loopback page (the query is padding).
        "url:maxLength": [{ url: `${pageUrl}?${"a".repeat(8192 - pageUrl.length - 1)}` }, { url: `${pageUrl}?${"a".repeat(8192 - pageUrl.length)}` }],
        // urls goes instead of url, never beside it.
        "urls:minItems": [{ urls: [pageUrl] }, { urls: [] }],
        "urls:maxItems": [{ urls: Array.from({ length: 20 }, () => pageUrl) }, { urls: Array.from({ length: 21 }, () => pageUrl) }],
        "urls[]:minLength": [{ urls: [pageUrl] }, { urls: [""] }],
        "urls[]:maxLength": [
          { urls: [`${pageUrl}?${"a".repeat(8192 - pageUrl.length - 1)}`] },
          { urls: [`${pageUrl}?${"a".repeat(8192 - pageUrl.length)}`] }
        ],
        "query:pattern": [{ url: pageUrl, query: "loopback" }, { url: pageUrl, query: "   " }]
      }
    },
    {
      path: "/api/search/map",
      schema: "MapRequest",
      base: { url: pageUrl },
      elements: { url: () => pageUrl },
      special: {
        "url:maxLength": [{ url: `${pageUrl}?${"a".repeat(8192 - pageUrl.length - 1)}` }, { url: `${pageUrl}?${"a".repeat(8192 - pageUrl.length)}` }]
      }
    },
    {
      path: "/v1/chat/completions",
      schema: "ChatCompletionRequest",
      base: chatBase,
      elements: {
        messages: () => ({ role: "user", content: "hi" }),
        model: () => "scripted-1",
        "stop|0": () => "s",
        "stop|1": () => "s",
        tools: () => ({ type: "function", function: { name: `tool_${toolCount++}` } })
      },
      special: {
        "stop|1[]:minLength": [{ ...chatBase, stop: ["s"] }, { ...chatBase, stop: [""] }],
        // Grounding's controls (web_search_options and OpenRouter's web plugin).
        ...((grounded: (extra: Json) => Json) => ({
          "web_search_options.filters|0.allowed_domains|0:maxItems": [
            grounded({ web_search_options: { filters: { allowed_domains: Array.from({ length: 20 }, (_, i) => `d${i}.example`) } } }),
            grounded({ web_search_options: { filters: { allowed_domains: Array.from({ length: 21 }, (_, i) => `d${i}.example`) } } })
          ],
          "web_search_options.filters|0.allowed_domains|0[]:maxLength": [
            grounded({ web_search_options: { filters: { allowed_domains: [`${"a".repeat(61)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}`] } } }),
            grounded({ web_search_options: { filters: { allowed_domains: [`${"a".repeat(62)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}`] } } })
          ],
          "web_search_options.filters|0.allowed_domains|0[]:pattern": [
            grounded({ web_search_options: { filters: { allowed_domains: ["docs.example.com"] } } }),
            grounded({ web_search_options: { filters: { allowed_domains: ["not a domain"] } } })
          ],
          "web_search_options.max_results:minimum": [grounded({ web_search_options: { max_results: 1 } }), grounded({ web_search_options: { max_results: 0 } })],
          "web_search_options.max_results:maximum": [grounded({ web_search_options: { max_results: 20 } }), grounded({ web_search_options: { max_results: 21 } })],
          "plugins:maxItems": [grounded({ plugins: Array.from({ length: 8 }, () => ({ id: "web" })) }), grounded({ plugins: Array.from({ length: 9 }, () => ({ id: "web" })) })],
          "plugins[].max_results:minimum": [grounded({ plugins: [{ id: "web", max_results: 1 }] }), grounded({ plugins: [{ id: "web", max_results: 0 }] })],
          "plugins[].max_results:maximum": [grounded({ plugins: [{ id: "web", max_results: 20 }] }), grounded({ plugins: [{ id: "web", max_results: 21 }] })],
          "plugins[].search_prompt:maxLength": [
            grounded({ plugins: [{ id: "web", search_prompt: "a".repeat(4000) }] }),
            grounded({ plugins: [{ id: "web", search_prompt: "a".repeat(4001) }] })
          ],
          "plugins[].engine:pattern": [grounded({ plugins: [{ id: "web", engine: "native" }] }), grounded({ plugins: [{ id: "web", engine: "no engine" }] })]
        }))((extra) => ({ ...chatBase, ...extra })),
        "tools[].function.name:pattern": [
          { ...chatBase, tools: [{ type: "function", function: { name: "get_weather-2" } }] },
          { ...chatBase, tools: [{ type: "function", function: { name: "get weather" } }] }
        ]
      }
    }
  ]
}

/** Sets a bound's value in a copy of the base body (top-level fields and their anyOf branches). */
const withValue = (base: Json, path: string, value: unknown): Json => {
  const field = path.split("|")[0]!
  if (field.includes(".") || field.includes("[]")) throw new Error(`no generic placement for ${path}`)
  return { ...base, [field]: value }
}

/** The field a 400 names: the search envelope's message starts with it, the OpenAI body's param is it. */
const namedField = (answer: Json): string =>
  answer.error !== undefined ? String(answer.error.param) : String(answer.message).split(":")[0]!

describe("the document agrees with the server", () => {
  it("a request it calls valid is answered, also with fields it does not name", async () => {
    const validate = validatorOf()
    for (const endpoint of ENDPOINTS()) {
      const schemaPointer = `/components/schemas/${endpoint.schema}`
      expect(validate(schemaPointer, endpoint.base), endpoint.path).toEqual([])
      const plain = await call("POST", endpoint.path, endpoint.base)
      expect(plain.status, `${endpoint.path} ${plain.text}`).toBe(200)
      const extended = { ...endpoint.base, periscope_unknown_field: { nested: true } }
      expect(validate(schemaPointer, extended), endpoint.path).toEqual([])
      const open = await call("POST", endpoint.path, extended)
      expect(open.status, `${endpoint.path} ${open.text}`).toBe(200)
    }
  })

  it("each documented bound is the one enforced: at the bound answered, one step past it 400 naming the field", async () => {
    const validate = validatorOf()
    const probed: Array<string> = []
    for (const endpoint of ENDPOINTS()) {
      const bounds = boundsOf(doc.components.schemas[endpoint.schema])
      for (const bound of bounds) {
        const key = `${bound.path}:${bound.keyword}`
        let bodies = endpoint.special[key]
        if (bodies === undefined) {
          const element = endpoint.elements[bound.path] ?? endpoint.elements[bound.path.split("|")[0]!] ?? (() => "a")
          const values = probeValues(bound, element)
          if (values === undefined) throw new Error(`no probe for the documented bound ${endpoint.schema} ${key}`)
          bodies = [withValue(endpoint.base, bound.path, values[0]), withValue(endpoint.base, bound.path, values[1])]
        }
        const [inside, outside] = bodies
        const schemaPointer = `/components/schemas/${endpoint.schema}`
        expect(validate(schemaPointer, inside), `${key}: the document accepts the value at the bound`).toEqual([])
        expect(validate(schemaPointer, outside), `${key}: the document refuses the value past the bound`).not.toEqual([])
        const accepted = await call("POST", endpoint.path, inside)
        expect(accepted.status, `${endpoint.path} ${key} at the bound: ${accepted.text.slice(0, 300)}`).not.toBe(400)
        const refused = await call("POST", endpoint.path, outside)
        expect(refused.status, `${endpoint.path} ${key} past the bound: ${refused.text.slice(0, 300)}`).toBe(400)
        expect(namedField(refused.json).split(/[.[]/)[0], `${key}: ${refused.text.slice(0, 300)}`).toBe(bound.path.split(/[.|[]/)[0])
        probed.push(`${endpoint.schema}.${key}`)
      }
    }
    // The bounds the decoders enforce, each documented (a bound lost from the document fails here).
    expect(probed).toEqual(expect.arrayContaining([
      "SearchRequest.keywords:maxLength", "SearchRequest.num:maximum", "SearchRequest.num:minimum", "SearchRequest.sources:maxItems",
      "WebFetchRequest.url:maxLength", "WebFetchRequest.maxChars:maximum", "WebFetchRequest.urls:maxItems", "WebFetchRequest.query:maxLength",
      "WebFetchRequest.maxTokens:maximum", "MapRequest.url:maxLength", "MapRequest.limit:maximum",
      "ChatCompletionRequest.messages:minItems", "ChatCompletionRequest.n:maximum", "ChatCompletionRequest.max_tokens:exclusiveMaximum",
      "ChatCompletionRequest.temperature:maximum", "ChatCompletionRequest.top_p:exclusiveMinimum", "ChatCompletionRequest.stop|1:maxItems",
      "ChatCompletionRequest.tools:maxItems", "ChatCompletionRequest.tools[].function.name:pattern"
    ]))
  }, 120_000)

  it("every answer matches the schema the document gives for its status", async () => {
    const validate = validatorOf()
    const pageUrl = `${site.origin}/page.html`
    const cases: Array<readonly [method: string, path: string, body: unknown, key: string | null, status: number]> = [
      ["POST", "/api/search/webSearch", { keywords: "web search", explain: true }, KEY, 200],
      ["POST", "/api/search/webSearch", { keywords: "web search", num: 0 }, KEY, 400],
      ["POST", "/api/search/webSearch", { keywords: "web search" }, null, 401],
      ["POST", "/api/search/imageSearch", { keywords: "image search" }, KEY, 200],
      ["POST", "/api/search/webFetch", { url: pageUrl }, KEY, 200],
      ["POST", "/api/search/webFetch", { url: "http://10.0.0.1/" }, KEY, 403],
      ["POST", "/v1/chat/completions", { model: "scripted-1", messages: [{ role: "user", content: "hi" }] }, KEY, 200],
      ["POST", "/v1/chat/completions", { model: "no-such-model", messages: [{ role: "user", content: "hi" }] }, KEY, 404],
      ["POST", "/v1/chat/completions", { messages: [] }, KEY, 400],
      ["GET", "/v1/models", undefined, KEY, 200],
      ["GET", "/v1/models", undefined, null, 401],
      ["GET", "/openapi.json", undefined, KEY, 200],
      ["GET", "/healthz", undefined, null, 200],
      ["GET", "/readyz", undefined, null, 200],
      ["GET", "/version", undefined, null, 200]
    ]
    for (const [method, path, body, key, status] of cases) {
      const answer = await call(method, path, body, key)
      expect(answer.status, `${method} ${path}: ${answer.text.slice(0, 300)}`).toBe(status)
      expect(validate(responsePointer(path, method.toLowerCase(), status), answer.json), `${method} ${path} ${status}`).toEqual([])
    }
  })

  it("a streamed answer is text/event-stream whose events match x-sse-data and end with [DONE]", async () => {
    const validate = validatorOf()
    const answer = await call("POST", "/v1/chat/completions", {
      model: "scripted-1", messages: [{ role: "user", content: "stream me" }], stream: true, stream_options: { include_usage: true }
    })
    expect(answer.status).toBe(200)
    expect(answer.contentType).toMatch(/^text\/event-stream/)
    const data = answer.text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice("data: ".length))
    expect(data.at(-1)).toBe(doc.paths["/v1/chat/completions"].post.responses["200"].content["text/event-stream"][SSE_END_EXTENSION])
    const events = data.slice(0, -1).map((text) => JSON.parse(text))
    expect(events.length).toBeGreaterThan(1)
    const pointer = `${responsePointer("/v1/chat/completions", "post", 200, "text/event-stream").replace(/\/schema$/, "")}/${SSE_DATA_EXTENSION}`
    for (const event of events) expect(validate(pointer, event), JSON.stringify(event)).toEqual([])
    expect(events.map((e) => e.choices[0]?.delta?.content ?? "").join("")).toBe("Hello! You said: stream me")
  })
})
