/**
 * /v1/responses in front of a real model server: the gateway's own upstream client against the
 * OpenAI-compatible stand-in (test/support/mockUpstream.ts), driven by the openai SDK. What the
 * model server is sent for a Responses request (instructions, input items, function tools,
 * text.format, the sampling fields), a tool call streamed in pieces assembled into one
 * function_call item, and the model server failing: before its first byte (the SDK's error
 * class with the real status) and mid-stream (response.failed).
 */
import OpenAI, { APIError } from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type MockUpstream, startMockUpstream } from "../support/mockUpstream.ts"
import { type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

let upstream: MockUpstream
let server: RunningServer
let client: OpenAI

/** What each request gets, by the text of its last message. */
const lastText = (body: any): string => {
  const content = body?.messages?.at(-1)?.content
  return typeof content === "string" ? content : ""
}

beforeAll(async () => {
  upstream = await startMockUpstream({
    respond: (body) => {
      const last = lastText(body)
      if (last === "fail early") return { status: 503, errorMessage: "model server overloaded" }
      if (last === "fail late") return { content: "one two three four five", errorEventAfterChunks: 3, errorEvent: { message: "model server crashed", type: "server_error", code: 500 } }
      if (last === "call a tool") return { toolCalls: [{ id: "call_up_1", name: "lookup", arguments: "{\"term\":\"vacuum\"}" }] }
      if (body?.messages?.at(-1)?.role === "tool") return { content: `Looked up: ${body.messages.at(-1).content}` }
      if (body?.response_format?.type === "json_schema") return { content: "{\"term\":\"vacuum\"}" }
      return { content: "Hello from the mock upstream.", reasoning: "Short." }
    }
  })
  server = await startInProcess({
    chatConfig: {
      upstreams: { mock: { baseUrl: upstream.url, retries: { max: 0, baseDelayMs: 5 } } },
      models: [{ name: "main", targets: [{ upstream: "mock", model: "m" }] }]
    }
  })
  client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${server.url}/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await server?.close()
  await upstream?.close()
})

const lookupTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "lookup",
  description: "Look a term up",
  parameters: { type: "object", properties: { term: { type: "string" } }, required: ["term"], additionalProperties: false },
  strict: true
}

const lastSent = () => upstream.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)!.body

describe("what the model server is sent", () => {
  it("instructions as a system message, the sampling fields under chat's names", async () => {
    const response = await client.responses.create({ model: "main", instructions: "Be brief.", input: "hello", max_output_tokens: 300, temperature: 0.3, top_p: 0.9 })
    expect(response.output_text).toBe("Hello from the mock upstream.")
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"])
    expect(response.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) })
    const sent = lastSent()
    expect(sent.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "hello" }])
    expect(sent).toMatchObject({ model: "m", max_tokens: 300, temperature: 0.3, top_p: 0.9, stream: false })
    expect(sent.tools).toBeUndefined()
  })

  it("function tools as chat tools, an earlier call and its output as an assistant tool call and a tool message", async () => {
    const first = await client.responses.create({ model: "main", input: "call a tool", tools: [lookupTool], tool_choice: "required" })
    const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall
    expect(call).toMatchObject({ call_id: "call_up_1", name: "lookup", arguments: "{\"term\":\"vacuum\"}" })
    expect(lastSent()).toMatchObject({
      tools: [{ type: "function", function: { name: "lookup", description: "Look a term up", parameters: lookupTool.parameters, strict: true } }],
      tool_choice: "required"
    })
    const second = await client.responses.create({
      model: "main",
      input: [{ role: "user", content: "call a tool" }, ...first.output as Array<OpenAI.Responses.ResponseInputItem>, { type: "function_call_output", call_id: "call_up_1", output: "a database command" }],
      tools: [lookupTool]
    })
    expect(second.output_text).toBe("Looked up: a database command")
    expect(lastSent().messages).toEqual([
      { role: "user", content: "call a tool" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_up_1", type: "function", function: { name: "lookup", arguments: "{\"term\":\"vacuum\"}" } }] },
      { role: "tool", tool_call_id: "call_up_1", content: "a database command" }
    ])
  })

  it("text.format json_schema as response_format", async () => {
    const schema = { type: "object", properties: { term: { type: "string" } }, required: ["term"], additionalProperties: false }
    const response = await client.responses.create({ model: "main", input: "as JSON", text: { format: { type: "json_schema", name: "term", schema, strict: true } } })
    expect(JSON.parse(response.output_text)).toEqual({ term: "vacuum" })
    expect(lastSent().response_format).toEqual({ type: "json_schema", json_schema: { name: "term", schema, strict: true } })
  })
})

describe("streamed through the upstream client", () => {
  it("assembles the answer and the model server's usage", async () => {
    const stream = client.responses.stream({ model: "main", input: "hello" })
    const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
    for await (const event of stream) events.push(event)
    const final = await stream.finalResponse()
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(final.output_text).toBe("Hello from the mock upstream.")
    expect(final.usage!.input_tokens).toBeGreaterThan(0)
    expect(lastSent()).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })

  it("joins a tool call's argument pieces into one function_call item", async () => {
    const stream = client.responses.stream({ model: "main", input: "call a tool", tools: [lookupTool] })
    const types: Array<string> = []
    for await (const event of stream) types.push(event.type)
    const final = await stream.finalResponse()
    expect(final.output).toHaveLength(1)
    expect(final.output[0]).toMatchObject({ type: "function_call", call_id: "call_up_1", name: "lookup", arguments: "{\"term\":\"vacuum\"}", status: "completed" })
    expect(types).toContain("response.function_call_arguments.done")
  })

  it("ends with response.failed when the model server fails mid-stream", async () => {
    const stream = client.responses.stream({ model: "main", input: "fail late" })
    const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
    for await (const event of stream) events.push(event)
    const failed = events.at(-1) as OpenAI.Responses.ResponseFailedEvent
    expect(failed.type).toBe("response.failed")
    expect(failed.response.error!.message).toMatch(/model server crashed/)
    expect(failed.sequence_number).toBe(events.length - 1)
    const text = events.filter((e) => e.type === "response.output_text.delta").map((e) => (e as OpenAI.Responses.ResponseTextDeltaEvent).delta).join("")
    expect(text).toBe("one two ")
    expect((await stream.finalResponse()).status).toBe("failed")
  })

  it("refuses with the gateway's status for it when it fails before its first byte, whole or streamed, as chat completions do", async () => {
    const chat = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "fail early" }] }).catch((error: APIError) => error)
    expect(chat).toBeInstanceOf(OpenAI.InternalServerError)
    for (const stream of [false, true]) {
      const refused = client.responses.create({ model: "main", input: "fail early", stream })
      await expect(refused).rejects.toBeInstanceOf(OpenAI.InternalServerError)
      await expect(refused).rejects.toMatchObject({ status: (chat as APIError).status, code: (chat as APIError).code, message: expect.stringContaining("503") })
    }
  })
})
