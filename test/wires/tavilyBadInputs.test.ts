/**
 * /tavily's bad inputs, each with its exact status and Tavily's `{"detail": {"error"}}` naming
 * the field and the rule: wrong types, unknown fields, out-of-range values, bodies too large or
 * not JSON, keys missing or wrong (as a header or as the body's api_key), the rate limit. On the
 * real Node server, once with its express lane answering /tavily and once with every route on
 * the full stack: the same cases, the same answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashKey, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import type { InProcessServer } from "../support/servers.ts"
import { startWireServer, WIRE_KEY } from "./wireServers.ts"

const LIMITED_KEY = "tavily-limited-key-0123"
const THREE_KEY = "tavily-three-a-minute-0123"
const SEARCH = "/tavily/search"
const EXTRACT = "/tavily/extract"

interface Case {
  readonly name: string
  readonly path?: string
  readonly method?: string
  readonly body?: unknown
  /** Raw body text, sent as is. */
  readonly raw?: string
  readonly headers?: Record<string, string>
  /** null: no Authorization header. */
  readonly key?: string | null
  readonly status: number
  readonly error?: RegExp
}

const q = { query: "telescope" }
const domains = (n: number) => Array.from({ length: n }, (_, i) => `site${i}.example`)

const searchCases: Array<Case> = [
  // Wrong types
  { name: "query missing", body: {}, status: 400, error: /^query: is required$/ },
  { name: "query a number", body: { query: 5 }, status: 400, error: /^query: must be a non-empty string of at most 1000 characters.*, got 5$/ },
  { name: "query blank", body: { query: "   " }, status: 400, error: /^query: must be a non-empty string/ },
  { name: "max_results a string", body: { ...q, max_results: "5" }, status: 400, error: /^max_results: must be an integer from 0 to 20, got "5" \(a string\)$/ },
  { name: "include_answer \"yes\"", body: { ...q, include_answer: "yes" }, status: 400, error: /^include_answer: must be a boolean, basic or advanced, got "yes"/ },
  { name: "include_raw_content \"html\"", body: { ...q, include_raw_content: "html" }, status: 400, error: /^include_raw_content: must be a boolean, markdown or text/ },
  { name: "include_images \"true\"", body: { ...q, include_images: "true" }, status: 400, error: /^include_images: must be a boolean, got "true"/ },
  { name: "include_domains a string", body: { ...q, include_domains: "example.com" }, status: 400, error: /^include_domains: must be an array of at most 300 domains/ },
  { name: "include_domains with a non-domain", body: { ...q, include_domains: ["example.com", "not a domain!"] }, status: 400, error: /^include_domains\[1\]: must be a domain such as example\.com/ },
  { name: "body an array", body: [q], status: 400, error: /^request body: must be a JSON object/ },
  // Unknown fields
  { name: "a misspelt field", body: { ...q, include_domain: ["example.com"] }, status: 400, error: /^include_domain: is not a known key \(did you mean "include_domains"\?\)/ },
  { name: "a field Tavily does not have", body: { ...q, num: 5 }, status: 400, error: /^num: is not a known key, got 5$/ },
  // Out of range
  { name: "max_results 21", body: { ...q, max_results: 21 }, status: 400, error: /^max_results: must be an integer from 0 to 20, got 21$/ },
  { name: "max_results -1", body: { ...q, max_results: -1 }, status: 400, error: /^max_results: must be an integer from 0 to 20, got -1$/ },
  { name: "max_results 2.5", body: { ...q, max_results: 2.5 }, status: 400, error: /^max_results: must be an integer from 0 to 20, got 2.5$/ },
  { name: "chunks_per_source 4", body: { ...q, chunks_per_source: 4 }, status: 400, error: /^chunks_per_source: must be an integer from 1 to 3, got 4$/ },
  { name: "search_depth \"deep\"", body: { ...q, search_depth: "deep" }, status: 400, error: /^search_depth: must be basic, advanced, fast or ultra-fast, got "deep"/ },
  { name: "topic \"sports\"", body: { ...q, topic: "sports" }, status: 400, error: /^topic: must be general, news or finance/ },
  { name: "time_range \"hour\"", body: { ...q, time_range: "hour" }, status: 400, error: /^time_range: must be day, week, month, year \(or d, w, m, y\)/ },
  { name: "days 0", body: { ...q, days: 0 }, status: 400, error: /^days: must be an integer from 1 to 3650, got 0$/ },
  { name: "start_date not a date", body: { ...q, start_date: "2026-13-01" }, status: 400, error: /^start_date: must be a date YYYY-MM-DD, got "2026-13-01"/ },
  { name: "end_date before start_date", body: { ...q, start_date: "2026-02-01", end_date: "2026-01-01" }, status: 400, error: /^end_date: must not be before start_date/ },
  { name: "301 include_domains", body: { ...q, include_domains: domains(301) }, status: 400, error: /^include_domains: must be an array of at most 300 domains/ },
  { name: "151 exclude_domains", body: { ...q, exclude_domains: domains(151) }, status: 400, error: /^exclude_domains: must be an array of at most 150 domains/ },
  { name: "include_domains_mode \"only\"", body: { ...q, include_domains_mode: "only" }, status: 400, error: /^include_domains_mode: must be restrict or prefer/ },
  { name: "country \"atlantis\"", body: { ...q, country: "atlantis" }, status: 400, error: /^country: must be a country: its English name \(united states\) or its 2-letter code \(US\), got "atlantis"/ },
  { name: "language \"english\"", body: { ...q, language: "english" }, status: 400, error: /^language: must be a language code of 2 or 3 letters/ },
  { name: "fetch_timeout 61", body: { ...q, fetch_timeout: 61 }, status: 400, error: /^fetch_timeout: must be a number of seconds from 1 to 60, got 61$/ },
  // The body itself
  { name: "bad JSON", raw: "{\"query\":", status: 400, error: /^request body: is not valid JSON/ },
  { name: "empty body", raw: "", status: 400, error: /^request body: is empty/ },
  { name: "wrong content type", raw: "query=x", headers: { "content-type": "text/plain" }, status: 415, error: /^Content-Type: must be application\/json, got "text\/plain"$/ },
  { name: "body over 256 KiB", raw: JSON.stringify({ ...q, pad: "a".repeat(256 * 1024) }), status: 413, error: /^request body: must be at most 262144 bytes/ },
  { name: "body over 256 KiB, the key in it", key: null, raw: JSON.stringify({ ...q, api_key: WIRE_KEY, pad: "a".repeat(256 * 1024) }), status: 413, error: /^request body: must be at most 262144 bytes/ },
  // Keys
  { name: "no key", key: null, body: q, status: 401, error: /missing API key/ },
  { name: "wrong key", key: "tvly-wrong", body: q, status: 401, error: /^Authorization: invalid API key$/ },
  { name: "wrong api_key in the body", key: null, body: { ...q, api_key: "tvly-wrong" }, status: 401, error: /^Authorization: invalid API key$/ },
  { name: "api_key not a string, no header", key: null, body: { ...q, api_key: 5 }, status: 401, error: /missing API key/ },
  { name: "bad JSON without a key", key: null, raw: "{\"api_key\":", status: 401, error: /missing API key/ },
  { name: "GET instead of POST", method: "GET", status: 405, error: /^\/tavily\/search accepts POST, not GET$/ }
]

const extractCases: Array<Case> = [
  { name: "urls missing", path: EXTRACT, body: {}, status: 400, error: /^urls: is required$/ },
  { name: "urls a number", path: EXTRACT, body: { urls: 5 }, status: 400, error: /^urls: must be a URL or an array of 1 to 20 URLs, got 5$/ },
  { name: "urls empty", path: EXTRACT, body: { urls: [] }, status: 400, error: /^urls: must be a URL or an array of 1 to 20 URLs/ },
  { name: "21 urls", path: EXTRACT, body: { urls: Array.from({ length: 21 }, (_, i) => `https://example.com/${i}`) }, status: 400, error: /^urls: must be a URL or an array of 1 to 20 URLs/ },
  { name: "format \"html\"", path: EXTRACT, body: { urls: "https://example.com/", format: "html" }, status: 400, error: /^format: must be markdown or text, got "html"/ },
  { name: "extract_depth \"deep\"", path: EXTRACT, body: { urls: "https://example.com/", extract_depth: "deep" }, status: 400, error: /^extract_depth: must be basic or advanced/ },
  { name: "timeout 0", path: EXTRACT, body: { urls: "https://example.com/", timeout: 0 }, status: 400, error: /^timeout: must be a number of seconds from 1 to 60, got 0$/ },
  { name: "chunks_per_source 6", path: EXTRACT, body: { urls: "https://example.com/", chunks_per_source: 6 }, status: 400, error: /^chunks_per_source: must be an integer from 1 to 5, got 6$/ },
  { name: "unknown field", path: EXTRACT, body: { urls: "https://example.com/", url: "https://example.com/" }, status: 400, error: /^url: is not a known key/ },
  { name: "no key", path: EXTRACT, key: null, body: { urls: "https://example.com/" }, status: 401, error: /missing API key/ }
]

let server: InProcessServer

const send = (c: Case) => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  const key = c.key === undefined ? WIRE_KEY : c.key
  if (key !== null) headers.authorization = `Bearer ${key}`
  const method = c.method ?? "POST"
  const body = method === "GET" ? undefined : c.raw ?? JSON.stringify(c.body)
  return fetch(server.url + (c.path ?? SEARCH), { method, headers: { ...headers, ...c.headers }, body })
}

const check = async (c: Case) => {
  const response = await send(c)
  const text = await response.text()
  expect(response.status, text).toBe(c.status)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  const body = JSON.parse(text)
  expect(Object.keys(body)).toEqual(["detail"])
  expect(Object.keys(body.detail)).toEqual(["error"])
  if (c.error !== undefined) expect(body.detail.error).toMatch(c.error)
  return response
}

for (const expressLane of [true, false]) describe(expressLane ? "Node server, express lane on" : "Node server, express lane off", () => {
  beforeAll(async () => {
    server = await startWireServer({
      keys: [
        ...recordsFromPlainKeys([WIRE_KEY], 1_000_000),
        { name: "limited", sha256: hashKey(LIMITED_KEY), requestsPerMinute: 1 },
        { name: "three", sha256: hashKey(THREE_KEY), requestsPerMinute: 3 }
      ],
      expressLane
    })
  })
  afterAll(() => server.close())

  describe("search", () => {
    for (const c of searchCases) it(c.name, () => check(c))
  })
  describe("extract", () => {
    for (const c of extractCases) it(c.name, () => check(c))
  })

  it("401 carries WWW-Authenticate: Bearer; 405 names the methods in Allow", async () => {
    expect((await check({ name: "", key: null, body: q, status: 401 })).headers.get("www-authenticate")).toBe("Bearer")
    expect((await check({ name: "", method: "GET", status: 405 })).headers.get("allow")).toBe("POST")
  })

  it("a key over its limit gets 429 with Retry-After, whether it came as a header or as api_key", async () => {
    const first = await send({ name: "", key: LIMITED_KEY, body: q, status: 200 })
    expect(first.status).toBe(200)
    const second = await check({ name: "", key: LIMITED_KEY, body: q, status: 429, error: /rate limit of 1 requests per minute exceeded for key "limited"/ })
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    await check({ name: "", key: null, body: { ...q, api_key: LIMITED_KEY }, status: 429 })
  })

  it("extract counts each URL against the key's limit", async () => {
    const refused = ["http://10.0.0.1/a", "http://10.0.0.1/b", "http://10.0.0.1/c"]
    const three = await send({ name: "", path: EXTRACT, key: THREE_KEY, body: { urls: refused, include_usage: true }, status: 200 })
    expect(three.status).toBe(200)
    expect(await three.json()).toMatchObject({ results: [], failed_results: refused.map((url) => ({ url })), usage: { credits: 3 } })
    await check({ name: "", path: EXTRACT, key: THREE_KEY, body: { urls: refused[0] }, status: 429, error: /rate limit of 3 requests per minute exceeded for key "three"/ })
  })

  it("fields sent as null count as left out, as Tavily's Python callers send them", async () => {
    const response = await send({ name: "", body: { query: "web search", max_results: null, topic: null, include_answer: null, include_domains: null, api_key: null }, status: 200 })
    expect(response.status).toBe(200)
    expect((await response.json() as any).results.length).toBeGreaterThan(0)
  })

  it("max_results 0: no results, the answer alone", async () => {
    const response = await send({ name: "", body: { ...q, max_results: 0 }, status: 200 })
    expect(await response.json()).toMatchObject({ query: "telescope", results: [], answer: null })
  })
})
