/**
 * Every endpoint's bad inputs, each with the exact HTTP status, business or
 * OpenAI code, and a message naming the field and the rule. Runs against the
 * real Node HTTP server on an ephemeral port, once with its express lane
 * answering the hot routes and once with every route on the full stack.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashKey } from "../../core/auth/KeyRecord.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

const LIMITED_KEY = "limited-key-abcdef"

let server: RunningServer

interface Case {
  readonly name: string
  readonly method?: string
  readonly path: string
  readonly body?: unknown
  /** Raw body text, sent as is. */
  readonly raw?: string
  readonly headers?: Record<string, string>
  readonly key?: string | null
  readonly status: number
  /** Search envelope code, or OpenAI error code/type. */
  readonly code?: string
  readonly type?: string
  readonly param?: string | null
  readonly message?: RegExp
}

const WEB = "/api/search/webSearch"
const IMAGE = "/api/search/imageSearch"
const CHAT = "/v1/chat/completions"
const user = [{ role: "user", content: "hi" }]
const tool = (name: string) => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } })

const searchCases = (path: string): Array<Case> => [
  { name: "missing keywords", path, body: {}, status: 400, code: "400", message: /^keywords: is required$/ },
  { name: "empty keywords", path, body: { keywords: "" }, status: 400, code: "400", message: /^keywords: must be a non-empty string/ },
  { name: "blank keywords", path, body: { keywords: "   " }, status: 400, code: "400", message: /^keywords: must be a non-empty string/ },
  { name: "keywords over 1000 chars", path, body: { keywords: "a".repeat(1001) }, status: 400, code: "400", message: /^keywords: .*at most 1000 characters/ },
  { name: "keywords not a string", path, body: { keywords: 5 }, status: 400, code: "400", message: /^keywords: .*got 5$/ },
  { name: "num 0", path, body: { keywords: "x", num: 0 }, status: 400, code: "400", message: /^num: must be an integer from 1 to 100, got 0$/ },
  { name: "num 101", path, body: { keywords: "x", num: 101 }, status: 400, code: "400", message: /^num: must be an integer from 1 to 100, got 101$/ },
  { name: "num 2.5", path, body: { keywords: "x", num: 2.5 }, status: 400, code: "400", message: /^num: must be an integer from 1 to 100, got 2.5$/ },
  { name: "num \"10\"", path, body: { keywords: "x", num: "10" }, status: 400, code: "400", message: /^num: must be an integer from 1 to 100, got "10" \(a string\)$/ },
  { name: "body is an array", path, body: [], status: 400, code: "400", message: /^request body: must be a JSON object/ },
  { name: "bad JSON", path, raw: "{\"keywords\":", status: 400, code: "400", message: /^request body: is not valid JSON/ },
  { name: "empty body", path, raw: "", status: 400, code: "400", message: /^request body: is empty/ },
  { name: "wrong content type", path, raw: "keywords=x", headers: { "content-type": "text/plain" }, status: 415, code: "400", message: /^Content-Type: must be application\/json, got "text\/plain"$/ },
  { name: "oversized body", path, raw: JSON.stringify({ keywords: "x", pad: "a".repeat(1024 * 1024) }), status: 413, code: "400", message: /^request body: must be at most 1 MiB/ },
  { name: "no key", path, body: { keywords: "x" }, key: null, status: 401, code: "90402", message: /missing API key/ },
  { name: "wrong key", path, body: { keywords: "x" }, key: "not-a-key", status: 401, code: "90402", message: /invalid API key/ },
  { name: "malformed Authorization", path, body: { keywords: "x" }, headers: { authorization: "Basic abc" }, key: null, status: 401, code: "90402" },
  { name: "GET instead of POST", method: "GET", path, status: 405, code: "400", message: /accepts POST, not GET/ },
  { name: "freshness \"hour\"", path, body: { keywords: "x", freshness: "hour" }, status: 400, code: "400", message: /^freshness: must be day, week, month, year or an object \{from, to\} of dates YYYY-MM-DD, got "hour"/ },
  { name: "freshness with a bad date", path, body: { keywords: "x", freshness: { from: "2026-13-01", to: "2026-12-01" } }, status: 400, code: "400", message: /^freshness\.from: must be a date YYYY-MM-DD, got "2026-13-01"/ },
  { name: "freshness to before from", path, body: { keywords: "x", freshness: { from: "2026-02-01", to: "2026-01-01" } }, status: 400, code: "400", message: /^freshness\.to: must not be before from/ },
  { name: "language \"english\"", path, body: { keywords: "x", language: "english" }, status: 400, code: "400", message: /^language: must be a language code of 2 or 3 letters/ },
  { name: "region \"USA\"", path, body: { keywords: "x", region: "USA" }, status: 400, code: "400", message: /^region: must be a country code of 2 letters/ },
  { name: "safeSearch \"on\"", path, body: { keywords: "x", safeSearch: "on" }, status: 400, code: "400", message: /^safeSearch: must be off, moderate or strict, got "on"/ },
  { name: "sources empty", path, body: { keywords: "x", sources: [] }, status: 400, code: "400", message: /^sources: must be an array of 1 to 16 source names/ },
  { name: "sources with a bad name", path, body: { keywords: "x", sources: ["local", "bad name"] }, status: 400, code: "400", message: /^sources\[1\]: must be a source name/ },
  { name: "sources naming no configured source", path, body: { keywords: "x", sources: ["local", "bing"] }, status: 400, code: "400", message: /^sources\[1\]: names no configured source, got "bing"; configured: local$/ },
  { name: "explain \"yes\"", path, body: { keywords: "x", explain: "yes" }, status: 400, code: "400", message: /^explain: must be a boolean, got "yes"/ }
]

const chatCases: Array<Case> = [
  { name: "max_tokens 1", path: CHAT, body: { messages: user, max_tokens: 1 }, status: 400, code: null as never, type: "invalid_request_error", param: "max_tokens", message: /^max_tokens: must be an integer with 1 < x < 8192, got 1$/ },
  { name: "max_tokens 8192", path: CHAT, body: { messages: user, max_tokens: 8192 }, status: 400, type: "invalid_request_error", param: "max_tokens", message: /got 8192$/ },
  { name: "max_tokens 2.5", path: CHAT, body: { messages: user, max_tokens: 2.5 }, status: 400, type: "invalid_request_error", param: "max_tokens" },
  { name: "129 tools", path: CHAT, body: { messages: user, tools: Array.from({ length: 129 }, (_, i) => tool(`t${i}`)) }, status: 400, type: "invalid_request_error", param: "tools", message: /^tools: must be an array of at most 128 tools/ },
  { name: "bad function name", path: CHAT, body: { messages: user, tools: [tool("bad name!")] }, status: 400, param: "tools[0].function.name", message: /must match \^\[A-Za-z0-9_-\]\{1,64\}\$/ },
  { name: "function name of 65 chars", path: CHAT, body: { messages: user, tools: [tool("a".repeat(65))] }, status: 400, param: "tools[0].function.name" },
  { name: "duplicate tool names", path: CHAT, body: { messages: user, tools: [tool("a"), tool("a")] }, status: 400, param: "tools[1].function.name", message: /duplicates the tool name "a"/ },
  { name: "tool type not function", path: CHAT, body: { messages: user, tools: [{ type: "retrieval", function: { name: "a" } }] }, status: 400, param: "tools[0].type" },
  { name: "tool without function", path: CHAT, body: { messages: user, tools: [{ type: "function" }] }, status: 400, param: "tools[0].function", message: /is required/ },
  { name: "bad role", path: CHAT, body: { messages: [{ role: "robot", content: "hi" }] }, status: 400, param: "messages[0].role", message: /must be one of system, user, assistant, tool/ },
  { name: "missing messages", path: CHAT, body: { model: "periscope-scripted" }, status: 400, param: "messages", message: /^messages: is required$/ },
  { name: "empty messages", path: CHAT, body: { messages: [] }, status: 400, param: "messages", message: /non-empty array/ },
  { name: "message without content", path: CHAT, body: { messages: [{ role: "user" }] }, status: 400, param: "messages[0].content", message: /is required for role user/ },
  { name: "message without role or content", path: CHAT, body: { messages: [{ name: "x" }] }, status: 400, code: null as never, type: "invalid_request_error", param: "messages[0].content", message: /^messages\[0\]\.content: is required for role user$/ },
  { name: "tool message without tool_call_id", path: CHAT, body: { messages: [...user, { role: "tool", content: "42" }] }, status: 400, param: "messages[1].tool_call_id" },
  { name: "n 0", path: CHAT, body: { messages: user, n: 0 }, status: 400, param: "n", message: /from 1 to 16/ },
  { name: "n 17", path: CHAT, body: { messages: user, n: 17 }, status: 400, param: "n" },
  { name: "temperature 2.5", path: CHAT, body: { messages: user, temperature: 2.5 }, status: 400, param: "temperature", message: /from 0 to 2/ },
  { name: "top_p 0", path: CHAT, body: { messages: user, top_p: 0 }, status: 400, param: "top_p", message: /0 < x <= 1/ },
  { name: "top_k 0", path: CHAT, body: { messages: user, top_k: 0 }, status: 400, param: "top_k" },
  { name: "frequency_penalty 3", path: CHAT, body: { messages: user, frequency_penalty: 3 }, status: 400, param: "frequency_penalty" },
  { name: "stop of 17 strings", path: CHAT, body: { messages: user, stop: Array.from({ length: 17 }, (_, i) => `s${i}`) }, status: 400, param: "stop" },
  { name: "empty stop string", path: CHAT, body: { messages: user, stop: "" }, status: 400, param: "stop" },
  { name: "unknown response_format", path: CHAT, body: { messages: user, response_format: { type: "xml" } }, status: 400, param: "response_format" },
  { name: "tool_choice names no tool", path: CHAT, body: { messages: user, tools: [tool("a")], tool_choice: { type: "function", function: { name: "b" } } }, status: 400, param: "tool_choice.function.name" },
  { name: "stream not boolean", path: CHAT, body: { messages: user, stream: "yes" }, status: 400, param: "stream" },
  { name: "unknown model", path: CHAT, body: { messages: user, model: "gpt-none" }, status: 404, code: "model_not_found", param: "model" },
  { name: "bad JSON", path: CHAT, raw: "{\"messages\": [", status: 400, code: "invalid_json", message: /^request body: is not valid JSON/ },
  { name: "wrong content type", path: CHAT, raw: "hi", headers: { "content-type": "text/plain" }, status: 415, code: "unsupported_media_type" },
  { name: "oversized body", path: CHAT, raw: JSON.stringify({ messages: [{ role: "user", content: "a".repeat(16 * 1024 * 1024) }] }), status: 413, code: "payload_too_large", message: /at most 16 MiB/ },
  { name: "no key", path: CHAT, body: { messages: user }, key: null, status: 401, type: "authentication_error", code: "invalid_api_key" },
  { name: "wrong key", path: CHAT, body: { messages: user }, key: "nope", status: 401, type: "authentication_error" },
  { name: "GET instead of POST", method: "GET", path: CHAT, status: 405, code: "method_not_allowed" },
  { name: "models without key", method: "GET", path: "/v1/models", key: null, status: 401, type: "authentication_error" },
  { name: "unknown /v1 path", method: "GET", path: "/v1/nope", status: 404, code: "not_found" }
]

const otherCases: Array<Case> = [
  { name: "openapi without key", method: "GET", path: "/openapi.json", key: null, status: 401, code: "90402" },
  { name: "unknown path", method: "GET", path: "/nope", status: 404, code: "400", message: /no endpoint at GET \/nope/ },
  { name: "POST /healthz", method: "POST", path: "/healthz", body: {}, status: 405, code: "400" },
  { name: "POST / (the playground page)", method: "POST", path: "/", body: {}, status: 405, code: "400", message: /\/ accepts GET, not POST/ },
  { name: "DELETE /docs", method: "DELETE", path: "/docs", body: {}, status: 405, code: "400" },
  { name: "POST /metrics", method: "POST", path: "/metrics", body: {}, status: 405, code: "400" }
]

const send = (c: Case) => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  const key = c.key === undefined ? TEST_KEY : c.key
  if (key !== null) headers.authorization = `Bearer ${key}`
  const method = c.method ?? "POST"
  const body = method === "GET" ? undefined : c.raw ?? JSON.stringify(c.body)
  return fetch(server.url + c.path, { method, headers: { ...headers, ...c.headers }, body })
}

const check = async (c: Case) => {
  const response = await send(c)
  expect(response.status).toBe(c.status)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  const body = await response.json() as any
  if (c.path.startsWith("/v1")) {
    expect(Object.keys(body)).toEqual(["error"])
    expect(typeof body.error.message).toBe("string")
    if (c.type !== undefined) expect(body.error.type).toBe(c.type)
    if (c.code !== undefined && c.code !== null) expect(body.error.code).toBe(c.code)
    if (c.param !== undefined) expect(body.error.param).toBe(c.param)
    if (c.message !== undefined) expect(body.error.message).toMatch(c.message)
  } else {
    expect(body).toMatchObject({ success: false, code: c.code, data: null, extra: null })
    expect(typeof body.exception.type).toBe("string")
    expect(body.exception.detail).toBe(body.message)
    if (c.message !== undefined) expect(body.message).toMatch(c.message)
  }
  return response
}

// Both ways a request can be answered: the Node adapter's express lane (the hot routes) and the full
// HttpApi stack behind it. The same cases, the same exact answers.
for (const expressLane of [true, false]) describe(expressLane ? "Node server, express lane on" : "Node server, express lane off", () => {
  beforeAll(async () => {
    server = await startInProcess({
      keys: [
        ...recordsFromPlainKeys([TEST_KEY]),
        { name: "limited", sha256: hashKey(LIMITED_KEY), requestsPerMinute: 1 }
      ],
      expressLane
    })
  })
  afterAll(() => server.close())

  describe("webSearch bad inputs", () => {
    for (const c of searchCases(WEB)) it(c.name, () => check(c))
  })
  describe("imageSearch bad inputs", () => {
    for (const c of searchCases(IMAGE)) it(c.name, () => check(c))
  })
  describe("chat completions bad inputs", () => {
    for (const c of chatCases) it(c.name, () => check(c))
  })
  describe("other bad requests", () => {
    for (const c of otherCases) it(c.name, () => check(c))
    it("405 names the allowed methods in Allow", async () => {
      const response = await check({ name: "", method: "GET", path: WEB, status: 405, code: "400" })
      expect(response.headers.get("allow")).toBe("POST")
    })
    it("401 carries WWW-Authenticate: Bearer", async () => {
      const response = await check({ name: "", path: WEB, body: { keywords: "x" }, key: null, status: 401, code: "90402" })
      expect(response.headers.get("www-authenticate")).toBe("Bearer")
    })
  })

  describe("rate limit", () => {
    it("a key over its limit gets 429 with code 40303 and Retry-After, on search and chat", async () => {
      const first = await send({ name: "", path: WEB, body: { keywords: "x" }, key: LIMITED_KEY, status: 200 })
      expect(first.status).toBe(200)
      const second = await check({ name: "", path: WEB, body: { keywords: "x" }, key: LIMITED_KEY, status: 429, code: "40303", message: /rate limit of 1 requests per minute/ })
      const retryAfter = Number(second.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      await check({ name: "", path: CHAT, body: { messages: user }, key: LIMITED_KEY, status: 429, type: "rate_limit_error", code: "rate_limit_exceeded" })
    })
  })

  describe("lenient where clients expect it", () => {
    it("ignores unknown fields and accepts OpenAI extras", async () => {
      const response = await send({
        name: "", path: CHAT, status: 200,
        body: { messages: user, foo: 1, seed: 7, user: "u1", presence_penalty: 0.1, parallel_tool_calls: false, stream_options: null, logprobs: false }
      })
      expect(response.status).toBe(200)
      const search = await send({ name: "", path: WEB, body: { keywords: "chat", extra: true }, status: 200 })
      expect(search.status).toBe(200)
    })
    it("accepts max_tokens 2 and 8191, the edges of 1 < x < 8192", async () => {
      for (const max_tokens of [2, 8191]) {
        expect((await send({ name: "", path: CHAT, body: { messages: user, max_tokens }, status: 200 })).status).toBe(200)
      }
    })
    it("accepts a missing Content-Type as JSON and application/json with a charset", async () => {
      // fetch labels string bodies text/plain; bytes go without a Content-Type.
      const bare = await fetch(server.url + WEB, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` }, body: new TextEncoder().encode(JSON.stringify({ keywords: "chat" })) })
      expect(bare.status).toBe(200)
      const charset = await send({ name: "", path: WEB, body: { keywords: "chat" }, headers: { "content-type": "application/json; charset=utf-8" }, status: 200 })
      expect(charset.status).toBe(200)
    })
  })
})
