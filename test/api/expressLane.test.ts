/**
 * The express lane answers as the full stack does. Two real Node servers over
 * the same services, one with the lane (as `npm start` runs) and one without,
 * get the same requests; status, the headers a client reads and the body
 * (completion ids and times aside) must be equal, streams included. The lane's
 * own count shows it answered the hot routes and left the rest alone.
 * (Every bad input is checked both ways in badInputs.test.ts.)
 */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearerCredential } from "../../core/api/Admission.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { ImageSearch } from "../../core/search/ImageSearch.ts"
import { WebSearch } from "../../core/search/WebSearch.ts"
import { type InProcessServer, startInProcess, TEST_KEY } from "../support/servers.ts"

let laned: InProcessServer
let full: InProcessServer
// One after the other, so that a failed start never leaves the other server running unclosed.
beforeAll(async () => {
  laned = await startInProcess()
  full = await startInProcess({ expressLane: false })
})
afterAll(async () => {
  await Promise.all([laned?.close(), full?.close()])
})

interface Exchange {
  readonly method?: string
  readonly path: string
  readonly body?: string
  readonly headers?: Record<string, string>
}

const READ_HEADERS = ["content-type", "retry-after", "www-authenticate", "allow", "cache-control", "x-accel-buffering"]

/** What a client sees, with what differs between any two answers (completion ids, times) masked. */
const exchange = async (server: InProcessServer, e: Exchange) => {
  const response = await fetch(server.url + e.path, {
    method: e.method ?? "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...e.headers },
    ...(e.body === undefined ? {} : { body: e.body })
  })
  const headers = Object.fromEntries(READ_HEADERS.map((name) => [name, response.headers.get(name)]))
  const body = (await response.text()).replace(/chatcmpl-[A-Za-z0-9]+/g, "chatcmpl-ID").replace(/"created":\d+/g, "\"created\":0")
  return { status: response.status, headers, body }
}

const chat = (extra: Record<string, unknown>) => JSON.stringify({ model: "periscope-scripted", messages: [{ role: "user", content: "What does Periscope do?" }], ...extra })

const hot: ReadonlyArray<[string, Exchange]> = [
  ["webSearch", { path: "/api/search/webSearch", body: JSON.stringify({ keywords: "search results with snippets", num: 3 }) }],
  ["webSearch with a query string", { path: "/api/search/webSearch?debug=1", body: JSON.stringify({ keywords: "chat" }) }],
  ["webSearch, lower-case scheme and spaces", { path: "/api/search/webSearch", body: JSON.stringify({ keywords: "chat" }), headers: { authorization: `bearer   ${TEST_KEY}` } }],
  ["imageSearch", { path: "/api/search/imageSearch", body: JSON.stringify({ keywords: "periscope", num: 5 }) }],
  ["chat", { path: "/v1/chat/completions", body: chat({}) }],
  ["chat with n and stop", { path: "/v1/chat/completions", body: chat({ n: 2, stop: ["scripted"] }) }],
  ["chat stream", { path: "/v1/chat/completions", body: chat({ stream: true, stream_options: { include_usage: true } }) }],
  ["chat with a bad tool schema", { path: "/v1/chat/completions", body: chat({ tools: [{ type: "function", function: { name: "f", parameters: { type: "nonsense" } } }] }) }],
  ["chat, JSON with a BOM-less charset", { path: "/v1/chat/completions", body: chat({}), headers: { "content-type": "application/json; charset=utf-8" } }],
  ["webSearch, wrong key", { path: "/api/search/webSearch", body: "{}", headers: { authorization: "Bearer nope" } }],
  ["chat, not JSON", { path: "/v1/chat/completions", body: "{\"messages\":" }]
]
const others: ReadonlyArray<[string, Exchange]> = [
  ["webFetch refused", { path: "/api/search/webFetch", body: JSON.stringify({ url: "http://127.0.0.1/" }) }],
  ["models", { method: "GET", path: "/v1/models" }],
  ["GET on webSearch", { method: "GET", path: "/api/search/webSearch" }],
  ["webSearch with a trailing slash", { path: "/api/search/webSearch/", body: "{}" }]
]

describe("the express lane against the full stack", () => {
  it("answers the hot routes as the full stack does", async () => {
    const before = laned.answeredInLane()
    for (const [name, e] of hot) {
      const [a, b] = [await exchange(laned, e), await exchange(full, e)]
      expect(a, name).toEqual(b)
    }
    expect(laned.answeredInLane() - before).toBe(hot.length)
    expect(full.answeredInLane()).toBe(0)
  })

  it("leaves every other route and method to the full stack", async () => {
    const before = laned.answeredInLane()
    for (const [name, e] of others) {
      const [a, b] = [await exchange(laned, e), await exchange(full, e)]
      expect(a, name).toEqual(b)
    }
    expect(laned.answeredInLane()).toBe(before)
  })

  it("streams SSE through the lane, ending with [DONE]", async () => {
    const { status, headers, body } = await exchange(laned, hot.find(([name]) => name === "chat stream")![1])
    expect(status).toBe(200)
    expect(headers["content-type"]).toBe("text/event-stream")
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true)
    expect(body).toContain("\"usage\":{")
  })

  it("reads bearer credentials as HttpApiSecurity.bearer does", () => {
    expect(bearerCredential("Bearer abc")).toBe("abc")
    expect(bearerCredential("BEARER   abc")).toBe("abc")
    for (const header of [undefined, "", "Bearer", "Bearer ", "Bearer    ", "Basic abc", "Bearerabc", "Bearer\tabc"]) expect(bearerCredential(header), String(header)).toBeUndefined()
  })
})

describe("a backend that dies", () => {
  // Backends that throw (a bug, not an error they report): both ways must answer 500 in the
  // route's wire family without the thrown message, and the server must keep answering.
  const secret = "the backend's internal detail"
  const dying = {
    search: Layer.mergeAll(
      Layer.succeed(WebSearch, WebSearch.of({ search: () => Effect.die(new Error(secret)) })),
      Layer.succeed(ImageSearch, ImageSearch.of({ search: () => Effect.die(new Error(secret)) }))
    ),
    chat: ScriptedChat.layer({ replies: () => { throw new Error(secret) } })
  }
  let lanedDying: InProcessServer
  let fullDying: InProcessServer
  beforeAll(async () => {
    lanedDying = await startInProcess(dying)
    fullDying = await startInProcess({ ...dying, expressLane: false })
  })
  afterAll(async () => {
    await Promise.all([lanedDying?.close(), fullDying?.close()])
  })

  it("is answered 500 in each route's family, as the full stack answers it", async () => {
    const cases: ReadonlyArray<[string, Exchange]> = [
      ["webSearch", { path: "/api/search/webSearch", body: JSON.stringify({ keywords: "periscope" }) }],
      ["imageSearch", { path: "/api/search/imageSearch", body: JSON.stringify({ keywords: "periscope" }) }],
      ["chat", { path: "/v1/chat/completions", body: chat({}) }]
    ]
    const before = lanedDying.answeredInLane()
    for (const [name, e] of cases) {
      const [a, b] = [await exchange(lanedDying, e), await exchange(fullDying, e)]
      expect(a, name).toEqual(b)
      expect(a.status, name).toBe(500)
      expect(a.body, name).not.toContain(secret)
      const body = JSON.parse(a.body)
      if (name === "chat") expect(body.error.type, name).toBe("server_error")
      else expect([body.success, body.code], name).toEqual([false, "500"])
    }
    expect(lanedDying.answeredInLane() - before).toBe(cases.length)
    // Still serving: the next request is answered too.
    expect((await exchange(lanedDying, cases[0]![1])).status).toBe(500)
  })
})
