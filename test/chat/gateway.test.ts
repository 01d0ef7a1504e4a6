/**
 * The chat pipeline over real sockets (our Node server, scripted backends):
 * stop sequences across chunk boundaries, n by fan-out, each validation
 * policy on invalid tool arguments, unknown tools and JSON replies, and
 * usage counted when a backend reports none.
 */
import { afterAll, describe, expect, it } from "vitest"
import { type ScriptedChatOptions, type ScriptedEnd, ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import type { ValidationPolicy } from "../../core/chat/ChatGateway.ts"
import { authHeaders, readSse, type RunningServer, startInProcess } from "../support/servers.ts"

const servers: Array<RunningServer> = []
afterAll(() => Promise.all(servers.map((s) => s.close())))

const serve = async (chat: ScriptedChatOptions, validation?: ValidationPolicy) => {
  const server = await startInProcess({ chat: ScriptedChat.layer(chat), ...(validation === undefined ? {} : { validation }) })
  servers.push(server)
  return server
}

const post = (server: RunningServer, body: Record<string, unknown>) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "go" }], ...body })
  })

const chunks = async (response: Response) =>
  (await readSse(response)).filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)))

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }
  }
}

describe("stop sequences", () => {
  it("cut a stream at a stop sequence split across chunks, and cancel the backend", async () => {
    const ends: Array<ScriptedEnd> = []
    const server = await serve({
      models: ["m"],
      replies: [{ pieces: [{ content: "Hello wo" }, { content: "rld EN" }, { content: "D more text" }, { content: " never sent" }], delayMs: 20 }],
      onEnd: (end) => ends.push(end)
    })
    const events = await chunks(await post(server, { stream: true, stop: ["END"] }))
    const content = events.map((c) => c.choices[0]?.delta.content ?? "").join("")
    expect(content).toBe("Hello world ")
    const finish = events.find((c) => c.choices[0]?.finish_reason)
    expect(finish.choices[0].finish_reason).toBe("stop")
    expect(events.at(-1).usage.total_tokens).toBeGreaterThan(0)
    await new Promise((r) => setTimeout(r, 100))
    expect(ends).toEqual([{ kind: "cancelled", model: "m" }])
  })

  it("hold back a partial match and release it when it turns out not to be one", async () => {
    const server = await serve({ models: ["m"], replies: [{ pieces: [{ content: "a <e" }, { content: "m> b <" }, { content: "end>" }] }] })
    const events = await chunks(await post(server, { stream: true, stop: ["<end>"] }))
    expect(events.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("a <em> b ")
  })

  it("cut a whole completion with finish_reason stop", async () => {
    const server = await serve({ models: ["m"], replies: [{ content: "one two three four", finishReason: "length" }] })
    const body = await (await post(server, { stop: ["three", "two"] })).json() as any
    expect(body.choices[0].message.content).toBe("one ")
    expect(body.choices[0].finish_reason).toBe("stop")
  })
})

describe("finish reasons", () => {
  it("end a whole answer and a stream alike when a reply calls a tool and its text hits a stop sequence", async () => {
    const call = { name: "get_weather", arguments: { city: "Oslo" }, id: "call_1" }
    const server = await serve({
      models: ["m"],
      replies: [{
        content: "checking END ignored",
        toolCalls: [call],
        pieces: [
          { toolCall: { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } } },
          { content: "checking END ignored" }
        ]
      }]
    })
    const body = await (await post(server, { tools: [weatherTool], stop: ["END"] })).json() as any
    expect(body.choices[0].message.content).toBe("checking ")
    expect(body.choices[0].finish_reason).toBe("tool_calls")
    const events = await chunks(await post(server, { stream: true, tools: [weatherTool], stop: ["END"] }))
    expect(events.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("checking ")
    expect(events.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((t: any) => t.function.name)).toEqual(["get_weather"])
    expect(events.flatMap((c) => c.choices.map((ch: any) => ch.finish_reason)).filter((r) => r !== null)).toEqual(["tool_calls"])
  })

  it("keep length when the tokens ran out, even with a tool call", async () => {
    const server = await serve({ models: ["m"], replies: [{ toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }], finishReason: "length" }] })
    const body = await (await post(server, { tools: [weatherTool] })).json() as any
    expect(body.choices[0].finish_reason).toBe("length")
    const events = await chunks(await post(server, { stream: true, tools: [weatherTool] }))
    expect(events.flatMap((c) => c.choices.map((ch: any) => ch.finish_reason)).filter((r) => r !== null)).toEqual(["length"])
  })
})

describe("n fan-out", () => {
  const fanOut: ScriptedChatOptions = {
    models: ["m"],
    answersN: false,
    replies: (request) => ({ content: `answer for ${request.n} choice`, delayMs: 10 })
  }
  it("answers n choices from n single requests", async () => {
    const server = await serve(fanOut)
    const body = await (await post(server, { n: 3 })).json() as any
    expect(body.choices.map((c: any) => [c.index, c.message.content])).toEqual([[0, "answer for 1 choice"], [1, "answer for 1 choice"], [2, "answer for 1 choice"]])
    expect(body.usage.prompt_tokens).toBeGreaterThan(0)
  })
  it("interleaves streamed choices by index", async () => {
    const server = await serve(fanOut)
    const events = await chunks(await post(server, { n: 3, stream: true }))
    const byIndex = new Map<number, string>()
    for (const c of events) for (const choice of c.choices) byIndex.set(choice.index, (byIndex.get(choice.index) ?? "") + (choice.delta.content ?? ""))
    expect([...byIndex.entries()].sort()).toEqual([[0, "answer for 1 choice"], [1, "answer for 1 choice"], [2, "answer for 1 choice"]])
    const order = events.flatMap((c) => c.choices.map((x: any) => x.index))
    expect(new Set(order.slice(0, 6)).size).toBeGreaterThan(1) // not one choice after another
    expect(events.filter((c) => c.choices[0]?.finish_reason === "stop").length).toBe(3)
  })
})

describe("tool-call validation", () => {
  const badThenGood = (bad: { name: string; arguments: string }): ScriptedChatOptions => ({
    models: ["m"],
    replies: (request) => {
      const retried = request.messages.some((m) => m.role === "tool")
      return retried
        ? { toolCalls: [{ id: "call_2", name: "get_weather", arguments: { city: "Paris" } }] }
        : { toolCalls: [{ id: "call_1", ...bad }] }
    }
  })

  it("retry: asks again with the validation error and returns the valid call", async () => {
    const seen: Array<string> = []
    const server = await serve({
      ...badThenGood({ name: "get_weather", arguments: "{\"town\": \"Paris\"}" }),
      replies: (request) => {
        const feedback = request.messages.find((m) => m.role === "tool")
        if (feedback !== undefined) seen.push(String(feedback.content))
        return (badThenGood({ name: "get_weather", arguments: "{\"town\": \"Paris\"}" }).replies as Function)(request)
      }
    }, { mode: "retry", retries: 2 })
    const body = await (await post(server, { tools: [weatherTool] })).json() as any
    expect(body.choices[0].message.tool_calls).toEqual([{ id: "call_2", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }])
    expect(body.choices[0].finish_reason).toBe("tool_calls")
    expect(seen[0]).toMatch(/required property "city"/)
  })

  it("retry: a streamed call goes out only once valid", async () => {
    const server = await serve(badThenGood({ name: "get_weather", arguments: "{\"city\": 5}" }), { mode: "retry", retries: 1 })
    const events = await chunks(await post(server, { tools: [weatherTool], stream: true }))
    const calls = events.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
    expect(calls).toEqual([{ index: 0, id: "call_2", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }])
  })

  it("retry: gives up after N retries with a 502 naming the problem", async () => {
    const server = await serve({ models: ["m"], replies: [{ toolCalls: [{ name: "get_weather", arguments: "{}" }] }] }, { mode: "retry", retries: 2 })
    const response = await post(server, { tools: [weatherTool] })
    expect(response.status).toBe(502)
    const body = await response.json() as any
    expect(body.error.code).toBe("tool_call_invalid")
    expect(body.error.message).toMatch(/after 2 retries: tool call get_weather arguments do not match the schema of get_weather: value: .*required property "city"/)
  })

  it("retry in a stream: gives up with an error event, then [DONE]", async () => {
    const server = await serve({ models: ["m"], replies: [{ content: "thinking...", toolCalls: [{ name: "get_weather", arguments: "not json" }] }] }, { mode: "retry", retries: 1 })
    const events = await readSse(await post(server, { tools: [weatherTool], stream: true }))
    expect(events.at(-1)).toBe("data: [DONE]")
    const error = JSON.parse(events.at(-2)!.slice(6))
    expect(error.error.code).toBe("tool_call_invalid")
    expect(error.error.message).toMatch(/arguments is not valid JSON/)
  })

  it("treats a call to a tool not in the request the same way", async () => {
    const server = await serve(badThenGood({ name: "launch_rocket", arguments: "{}" }), { mode: "retry", retries: 1 })
    const body = await (await post(server, { tools: [weatherTool] })).json() as any
    expect(body.choices[0].message.tool_calls[0].function.name).toBe("get_weather")
    const strict = await serve({ models: ["m"], replies: [{ toolCalls: [{ name: "launch_rocket", arguments: "{}" }] }] }, { mode: "repair", retries: 0 })
    const refused = await post(strict, { tools: [weatherTool] })
    expect(refused.status).toBe(502)
    expect((await refused.json() as any).error.message).toMatch(/calls "launch_rocket", which is not one of the request's tools \("get_weather"\)/)
  })

  it("repair: fixes broken JSON arguments with jsonrepair", async () => {
    const server = await serve({ models: ["m"], replies: [{ toolCalls: [{ name: "get_weather", arguments: "{city: 'Paris',}" }] }] }, { mode: "repair", retries: 0 })
    const body = await (await post(server, { tools: [weatherTool] })).json() as any
    expect(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments)).toEqual({ city: "Paris" })
  })

  it("pass: lets an invalid call through, marked", async () => {
    const server = await serve({ models: ["m"], replies: [{ toolCalls: [{ name: "get_weather", arguments: "{\"city\": 1}" }] }] }, { mode: "pass", retries: 0 })
    const body = await (await post(server, { tools: [weatherTool] })).json() as any
    const call = body.choices[0].message.tool_calls[0]
    expect(call.function.arguments).toBe("{\"city\": 1}")
    expect(call.periscope_validation.valid).toBe(false)
    expect(call.periscope_validation.error).toMatch(/city: Instance type "number" is invalid/)
  })
})

describe("response formats", () => {
  const answerSchema = {
    type: "json_schema",
    json_schema: { name: "answer", schema: { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] } }
  }

  it("json_schema with retry: an invalid reply is asked again", async () => {
    const server = await serve({
      models: ["m"],
      replies: (request) => ({ content: request.messages.length > 1 ? "{\"answer\": 42}" : "{\"answer\": \"forty-two\"}" })
    }, { mode: "retry", retries: 1 })
    const body = await (await post(server, { response_format: answerSchema })).json() as any
    expect(JSON.parse(body.choices[0].message.content)).toEqual({ answer: 42 })
  })

  it("json_schema in a stream with retry: content is held until valid", async () => {
    const server = await serve({
      models: ["m"],
      replies: (request) => ({ content: request.messages.length > 1 ? "{\"answer\": 7}" : "{\"answer\": " })
    }, { mode: "retry", retries: 1 })
    const events = await chunks(await post(server, { response_format: answerSchema, stream: true }))
    const content = events.map((c) => c.choices[0]?.delta.content ?? "").filter((t) => t !== "")
    expect(content).toEqual(["{\"answer\": 7}"])
  })

  it("json_object with repair, and failure when it cannot be repaired into an object", async () => {
    const repaired = await serve({ models: ["m"], replies: [{ content: "{answer: 1" }] }, { mode: "repair", retries: 0 })
    const ok = await (await post(repaired, { response_format: { type: "json_object" } })).json() as any
    expect(JSON.parse(ok.choices[0].message.content)).toEqual({ answer: 1 })
    const hopeless = await serve({ models: ["m"], replies: [{ content: "[1, 2]" }] }, { mode: "repair", retries: 0 })
    const failed = await post(hopeless, { response_format: { type: "json_object" } })
    expect(failed.status).toBe(502)
    expect((await failed.json() as any).error).toMatchObject({ code: "response_format_invalid", type: "server_error" })
  })

  it("pass: marks an invalid streamed reply on its finish chunk", async () => {
    const server = await serve({ models: ["m"], replies: [{ content: "not json at all" }] }, { mode: "pass", retries: 0 })
    const events = await chunks(await post(server, { response_format: { type: "json_object" }, stream: true }))
    const finish = events.find((c) => c.choices[0]?.finish_reason)
    expect(finish.choices[0].periscope_validation).toMatchObject({ valid: false })
    expect(events.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("not json at all")
  })
})

describe("usage", () => {
  it("is counted with the tokenizer when the backend reports none, streaming or not", async () => {
    const server = await serve({ models: ["m"], reportsUsage: false, replies: [{ content: "Hello there, friend." }] })
    const body = await (await post(server, {})).json() as any
    // o200k_base: "Hello there, friend." is 5 tokens; "go" plus chat framing is 3 + 1 + 3.
    expect(body.usage).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 })
    const events = await chunks(await post(server, { stream: true, stream_options: { include_usage: true } }))
    expect(events.at(-1).usage).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 })
  })
})
