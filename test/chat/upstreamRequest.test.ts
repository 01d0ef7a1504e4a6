/**
 * What the OpenAI-compatible client sends, as the real mock upstream receives
 * it over loopback: the target's model name, parameters mapped per preset
 * (dropped, renamed, clamped), messages without reasoning_content, the API
 * key as a Bearer token, and no credential in any error message.
 */
import { Effect, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpenAiUpstream } from "../../core/backends/openai/OpenAiUpstream.ts"
import { parameterPresets, withOverrides } from "../../core/backends/openai/ParameterPresets.ts"
import type { ChatRequest } from "../../core/chat/ChatRequest.ts"
import { UpstreamClient, type UpstreamError, type UpstreamTarget } from "../../core/chat/Upstream.ts"
import { chatRequest, closedPort, type MockUpstream, mockTarget, startMockUpstream } from "../support/mockUpstream.ts"

const KEY = "sk-test-0123456789abcdef-secret"
let upstream: MockUpstream

beforeAll(async () => {
  upstream = await startMockUpstream({
    respond: (body) =>
      body?.model === "echo-key"
        // A server that quotes the key back, as OpenAI's 401 does.
        ? { status: 401, errorMessage: `Incorrect API key provided: ${KEY}. Header was Bearer ${KEY}` }
        : body?.model === "leaky-500"
        ? { status: 500, errorMessage: `internal error while using key ${KEY} for org-header-value-123` }
        : undefined
  })
})
afterAll(() => upstream.close())

const run = <A, E>(effect: Effect.Effect<A, E, UpstreamClient>) => Effect.runPromise(Effect.provide(effect, OpenAiUpstream.layerFetch))

const complete = (target: UpstreamTarget, request: ChatRequest) => run(Effect.flatMap(Effect.service(UpstreamClient), (c) => c.complete(target, request)))
const completeError = (target: UpstreamTarget, request: ChatRequest) =>
  run(Effect.flip(Effect.flatMap(Effect.service(UpstreamClient), (c) => c.complete(target, request))))
const collect = (target: UpstreamTarget, request: ChatRequest) =>
  run(Effect.flatMap(Effect.service(UpstreamClient), (c) => Stream.runCollect(c.stream(target, request))))

/** The body the mock received for the latest request. */
const lastBody = () => upstream.requests[upstream.requests.length - 1]!.body
const lastHeaders = () => upstream.requests[upstream.requests.length - 1]!.headers

describe("request body per parameter preset", () => {
  const request = chatRequest({
    model: "client-alias",
    top_k: 40,
    max_tokens: 300,
    temperature: 1.5,
    seed: 7,
    stop: ["END"],
    user: "u-1",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello", reasoning_content: "The user greets me." },
      { role: "user", content: [{ type: "text", text: "And now?" }] }
    ]
  })

  it("openai: drops top_k, sends max_tokens as max_completion_tokens, replaces the model name", async () => {
    await complete(mockTarget(upstream, { model: "gpt-upstream", params: parameterPresets.openai }), request)
    const body = lastBody()
    expect(body.model).toBe("gpt-upstream")
    expect(body).not.toHaveProperty("top_k")
    expect(body).not.toHaveProperty("max_tokens")
    expect(body.max_completion_tokens).toBe(300)
    expect(body.temperature).toBe(1.5)
    expect(body.top_p).toBe(0.7)
    expect(body.frequency_penalty).toBe(0.5)
    expect(body.seed).toBe(7)
    expect(body.stop).toEqual(["END"])
    expect(body.user).toBe("u-1")
    expect(body.stream).toBe(false)
    expect(body).not.toHaveProperty("stream_options")
    // n = 1 is everyone's default and is left out.
    expect(body).not.toHaveProperty("n")
  })

  it("vllm and passthrough: top_k and max_tokens go as they are", async () => {
    for (const params of [parameterPresets.vllm, parameterPresets.passthrough]) {
      await complete(mockTarget(upstream, { params }), request)
      expect(lastBody().top_k).toBe(40)
      expect(lastBody().max_tokens).toBe(300)
    }
  })

  it("ollama drops top_k and n; llamacpp keeps top_k and drops n", async () => {
    await complete(mockTarget(upstream, { params: parameterPresets.ollama }), { ...request, n: 3 })
    expect(lastBody()).not.toHaveProperty("top_k")
    expect(lastBody()).not.toHaveProperty("n")
    await complete(mockTarget(upstream, { params: parameterPresets.llamacpp }), { ...request, n: 3 })
    expect(lastBody().top_k).toBe(40)
    expect(lastBody()).not.toHaveProperty("n")
  })

  it("n > 1 is sent to an upstream that keeps it", async () => {
    const result = await complete(mockTarget(upstream, { params: parameterPresets.vllm }), { ...request, n: 3 })
    expect(lastBody().n).toBe(3)
    expect(result.choices.map((c) => c.index)).toEqual([0, 1, 2])
  })

  it("clamps numbers into the upstream's range, renaming after clamping", async () => {
    const params = withOverrides("openai", {
      temperature: { max: 1 },
      top_k: { min: 1, max: 20, rename: "top_k_sampling" },
      max_tokens: { max: 128, rename: "max_completion_tokens" },
      frequency_penalty: { min: 0.8 }
    })
    await complete(mockTarget(upstream, { params }), request)
    const body = lastBody()
    expect(body.temperature).toBe(1)
    expect(body.top_k_sampling).toBe(20)
    expect(body).not.toHaveProperty("top_k")
    expect(body.max_completion_tokens).toBe(128)
    expect(body.frequency_penalty).toBe(0.8)
    // Inside the range: unchanged.
    expect(body.top_p).toBe(0.7)
  })

  it("strips reasoning_content from earlier assistant turns and passes messages through otherwise", async () => {
    await complete(mockTarget(upstream), request)
    const messages = lastBody().messages
    expect(messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
      { role: "user", content: [{ type: "text", text: "And now?" }] }
    ])
  })

  it("streams ask for the usage chunk", async () => {
    await collect(mockTarget(upstream), request)
    expect(lastBody().stream).toBe(true)
    expect(lastBody().stream_options).toEqual({ include_usage: true })
    expect(lastHeaders().accept).toBe("text/event-stream")
  })

  it("passes tools, tool_choice and response_format", async () => {
    const tools = [{ type: "function" as const, function: { name: "lookup", parameters: { type: "object" } } }]
    await complete(mockTarget(upstream), { ...request, tools, tool_choice: "auto", parallel_tool_calls: false, response_format: { type: "json_object" } })
    expect(lastBody().tools).toEqual(tools)
    expect(lastBody().tool_choice).toBe("auto")
    expect(lastBody().parallel_tool_calls).toBe(false)
    expect(lastBody().response_format).toEqual({ type: "json_object" })
  })
})

describe("credentials", () => {
  it("sends the key as a Bearer token with the target's extra headers", async () => {
    await complete(mockTarget(upstream, { key: KEY, headers: { "OpenAI-Organization": "org-header-value-123" } }), chatRequest())
    expect(lastHeaders().authorization).toBe(`Bearer ${KEY}`)
    expect(lastHeaders()["openai-organization"]).toBe("org-header-value-123")
    expect(lastHeaders()["content-type"]).toBe("application/json")
  })

  it("sends no Authorization header without a key", async () => {
    await complete(mockTarget(upstream), chatRequest())
    expect(lastHeaders()).not.toHaveProperty("authorization")
  })

  it("passes the upstream's error message on without the key it quotes", async () => {
    const target = mockTarget(upstream, { key: KEY, model: "echo-key", headers: { "OpenAI-Organization": "org-header-value-123" } })
    const error = await completeError(target, chatRequest())
    expect(error.kind).toBe("status")
    expect(error.status).toBe(401)
    expect(error.message).toContain("Incorrect API key provided")
    expect(error.message).not.toContain(KEY)
    expect(error.message).not.toContain("0123456789abcdef")
    expect(JSON.stringify(error)).not.toContain(KEY)
    expect(String(error)).not.toContain(KEY)
    // 401 is not retried.
    expect(upstream.requests.filter((r) => r.body?.model === "echo-key")).toHaveLength(1)
  })

  it("scrubs the key and header values from 5xx messages, after the retries", async () => {
    const target = mockTarget(upstream, { key: KEY, model: "leaky-500", headers: { "OpenAI-Organization": "org-header-value-123" } })
    const error = await completeError(target, chatRequest())
    expect(error.status).toBe(500)
    expect(error.message).toContain("internal error while using key")
    expect(error.message).not.toContain(KEY)
    expect(error.message).not.toContain("org-header-value-123")
    expect(upstream.requests.filter((r) => r.body?.model === "leaky-500")).toHaveLength(3)
  })

  it("never puts the key in a connection error", async () => {
    // A port nothing listens on.
    const target = mockTarget({ url: `http://127.0.0.1:${await closedPort()}/v1` }, { key: KEY, retries: { max: 0, baseDelayMs: 1 } })
    const error = await completeError(target, chatRequest())
    expect(error.kind).toBe("connect")
    expect(error.beforeFirstByte).toBe(true)
    expect(error.message).toBe("could not reach the upstream: connection refused (ECONNREFUSED)")
    expect(JSON.stringify(error)).not.toContain(KEY)
  })
})
