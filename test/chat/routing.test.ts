/**
 * The whole chat stack over real sockets: client -> our Node server ->
 * gateway -> router -> upstream client -> mock model servers on loopback.
 * Fallback before the first byte, none after it, errors mid-stream, client
 * cancellation reaching the upstream connection, parameter presets, fan-out,
 * validation against a real upstream, aliases and the default model.
 */
import OpenAI from "openai"
import { afterEach, describe, expect, it } from "vitest"
import type { ChatConfig } from "../../core/config/ChatConfig.ts"
import { closedPort, type MockUpstreamOptions, startMockUpstream } from "../support/mockUpstream.ts"
import { authHeaders, disconnectMidStream, readSse, type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

const opened: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((x) => x.close()))
})

const mock = async (options: MockUpstreamOptions) => {
  const upstream = await startMockUpstream(options)
  opened.push(upstream)
  return upstream
}
const serve = async (chatConfig: ChatConfig) => {
  const server = await startInProcess({ chatConfig })
  opened.push(server)
  return server
}
const upstreamAt = (url: string, extra: Record<string, unknown> = {}) => ({ baseUrl: url, retries: { max: 0, baseDelayMs: 5 }, ...extra })
/** A first target that is tried first with near certainty, and a fallback. */
const primaryThenFallback = (primary: string, fallback: string) =>
  [{ upstream: primary, model: "m", weight: 1_000_000 }, { upstream: fallback, model: "m", weight: 1 }]

const post = (server: RunningServer, body: Record<string, unknown>) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }], ...body })
  })
const sse = async (response: Response) => readSse(response)
const contentOf = (events: Array<string>) =>
  events.filter((e) => e.startsWith("data: {\"id\"")).map((e) => JSON.parse(e.slice(6)).choices[0]?.delta.content ?? "").join("")

describe("fallback before the first byte", () => {
  for (const [name, failing] of [
    ["a 500", { defaultScenario: { status: 500, errorMessage: "overloaded" } }],
    ["a 429", { defaultScenario: { status: 429, retryAfter: "1", errorMessage: "slow down" } }],
    ["a dropped connection", { defaultScenario: { dropBeforeHeaders: true } }]
  ] as const) {
    it(`moves to the second upstream on ${name}, whole and streamed`, async () => {
      const a = await mock(failing)
      const b = await mock({ defaultScenario: { content: "from b" } })
      const server = await serve({
        upstreams: { a: upstreamAt(a.url), b: upstreamAt(b.url) },
        models: [{ name: "main", targets: primaryThenFallback("a", "b") }]
      })
      const whole = await (await post(server, {})).json() as any
      expect(whole.choices[0].message.content).toBe("from b")
      expect(whole.model).toBe("main")
      const streamed = await sse(await post(server, { stream: true }))
      expect(contentOf(streamed)).toBe("from b")
      expect(streamed.at(-1)).toBe("data: [DONE]")
      expect(a.chatRequests()).toBe(2)
      expect(b.chatRequests()).toBe(2)
    })
  }

  it("moves on when the first upstream refuses connections", async () => {
    const b = await mock({ defaultScenario: { content: "still here" } })
    const server = await serve({
      upstreams: { dead: upstreamAt(`http://127.0.0.1:${await closedPort()}/v1`), b: upstreamAt(b.url) },
      models: [{ name: "main", targets: primaryThenFallback("dead", "b") }]
    })
    expect((await (await post(server, {})).json() as any).choices[0].message.content).toBe("still here")
  })

  it("answers the last upstream's failure with the matching status when every target fails", async () => {
    const a = await mock({ defaultScenario: { status: 503, errorMessage: "down for maintenance" } })
    const b = await mock({ defaultScenario: { status: 429, retryAfter: "7", errorMessage: "quota" } })
    const server = await serve({
      upstreams: { a: upstreamAt(a.url), b: upstreamAt(b.url) },
      models: [{ name: "main", targets: primaryThenFallback("a", "b") }]
    })
    const response = await post(server, {})
    expect(response.status).toBe(429)
    expect(response.headers.get("retry-after")).toBe("7")
    const body = await response.json() as any
    expect(body.error.type).toBe("rate_limit_error")
    expect(body.error.message).toMatch(/upstream b is rate limiting requests: .*quota/)
  })
})

describe("after the first byte", () => {
  it("does not retry or fall back: the drop is an error event, then [DONE]", async () => {
    const a = await mock({ defaultScenario: { content: "one two three four five", dropAfterChunks: 3 } })
    const b = await mock({ defaultScenario: { content: "from b" } })
    const server = await serve({
      upstreams: { a: upstreamAt(a.url, { retries: { max: 3, baseDelayMs: 5 } }), b: upstreamAt(b.url) },
      models: [{ name: "main", targets: primaryThenFallback("a", "b") }]
    })
    const events = await sse(await post(server, { stream: true }))
    expect(contentOf(events)).toBe("one two ")
    expect(events.at(-1)).toBe("data: [DONE]")
    const error = JSON.parse(events.at(-2)!.slice(6))
    expect(error.error.type).toBe("server_error")
    expect(error.error.message).toMatch(/^upstream a failed/)
    expect(a.chatRequests()).toBe(1)
    expect(b.chatRequests()).toBe(0)
  })

  it("reports an upstream error event mid-stream as an error event, then [DONE]", async () => {
    const a = await mock({ defaultScenario: { content: "alpha beta gamma", errorEventAfterChunks: 2, errorEvent: { error: { message: "CUDA out of memory" } } } })
    const server = await serve({ upstreams: { a: upstreamAt(a.url) }, models: [{ name: "main", targets: [{ upstream: "a", model: "m" }] }] })
    const events = await sse(await post(server, { stream: true }))
    expect(contentOf(events)).toBe("alpha ")
    expect(JSON.parse(events.at(-2)!.slice(6)).error.message).toMatch(/CUDA out of memory/)
    expect(events.at(-1)).toBe("data: [DONE]")
  })
})

describe("cancellation", () => {
  const slowServer = async (scenario: object) => {
    const a = await mock({ defaultScenario: scenario })
    const server = await serve({ upstreams: { a: upstreamAt(a.url) }, models: [{ name: "main", targets: [{ upstream: "a", model: "m" }] }] })
    return { a, server }
  }

  it("a streaming client that disconnects closes the upstream connection within one second", async () => {
    const { a, server } = await slowServer({ content: "word ".repeat(2000), chunkDelayMs: 20 })
    const disconnectedAt = await disconnectMidStream(
      `${server.url}/v1/chat/completions`,
      { model: "main", stream: true, messages: [{ role: "user", content: "go" }] },
      1000
    )
    const upstreamRequest = await a.waitForClose(0, 5000)
    expect(upstreamRequest.completed).toBe(false)
    expect(upstreamRequest.closedAt! - disconnectedAt).toBeLessThan(1000)
  })

  it("a non-streaming client that disconnects closes the upstream connection within one second", async () => {
    const { a, server } = await slowServer({ content: "late", headersDelayMs: 30_000 })
    const controller = new AbortController()
    const aborted = fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "go" }] }),
      signal: controller.signal
    }).catch(() => "aborted")
    await a.waitForRequest(0, 5000)
    const at = performance.now()
    controller.abort()
    expect(await aborted).toBe("aborted")
    const upstreamRequest = await a.waitForClose(0, 5000)
    expect(upstreamRequest.completed).toBe(false)
    expect(upstreamRequest.closedAt! - at).toBeLessThan(1000)
  })
})

describe("routing configuration", () => {
  it("maps parameters with the openai preset, sends the key from its variable, and keeps it out of errors", async () => {
    process.env.PERISCOPE_TEST_UPSTREAM_KEY = "sk-test-secret-123456"
    const a = await mock({ apiKey: "sk-test-secret-123456", defaultScenario: { content: "ok" } })
    const server = await serve({
      upstreams: { openai: upstreamAt(a.url, { preset: "openai", apiKeyEnv: "PERISCOPE_TEST_UPSTREAM_KEY" }) },
      models: [{ name: "main", targets: [{ upstream: "openai", model: "gpt-upstream" }] }]
    })
    await post(server, { top_k: 40, max_tokens: 99, temperature: 0.2 })
    const sent = a.requests[0]!
    expect(sent.headers.authorization).toBe("Bearer sk-test-secret-123456")
    expect(sent.body.model).toBe("gpt-upstream")
    expect(sent.body.top_k).toBeUndefined()
    expect(sent.body.max_tokens).toBeUndefined()
    expect(sent.body.max_completion_tokens).toBe(99)
    expect(sent.body.temperature).toBe(0.2)

    const wrongKey = await mock({ apiKey: "another", defaultScenario: {} })
    const refused = await serve({
      upstreams: { openai: upstreamAt(wrongKey.url, { preset: "openai", apiKeyEnv: "PERISCOPE_TEST_UPSTREAM_KEY" }) },
      models: [{ name: "main", targets: [{ upstream: "openai", model: "x" }] }]
    })
    const response = await post(refused, {})
    expect(response.status).toBe(502)
    expect(await response.text()).not.toContain("sk-test-secret")
  })

  it("fans out n when the upstream cannot do n (llamacpp preset)", async () => {
    const a = await mock({ respond: (_body, i) => ({ content: `reply ${i}` }) })
    const server = await serve({ upstreams: { llama: upstreamAt(a.url, { preset: "llamacpp" }) }, models: [{ name: "main", targets: [{ upstream: "llama", model: "m" }] }] })
    const body = await (await post(server, { n: 3 })).json() as any
    expect(body.choices.map((c: any) => c.index)).toEqual([0, 1, 2])
    expect(new Set(body.choices.map((c: any) => c.message.content))).toEqual(new Set(["reply 0", "reply 1", "reply 2"]))
    expect(a.requests.map((r) => r.body.n)).toEqual([undefined, undefined, undefined])
  })

  it("retries an invalid tool call from a real upstream until it is valid", async () => {
    const a = await mock({
      script: [
        { toolCalls: [{ id: "c1", name: "get_weather", arguments: "{\"city\": " }] },
        { toolCalls: [{ id: "c2", name: "get_weather", arguments: "{\"city\": \"Oslo\"}" }] }
      ]
    })
    const server = await serve({
      upstreams: { a: upstreamAt(a.url) },
      models: [{ name: "main", targets: [{ upstream: "a", model: "m" }] }],
      validation: { policy: "retry", retries: 1 }
    })
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }]
    const body = await (await post(server, { tools })).json() as any
    expect(body.choices[0].message.tool_calls[0].function.arguments).toBe("{\"city\": \"Oslo\"}")
    const feedback = a.requests[1]!.body.messages.at(-1)
    expect(feedback).toMatchObject({ role: "tool", tool_call_id: "c1" })
    expect(feedback.content).toMatch(/not valid JSON/)
  })

  it("validates json_schema output from a real upstream", async () => {
    const a = await mock({ script: [{ content: "{\"n\": \"seven\"}" }, { content: "{\"n\": 7}" }] })
    const server = await serve({ upstreams: { a: upstreamAt(a.url) }, models: [{ name: "main", targets: [{ upstream: "a", model: "m" }] }] })
    const body = await (await post(server, {
      response_format: { type: "json_schema", json_schema: { name: "count", schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } } }
    })).json() as any
    expect(JSON.parse(body.choices[0].message.content)).toEqual({ n: 7 })
    expect(a.chatRequests()).toBe(2)
  })

  it("resolves aliases and the default model, and lists what is configured", async () => {
    const a = await mock({ respond: (body) => ({ content: `model ${body.model}` }) })
    const server = await serve({
      upstreams: { a: upstreamAt(a.url) },
      models: [
        { name: "fast", aliases: ["fast-latest"], targets: [{ upstream: "a", model: "small" }] },
        { name: "smart", targets: [{ upstream: "a", model: "large" }] }
      ],
      defaultModel: "smart"
    })
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${server.url}/v1`, maxRetries: 0 })
    const aliased = await client.chat.completions.create({ model: "fast-latest", messages: [{ role: "user", content: "x" }] })
    expect(aliased.choices[0]!.message.content).toBe("model small")
    expect(aliased.model).toBe("fast")
    const byDefault = await (await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST", headers: authHeaders(), body: JSON.stringify({ messages: [{ role: "user", content: "x" }] })
    })).json() as any
    expect(byDefault.choices[0].message.content).toBe("model large")
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(["fast", "fast-latest", "smart", "periscope-grounded"])
  })
})

