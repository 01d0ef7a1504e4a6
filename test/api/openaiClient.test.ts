/**
 * The official `openai` npm client, unchanged, against our chat endpoint on
 * the real Node server: plain, streamed, a tool round trip, and errors
 * raised as the SDK's own error classes.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashKey, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { contentText } from "../../core/chat/ChatRequest.ts"
import { type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

let server: RunningServer
let client: OpenAI

beforeAll(async () => {
  server = await startInProcess({
    keys: [...recordsFromPlainKeys([TEST_KEY]), { name: "tight", sha256: hashKey("tight-key"), requestsPerMinute: 1 }],
    chat: ScriptedChat.layer({
      models: ["scripted-1", "scripted-2", "broken"],
      replies: (request) => {
        if (request.model === "broken") {
          // "late" fails after the first chunk is out (mid-stream); anything else before the first byte.
          const late = contentText(request.messages[request.messages.length - 1]!.content) === "late"
          return { content: "partial answer", failAfter: late ? 1 : 0, failure: { reason: "upstream", message: "model server answered 500" } }
        }
        const last = request.messages[request.messages.length - 1]!
        if (last.role === "tool") return { content: `The weather is ${contentText(last.content)}.` }
        if (request.tools !== undefined) {
          return { reasoning: "The user asks for weather; call the tool.", toolCalls: [{ id: "call_1", name: "get_weather", arguments: { city: "Paris" } }] }
        }
        return { reasoning: "Greeting back.", content: `Hello! You said: ${contentText(last.content)}` }
      }
    })
  })
  client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${server.url}/v1`, maxRetries: 0 })
})
afterAll(() => server.close())

describe("openai SDK", () => {
  it("creates a completion", async () => {
    const completion = await client.chat.completions.create({ model: "scripted-1", messages: [{ role: "user", content: "hi there" }] })
    expect(completion.object).toBe("chat.completion")
    expect(completion.id).toMatch(/^chatcmpl-/)
    expect(completion.model).toBe("scripted-1")
    expect(completion.choices[0]!.message.content).toBe("Hello! You said: hi there")
    expect(completion.choices[0]!.finish_reason).toBe("stop")
    expect((completion.choices[0]!.message as any).reasoning_content).toBe("Greeting back.")
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens)
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0)
  })

  it("returns n choices", async () => {
    const completion = await client.chat.completions.create({ model: "scripted-2", n: 3, messages: [{ role: "user", content: "x" }] })
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1, 2])
  })

  it("streams with stream: true", async () => {
    const stream = await client.chat.completions.create({
      model: "scripted-1",
      messages: [{ role: "user", content: "stream please" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    let content = ""
    let reasoning = ""
    let finish: string | null = null
    let usage: OpenAI.CompletionUsage | undefined | null
    let chunks = 0
    for await (const chunk of stream) {
      chunks++
      expect(chunk.object).toBe("chat.completion.chunk")
      if (chunk.usage) usage = chunk.usage
      const choice = chunk.choices[0]
      if (choice === undefined) continue
      content += choice.delta.content ?? ""
      reasoning += (choice.delta as any).reasoning_content ?? ""
      finish = choice.finish_reason ?? finish
    }
    expect(content).toBe("Hello! You said: stream please")
    expect(reasoning).toBe("Greeting back.")
    expect(finish).toBe("stop")
    expect(usage?.total_tokens).toBeGreaterThan(0)
    expect(chunks).toBeGreaterThan(5)
  })

  it("round-trips a tool call with the .stream() helper accumulating it", async () => {
    const tools: Array<OpenAI.Chat.ChatCompletionTool> = [{
      type: "function",
      function: { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }
    }]
    const messages: Array<OpenAI.Chat.ChatCompletionMessageParam> = [{ role: "user", content: "Weather in Paris?" }]
    const runner = client.chat.completions.stream({ model: "scripted-1", messages, tools })
    const first = await runner.finalChatCompletion()
    const call = first.choices[0]!.message.tool_calls![0]!
    expect(first.choices[0]!.finish_reason).toBe("tool_calls")
    expect(call.type).toBe("function")
    if (call.type !== "function") throw new Error("expected a function call")
    expect(call.function.name).toBe("get_weather")
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Paris" })

    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "sunny, 21 C" })
    const second = await client.chat.completions.create({ model: "scripted-1", messages, tools })
    expect(second.choices[0]!.message.content).toBe("The weather is sunny, 21 C.")
  })

  it("reports tool calls at the top level too, as the spec shows them", async () => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "scripted-1", messages: [{ role: "user", content: "w?" }], tools: [{ type: "function", function: { name: "get_weather" } }] })
    })
    const body = await response.json() as any
    expect(body.tool_calls).toEqual(body.choices[0].message.tool_calls)
    expect(body.choices[0].message.content).toBeNull()
  })

  it("raises the SDK's error classes", async () => {
    const bad = new OpenAI({ apiKey: "wrong", baseURL: `${server.url}/v1`, maxRetries: 0 })
    await expect(bad.chat.completions.create({ model: "scripted-1", messages: [{ role: "user", content: "x" }] }))
      .rejects.toBeInstanceOf(OpenAI.AuthenticationError)
    const badRequest = client.chat.completions.create({ model: "scripted-1", max_tokens: 1, messages: [{ role: "user", content: "x" }] })
    await expect(badRequest).rejects.toBeInstanceOf(OpenAI.BadRequestError)
    await expect(badRequest).rejects.toMatchObject({ status: 400, param: "max_tokens", type: "invalid_request_error" })
    await expect(client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }))
      .rejects.toBeInstanceOf(OpenAI.NotFoundError)
    const tight = new OpenAI({ apiKey: "tight-key", baseURL: `${server.url}/v1`, maxRetries: 0 })
    await tight.chat.completions.create({ model: "scripted-1", messages: [{ role: "user", content: "x" }] })
    const limited = tight.chat.completions.create({ model: "scripted-1", messages: [{ role: "user", content: "x" }] })
    await expect(limited).rejects.toBeInstanceOf(OpenAI.RateLimitError)
    await expect(limited).rejects.toMatchObject({ status: 429, code: "rate_limit_exceeded" })
    const failed = client.chat.completions.create({ model: "broken", messages: [{ role: "user", content: "x" }] })
    await expect(failed).rejects.toBeInstanceOf(OpenAI.InternalServerError)
    await expect(failed).rejects.toMatchObject({ status: 502, code: "upstream_error", message: expect.stringContaining("model server answered 500") })
  })

  it("raises a mid-stream failure from the stream iterator, after the chunks that arrived", async () => {
    const stream = await client.chat.completions.create({ model: "broken", stream: true, messages: [{ role: "user", content: "late" }] })
    const received: Array<string> = []
    const consume = async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? "")
    }
    await expect(consume()).rejects.toThrow(/model server answered 500/)
    expect(received.join("")).not.toBe("")
  })

  it("rejects create() with the real status when a stream fails before its first byte", async () => {
    const failed = client.chat.completions.create({ model: "broken", stream: true, messages: [{ role: "user", content: "x" }] })
    await expect(failed).rejects.toMatchObject({ status: 502, code: "upstream_error", message: expect.stringContaining("model server answered 500") })
  })

  it("lists models", async () => {
    const models = await client.models.list()
    expect(models.data.map((m) => m.id)).toEqual(["scripted-1", "scripted-2", "broken"])
  })
})
