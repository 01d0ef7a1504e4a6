/**
 * Upstream answers normalised into our ChatResult and ChatChunks, read from
 * the mock upstream over loopback: reasoning under either name, tool calls
 * (invalid JSON arguments passed on untouched, for the pipeline to judge),
 * usage, finish reasons mapped into stop/eos/length/tool_calls, and answers
 * that cannot be used failing with a clear UpstreamError.
 */
import { Effect, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpenAiUpstream } from "../../core/backends/openai/OpenAiUpstream.ts"
import type { ChatChunk } from "../../core/chat/ChatCompletion.ts"
import type { ChatRequest } from "../../core/chat/ChatRequest.ts"
import { StreamNormalizer } from "../../core/backends/openai/StreamNormalizer.ts"
import { UpstreamClient } from "../../core/chat/Upstream.ts"
import { chatRequest, type MockUpstream, mockTarget, type Scenario, startMockUpstream } from "../support/mockUpstream.ts"

let upstream: MockUpstream
const scenarios = new Map<string, Scenario>()

beforeAll(async () => {
  upstream = await startMockUpstream({ respond: (body) => scenarios.get(body?.model) })
})
afterAll(() => upstream.close())

/** Registers a scenario under a fresh model name and returns a target asking for it. */
let counter = 0
const targetWith = (scenario: Scenario) => {
  const model = `scenario-${counter++}`
  scenarios.set(model, scenario)
  return mockTarget(upstream, { model })
}

const provide = <A, E>(effect: Effect.Effect<A, E, UpstreamClient>) => Effect.provide(effect, OpenAiUpstream.layerFetch)
const complete = (scenario: Scenario, request: ChatRequest = chatRequest()) =>
  Effect.runPromise(provide(Effect.flatMap(Effect.service(UpstreamClient), (c) => c.complete(targetWith(scenario), request))))
const completeError = (scenario: Scenario) =>
  Effect.runPromise(provide(Effect.flip(Effect.flatMap(Effect.service(UpstreamClient), (c) => c.complete(targetWith(scenario), chatRequest())))))
const collect = (scenario: Scenario, request: ChatRequest = chatRequest({ stream: true })) =>
  Effect.runPromise(provide(Effect.flatMap(Effect.service(UpstreamClient), (c) => Stream.runCollect(c.stream(targetWith(scenario), request)))))
const streamErrorFor = (scenario: Scenario, request: ChatRequest) =>
  Effect.runPromise(provide(Effect.flip(Effect.flatMap(Effect.service(UpstreamClient), (c) => Stream.runCollect(c.stream(targetWith(scenario), request))))))
const streamError = (scenario: Scenario) => streamErrorFor(scenario, chatRequest({ stream: true }))

/** What a client would assemble from the chunks of one choice. */
const assemble = (chunks: ReadonlyArray<ChatChunk>, index = 0) => {
  let content = ""
  let reasoning = ""
  const calls: Array<{ id?: string; name?: string; arguments: string }> = []
  const finishes: Array<string> = []
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      if (choice.index !== index) continue
      content += choice.delta.content ?? ""
      reasoning += choice.delta.reasoning_content ?? ""
      for (const call of choice.delta.tool_calls ?? []) {
        const slot = (calls[call.index] ??= { arguments: "" })
        if (call.id !== undefined) slot.id = call.id
        if (call.function?.name !== undefined) slot.name = call.function.name
        slot.arguments += call.function?.arguments ?? ""
      }
      if (choice.finish_reason !== null) finishes.push(choice.finish_reason)
    }
  }
  return { content, reasoning, calls, finishes }
}

describe("whole completions", () => {
  it("reads content, reasoning_content and usage; the model is the caller's name", async () => {
    const usage = { prompt_tokens: 11, completion_tokens: 22, total_tokens: 33 }
    const result = await complete({ content: "The answer is 4.", reasoning: "2 + 2 = 4", usage }, chatRequest({ model: "client-alias" }))
    expect(result.model).toBe("client-alias")
    expect(result.usage).toEqual(usage)
    expect(result.choices).toEqual([{
      index: 0,
      message: { role: "assistant", content: "The answer is 4.", reasoning_content: "2 + 2 = 4" },
      finish_reason: "stop",
      logprobs: null
    }])
  })

  it("reads reasoning sent as `reasoning`", async () => {
    const result = await complete({ content: "ok", reasoning: "thinking aloud", reasoningField: "reasoning" })
    expect(result.choices[0]!.message.reasoning_content).toBe("thinking aloud")
  })

  it("passes tool calls on with their arguments untouched, even invalid JSON", async () => {
    const result = await complete({
      toolCalls: [{ id: "call_1", name: "lookup", arguments: "{\"q\": \"x\"}" }, { name: "broken", arguments: "{\"q\": " }]
    })
    const message = result.choices[0]!.message
    expect(message.content).toBeNull()
    expect(message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"q\": \"x\"}" } },
      { id: "call_mock_1", type: "function", function: { name: "broken", arguments: "{\"q\": " } }
    ])
    expect(result.choices[0]!.finish_reason).toBe("tool_calls")
  })

  it("reports no usage when the upstream reports none (the pipeline counts it)", async () => {
    const result = await complete({ content: "four words right here", usage: null })
    expect(result.usage).toBeUndefined()
    expect(result.choices[0]!.message.content).toBe("four words right here")
  })

  it("recomputes a missing total_tokens", async () => {
    const result = await complete({ content: "x", usage: { prompt_tokens: 4, completion_tokens: 6 } as never })
    expect(result.usage).toEqual({ prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 })
  })

  it.each([
    ["stop", "stop"],
    ["eos", "eos"],
    ["eos_token", "eos"],
    ["length", "length"],
    ["max_tokens", "length"],
    ["tool_calls", "tool_calls"],
    ["function_call", "tool_calls"],
    ["content_filter", "stop"],
    ["something_new", "stop"],
    [null, "stop"]
  ] as const)("maps finish_reason %s to %s", async (raw, expected) => {
    const result = await complete({ content: "x", finishReason: raw })
    expect(result.choices[0]!.finish_reason).toBe(expected)
  })

  it("fails when the upstream says the answer ended in error", async () => {
    const error = await completeError({ content: "partial", finishReason: "error" })
    expect(error.kind).toBe("stream")
    expect(error.message).toContain("finish_reason \"error\"")
  })

  it("fails on a 200 that carries an error object, keeping its message", async () => {
    const error = await completeError({ rawBody: JSON.stringify({ error: { message: "model is loading", code: 503 } }) })
    expect(error.kind).toBe("status")
    expect(error.status).toBe(503)
    expect(error.message).toContain("model is loading")
  })

  it("fails on a body that is not JSON or has no choices", async () => {
    const notJson = await completeError({ rawBody: "<html>Bad gateway</html>" })
    expect(notJson.kind).toBe("protocol")
    expect(notJson.message).toContain("not JSON")
    const noChoices = await completeError({ rawBody: "{\"id\":\"x\"}" })
    expect(noChoices.kind).toBe("protocol")
    expect(noChoices.message).toContain("no choices")
  })
})

describe("streams", () => {
  it("streams content and reasoning_content deltas, a finish, then a usage-only chunk", async () => {
    const usage = { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 }
    const chunks = await collect({ content: "one two three", reasoning: "let me think", usage })
    const assembled = assemble(chunks)
    expect(assembled.content).toBe("one two three")
    expect(assembled.reasoning).toBe("let me think")
    expect(assembled.finishes).toEqual(["stop"])
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant")
    expect(chunks[chunks.length - 1]).toEqual({ choices: [], usage })
    // Word by word: one chunk per piece, not one lump.
    expect(chunks.filter((c) => c.choices.some((ch) => ch.delta.content !== undefined))).toHaveLength(3)
  })

  it("reads reasoning deltas sent as `reasoning`", async () => {
    const chunks = await collect({ content: "ok", reasoning: "via the other field", reasoningField: "reasoning" })
    expect(assemble(chunks).reasoning).toBe("via the other field")
    expect(chunks.some((c) => c.choices.some((ch) => "reasoning" in ch.delta))).toBe(false)
  })

  it("passes tool-call deltas with their index; arguments join to what the upstream sent", async () => {
    const chunks = await collect({
      toolCalls: [{ id: "call_a", name: "lookup", arguments: "{\"q\":\"periscope\"}" }, { id: "call_b", name: "bad", arguments: "{not json" }]
    })
    const assembled = assemble(chunks)
    expect(assembled.calls).toEqual([
      { id: "call_a", name: "lookup", arguments: "{\"q\":\"periscope\"}" },
      { id: "call_b", name: "bad", arguments: "{not json" }
    ])
    expect(assembled.finishes).toEqual(["tool_calls"])
    const deltas = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []))
    expect(deltas.filter((d) => d.index === 1).length).toBeGreaterThan(1)
  })

  it("keeps choices apart by index when the upstream answers n", async () => {
    const chunks = await collect({ content: "same words" }, chatRequest({ stream: true, n: 2 }))
    expect(assemble(chunks, 0)).toMatchObject({ content: "same words", finishes: ["stop"] })
    expect(assemble(chunks, 1)).toMatchObject({ content: "same words", finishes: ["stop"] })
  })

  it.each([
    ["function_call", "tool_calls"],
    ["content_filter", "stop"],
    ["max_tokens", "length"],
    ["length", "length"],
    ["eos", "eos"],
    ["unheard_of", "stop"]
  ] as const)("maps a streamed finish_reason %s to %s", async (raw, expected) => {
    const chunks = await collect({ content: "x", finishReason: raw })
    expect(assemble(chunks).finishes).toEqual([expected])
  })

  it("ignores keep-alive comments and CRLF line ends", async () => {
    const chunks = await collect({ keepAliveComments: 3, content: "still here" })
    expect(assemble(chunks).content).toBe("still here")
    const crlf = await collect({
      rawSse: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"crlf\"},\"finish_reason\":null}]}\r\n\r\n" +
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n"
    })
    expect(assemble(crlf)).toMatchObject({ content: "crlf", finishes: ["stop"] })
  })

  it("accepts a stream that ends after every choice finished, without [DONE]", async () => {
    const chunks = await collect({ content: "fine", omitDone: true })
    expect(assemble(chunks)).toMatchObject({ content: "fine", finishes: ["stop"] })
  })

  it("finishes a choice the upstream left open when [DONE] arrives", async () => {
    const chunks = await collect({ content: "no finish reason", omitFinishReason: true })
    expect(assemble(chunks)).toMatchObject({ content: "no finish reason", finishes: ["stop"] })
  })

  it("finishes a tool-calling choice left open at [DONE] as tool_calls, like a whole answer without finish_reason", async () => {
    const call = "{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}"
    const chunks = await collect({ rawSse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[${call}]},"finish_reason":null}]}\n\ndata: [DONE]\n\n` })
    expect(assemble(chunks).finishes).toEqual(["tool_calls"])
    const whole = await complete({ toolCalls: [{ name: "f", arguments: "{}" }], finishReason: null })
    expect(whole.choices[0]!.finish_reason).toBe("tool_calls")
  })

  it("fails a stream that ends without [DONE] or a finish_reason", async () => {
    const error = await streamError({ content: "cut short", omitDone: true, omitFinishReason: true })
    expect(error.kind).toBe("stream")
    expect(error.beforeFirstByte).toBe(false)
    expect(error.message).toContain("without [DONE] or a finish_reason")
  })

  // Many servers ignore n: fewer choices than asked is an answer (the router asks for the missing
  // ones, test/chat/gatewayUsers.test.ts), while a begun choice left unfinished is a cut.
  it("ends a stream without [DONE] well when every choice begun finished, even with fewer than n", async () => {
    const oneChoice = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"only one\"},\"finish_reason\":\"stop\"}]}\n\n"
    const chunks = await collect({ rawSse: oneChoice })
    expect(assemble(chunks)).toMatchObject({ content: "only one", finishes: ["stop"] })
    const asked2 = await collect({ rawSse: oneChoice }, chatRequest({ stream: true, n: 2 }))
    expect(assemble(asked2)).toMatchObject({ content: "only one", finishes: ["stop"] })
    const unfinished = oneChoice + "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"cut\"},\"finish_reason\":null}]}\n\n"
    const error = await streamErrorFor({ rawSse: unfinished }, chatRequest({ stream: true, n: 2 }))
    expect(error.kind).toBe("stream")
    expect(error.message).toContain("without [DONE]")
  })

  it("fails a stream whose body is empty", async () => {
    const error = await streamError({ rawSse: "" })
    expect(error.kind).toBe("stream")
    expect(error.message).toContain("before sending any event")
  })

  it("fails on an event that is not JSON", async () => {
    const error = await streamError({ rawSse: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {oops\n\n" })
    expect(error.kind).toBe("protocol")
    expect(error.message).toContain("not JSON")
  })

  it("fails on a streamed finish_reason error", async () => {
    const error = await streamError({ content: "partial", finishReason: "error" })
    expect(error.kind).toBe("stream")
  })

  it("fails on a streaming request answered with JSON", async () => {
    const error = await streamError({ ignoreStream: true, content: "whole" })
    expect(error.kind).toBe("protocol")
    expect(error.message).toContain("JSON instead of events")
  })
})

describe("StreamNormalizer on arbitrary read boundaries", () => {
  it("decodes events split anywhere, even inside a multi-byte character", () => {
    const sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\u00e9llo \ud83d\udd2d\"},\"finish_reason\":null}]}\n\n" +
      ": a comment\n\n" +
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"\u00fcber\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
    const bytes = new TextEncoder().encode(sse)
    const normalizer = new StreamNormalizer()
    const out: Array<ChatChunk> = []
    // One byte per read: every boundary the network could produce.
    for (let i = 0; i < bytes.length; i++) normalizer.feed(bytes.subarray(i, i + 1), out)
    expect(normalizer.end(out)).toBeUndefined()
    expect(normalizer.done).toBe(true)
    expect(assemble(out)).toMatchObject({ content: "h\u00e9llo \ud83d\udd2d", reasoning: "\u00fcber", finishes: ["stop"] })
  })

  it("a body cut inside an event is an error, not a shorter answer", () => {
    const bytes = new TextEncoder().encode("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"ind")
    const normalizer = new StreamNormalizer()
    const out: Array<ChatChunk> = []
    normalizer.feed(bytes, out)
    const issue = normalizer.end(out)
    expect(issue?.kind).toBe("protocol")
    expect(assemble(out).content).toBe("a")
  })
})
