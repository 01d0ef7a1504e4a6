/**
 * SSE streaming over the real Node server: chunk shapes, usage, keep-alive
 * comments, a mid-stream failure reported as an error event then [DONE], and
 * a client that disconnects interrupting the backend within one second.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ScriptedEnd, ScriptedChat, type ScriptedReply } from "../../core/backends/ScriptedChat.ts"
import { authHeaders, disconnectMidStream, readSse, type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

const ends: Array<ScriptedEnd & { at: number }> = []
let server: RunningServer

const replies: Record<string, ScriptedReply> = {
  plain: { reasoning: "think first", content: "one two three" },
  tools: {
    pieces: [
      { toolCall: { index: 0, id: "call_a", type: "function", function: { name: "lookup", arguments: "" } } },
      { toolCall: { index: 0, function: { arguments: "{\"q\":" } } },
      { toolCall: { index: 0, function: { arguments: "\"x\"}" } } },
      { toolCall: { index: 1, id: "call_b", type: "function", function: { name: "lookup", arguments: "{}" } } }
    ],
    finishReason: "tool_calls",
    usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 }
  },
  slow: { content: "a b", delayMs: 400 },
  failing: { content: "first second third", failAfter: 2, failure: { reason: "upstream", message: "model server went away" } },
  endless: { content: "tick ".repeat(10_000), delayMs: 20 }
}

beforeAll(async () => {
  server = await startInProcess({
    streamKeepAlive: "100 millis",
    chat: ScriptedChat.layer({
      models: Object.keys(replies),
      replies: (request) => replies[request.model]!,
      onEnd: (end) => ends.push({ ...end, at: Date.now() })
    })
  })
})
afterAll(() => server.close())

const stream = (model: string, extra: Record<string, unknown> = {}) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model, messages: [{ role: "user", content: "go" }], stream: true, ...extra })
  })

const dataOf = (events: Array<string>) => events.filter((e) => e.startsWith("data: ")).map((e) => e.slice(6))
const chunksOf = (events: Array<string>) => dataOf(events).filter((d) => d !== "[DONE]").map((d) => JSON.parse(d))

describe("SSE chat stream", () => {
  it("sends role first, reasoning and content deltas, a finish chunk with usage, then [DONE]", async () => {
    const response = await stream("plain")
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    expect(response.headers.get("cache-control")).toBe("no-cache")
    const events = await readSse(response)
    const data = dataOf(events)
    expect(data[data.length - 1]).toBe("[DONE]")
    const chunks = chunksOf(events)
    const ids = new Set(chunks.map((c) => c.id))
    expect(ids.size).toBe(1)
    expect(chunks[0].choices[0].delta.role).toBe("assistant")
    expect(chunks.slice(1).every((c) => c.choices[0].delta.role === undefined)).toBe(true)
    const reasoning = chunks.map((c) => c.choices[0].delta.reasoning_content ?? "").join("")
    const content = chunks.map((c) => c.choices[0].delta.content ?? "").join("")
    expect(reasoning).toBe("think first")
    expect(content).toBe("one two three")
    const last = chunks[chunks.length - 1]
    expect(last.choices[0].finish_reason).toBe("stop")
    expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens)
    expect(chunks.slice(0, -1).every((c) => c.usage === undefined && c.choices[0].finish_reason === null)).toBe(true)
  })

  const lookupTool = { tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }] }

  it("adds the choices:[] usage chunk when stream_options.include_usage is set", async () => {
    const chunks = chunksOf(await readSse(await stream("tools", { ...lookupTool, stream_options: { include_usage: true } })))
    const last = chunks[chunks.length - 1]
    expect(last.choices).toEqual([])
    expect(last.usage).toEqual({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 })
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe("tool_calls")
  })

  it("assembles tool-call deltas by index and sends each call whole once validated", async () => {
    const chunks = chunksOf(await readSse(await stream("tools", lookupTool)))
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
    expect(deltas).toEqual([
      { index: 0, id: "call_a", type: "function", function: { name: "lookup", arguments: "{\"q\":\"x\"}" } },
      { index: 1, id: "call_b", type: "function", function: { name: "lookup", arguments: "{}" } }
    ])
  })

  it("sends keep-alive comments during silences", async () => {
    const events = await readSse(await stream("slow"))
    expect(events.filter((e) => e === ": keep-alive").length).toBeGreaterThan(0)
    expect(chunksOf(events).map((c) => c.choices[0].delta.content ?? "").join("")).toBe("a b")
  })

  it("reports a mid-stream failure as an error event, then [DONE]", async () => {
    const events = await readSse(await stream("failing"))
    const data = dataOf(events)
    expect(data[data.length - 1]).toBe("[DONE]")
    const error = JSON.parse(data[data.length - 2]!)
    expect(error).toEqual({ error: { message: "model server went away", type: "server_error", param: null, code: "upstream_error" } })
    const content = chunksOf(events).filter((c) => c.choices).map((c) => c.choices[0].delta.content ?? "").join("")
    expect(content).toBe("first second ")
  })

  it("interrupts the backend within one second of the client disconnecting", async () => {
    const before = ends.length
    const disconnectedAt = await disconnectMidStream(
      `${server.url}/v1/chat/completions`,
      { model: "endless", messages: [{ role: "user", content: "go" }], stream: true },
      500,
      Date.now
    )
    const deadline = disconnectedAt + 1000
    while (ends.length === before && Date.now() < deadline + 200) await new Promise((r) => setTimeout(r, 10))
    const end = ends[before]
    expect(end).toBeDefined()
    expect(end!.kind).toBe("cancelled")
    expect(end!.model).toBe("endless")
    expect(end!.at - disconnectedAt).toBeLessThan(1000)
  })

  it("answers stream:false with one JSON completion from the same backend", async () => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "plain", messages: [{ role: "user", content: "go" }] })
    })
    const body = await response.json() as any
    expect(body.choices[0].message).toEqual({ role: "assistant", content: "one two three", reasoning_content: "think first" })
  })
})
