/**
 * /searxng/search's bad inputs, each with its exact status and SearXNG's `{"error": "..."}`
 * naming the parameter and the rule: wrong values, unknown parameters, out-of-range values, a
 * form too large or not a form, keys missing or wrong, the rate limit, the wrong method. On the
 * real Node server with its express lane answering the route, and with every route on the full
 * stack: the same cases, the same answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashKey, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import type { InProcessServer } from "../support/servers.ts"
import { startWireServer, WIRE_KEY } from "./wireServers.ts"

const LIMITED_KEY = "searxng-limited-key-0123"
const PATH = "/searxng/search"

interface Case {
  readonly name: string
  readonly method?: string
  /** The query string (without "?"). */
  readonly query?: string
  /** A POST's form, sent as is. */
  readonly form?: string
  readonly headers?: Record<string, string>
  readonly key?: string | null
  readonly status: number
  readonly error?: RegExp
}

const cases: Array<Case> = [
  // Wrong values
  { name: "q missing", query: "format=json", status: 400, error: /^q: is required$/ },
  { name: "q blank", query: "q=%20%20&format=json", status: 400, error: /^q: must be a non-empty search query of at most 1000 characters/ },
  { name: "format html", query: "q=web&format=html", status: 400, error: /^format: must be json, the one format this server answers, got "html"/ },
  { name: "format csv", query: "q=web&format=csv", status: 400, error: /^format: must be json/ },
  { name: "time_range hour", query: "q=web&time_range=hour", status: 400, error: /^time_range: must be day, week, month or year, got "hour"/ },
  { name: "safesearch 3", query: "q=web&safesearch=3", status: 400, error: /^safesearch: must be 0, 1 or 2, got "3"/ },
  { name: "language english", query: "q=web&language=english", status: 400, error: /^language: must be all, auto or a language code such as en or en-US, got "english"/ },
  { name: "categories music", query: "q=web&categories=general,music", status: 400, error: /^categories: must be a comma-separated list of general, images, news, got "general,music"/ },
  { name: "engines naming no source", query: "q=web&engines=local,google", status: 400, error: /^engines: names no configured source, got "google"; configured: local$/ },
  // Unknown parameters
  { name: "an unknown parameter", query: "q=web&count=5", status: 400, error: /^count: is not a known key, got "5"/ },
  { name: "a misspelt parameter", query: "q=web&time_rang=day", status: 400, error: /^time_rang: is not a known key \(did you mean "time_range"\?\)/ },
  // Out of range
  { name: "pageno 0", query: "q=web&pageno=0", status: 400, error: /^pageno: must be an integer from 1 to 10, got "0"/ },
  { name: "pageno 11", query: "q=web&pageno=11", status: 400, error: /^pageno: must be an integer from 1 to 10, got "11"/ },
  { name: "pageno abc", query: "q=web&pageno=abc", status: 400, error: /^pageno: must be an integer from 1 to 10/ },
  { name: "q over 1000 characters", query: `q=${"a".repeat(1001)}`, status: 400, error: /^q: must be a non-empty search query of at most 1000 characters/ },
  // The form
  { name: "a POST form with a bad value", method: "POST", form: "q=web&pageno=0", status: 400, error: /^pageno: must be an integer from 1 to 10/ },
  { name: "a POST of JSON", method: "POST", form: "{\"q\":\"web\"}", headers: { "content-type": "application/json" }, status: 415, error: /^Content-Type: must be application\/x-www-form-urlencoded/ },
  { name: "a POST form over 64 KiB", method: "POST", form: `q=web&theme=${"a".repeat(64 * 1024)}`, status: 413, error: /^request body: must be at most 65536 bytes/ },
  // Keys and methods
  { name: "no key", key: null, query: "q=web&format=json", status: 401, error: /missing API key/ },
  { name: "wrong key", key: "nope", query: "q=web&format=json", status: 401, error: /^Authorization: invalid API key$/ },
  { name: "DELETE", method: "DELETE", query: "q=web", status: 405, error: /^\/searxng\/search accepts GET, POST, not DELETE$/ }
]

let server: InProcessServer

const send = (c: Case) => {
  const headers: Record<string, string> = {}
  const key = c.key === undefined ? WIRE_KEY : c.key
  if (key !== null) headers.authorization = `Bearer ${key}`
  const method = c.method ?? "GET"
  if (c.form !== undefined) headers["content-type"] = "application/x-www-form-urlencoded"
  return fetch(`${server.url}${PATH}${c.query === undefined ? "" : `?${c.query}`}`, { method, headers: { ...headers, ...c.headers }, body: c.form })
}

const check = async (c: Case) => {
  const response = await send(c)
  const text = await response.text()
  expect(response.status, text).toBe(c.status)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  const body = JSON.parse(text)
  expect(Object.keys(body)).toEqual(["error"])
  if (c.error !== undefined) expect(body.error).toMatch(c.error)
  return response
}

for (const expressLane of [true, false]) describe(expressLane ? "Node server, express lane on" : "Node server, express lane off", () => {
  beforeAll(async () => {
    server = await startWireServer({
      keys: [...recordsFromPlainKeys([WIRE_KEY], 1_000_000), { name: "limited", sha256: hashKey(LIMITED_KEY), requestsPerMinute: 1 }],
      expressLane
    })
  })
  afterAll(() => server.close())

  for (const c of cases) it(c.name, () => check(c))

  it("401 carries WWW-Authenticate: Bearer; 405 names the methods in Allow", async () => {
    expect((await check({ name: "", key: null, query: "q=web", status: 401 })).headers.get("www-authenticate")).toBe("Bearer")
    expect((await check({ name: "", method: "PUT", query: "q=web", status: 405 })).headers.get("allow")).toBe("GET, POST")
  })

  it("a key over its limit gets 429 with Retry-After", async () => {
    expect((await send({ name: "", key: LIMITED_KEY, query: "q=web", status: 200 })).status).toBe(200)
    const refused = await check({ name: "", key: LIMITED_KEY, query: "q=web", status: 429, error: /rate limit of 1 requests per minute exceeded/ })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
  })

  it("accepts SearXNG's page preferences and empty values as its callers send them; a repeated parameter counts once, its first value", async () => {
    const response = await send({ name: "", query: "q=web+search&q=ignored&format=json&format=csv&theme=simple&image_proxy=0&time_range=&categories=&language=&results_on_new_tab=0", status: 200 })
    expect(response.status).toBe(200)
    const body = await response.json() as any
    expect(body.query).toBe("web search")
    expect(body.results.length).toBeGreaterThan(0)
  })
})
