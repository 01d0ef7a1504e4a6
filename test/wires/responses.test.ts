/**
 * The official `openai` client's Responses calls, unchanged, against POST /v1/responses on the
 * real Node server: plain, web_search (citations point at the sources retrieved, allowed_domains
 * keeps them to those sites), streamed (the SDK's stream helper assembles the events; their
 * order and sequence numbers), function tools over two turns, json_schema text format (a valid
 * answer, and a violation answered as chat completions answer it), a model failing mid-stream
 * (response.failed) and before its first token (the SDK's error class); every answer and event
 * checked against the schema /openapi.json gives for it.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { ScriptedChat, type ScriptedReply } from "../../core/backends/ScriptedChat.ts"
import { type ChatRequest, contentText } from "../../core/chat/ChatRequest.ts"
import { authHeaders, type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

const documents = [
  { url: "https://docs.example/postgres/vacuum", title: "VACUUM - PostgreSQL", text: "VACUUM reclaims storage occupied by dead tuples in PostgreSQL tables." },
  { url: "https://docs.example/postgres/analyze", title: "ANALYZE - PostgreSQL", text: "ANALYZE collects statistics about PostgreSQL tables for the query planner." },
  { url: "https://blog.other.example/vacuum-tips", title: "Vacuum tips", text: "Tips on VACUUM for busy PostgreSQL tables, from a blog." }
]

const lastText = (request: ChatRequest) => contentText(request.messages[request.messages.length - 1]!.content)

/** The scripted model: what it answers says what it was asked (sources, tools, a format). */
const reply = (request: ChatRequest): ScriptedReply => {
  const last = request.messages[request.messages.length - 1]!
  if (request.model === "broken") {
    return { content: "partial answer here", failAfter: lastText(request) === "late" ? 2 : 0, failure: { reason: "upstream", message: "model server answered 500" } }
  }
  if (request.grounding !== undefined) {
    // Cites every source it was given, and a source it was not ([9]: removed by the gateway).
    const cited = request.grounding.sources.map((s) => `${s.title} [${s.number}].`).join(" ")
    return { content: `Found: ${cited} Also [9].` }
  }
  if (last.role === "tool") return { content: `The weather is ${contentText(last.content)}.` }
  if ((request.tools?.length ?? 0) > 0) return { toolCalls: [{ id: "call_weather_1", name: "get_weather", arguments: { city: "Paris" } }] }
  const format = request.response_format
  if (format?.type === "json_schema") return { content: lastText(request).includes("invalid") ? "{\"city\": 42}" : "{\"city\": \"Paris\", \"celsius\": 21}" }
  if (request.max_tokens === 16) return { content: "cut short", finishReason: "length" }
  const system = request.messages.filter((m) => m.role === "system").map((m) => contentText(m.content)).join("|")
  return { reasoning: "Greeting back.", content: `Hello! You said: ${lastText(request)}${system === "" ? "" : ` (system: ${system})`}` }
}

let server: RunningServer
let client: OpenAI

beforeAll(async () => {
  server = await startInProcess({
    search: FixtureSearch.layer(documents),
    chat: ScriptedChat.layer({ models: ["scripted-1", "broken"], replies: reply })
  })
  client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${server.url}/v1`, maxRetries: 0 })
})
afterAll(() => server.close())

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true
}

const citySchema = {
  type: "object",
  properties: { city: { type: "string" }, celsius: { type: "number" } },
  required: ["city", "celsius"],
  additionalProperties: false
}

/** Every event of a stream, as the SDK's helper gives them, and the response it assembled. */
const streamed = async (params: OpenAI.Responses.ResponseCreateParamsStreaming | Omit<OpenAI.Responses.ResponseCreateParamsStreaming, "stream">) => {
  const stream = client.responses.stream(params as OpenAI.Responses.ResponseCreateParamsStreaming)
  const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
  for await (const event of stream) events.push(event)
  return { events, final: await stream.finalResponse() }
}

const expectSequenced = (events: ReadonlyArray<{ readonly sequence_number: number }>) =>
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))

describe("responses.create", () => {
  it("answers a string input, with output_text, usage and the request echoed", async () => {
    const response = await client.responses.create({ model: "scripted-1", input: "hi there", instructions: "Be brief.", temperature: 0.2, metadata: { run: "7" } })
    expect(response.object).toBe("response")
    expect(response.id).toMatch(/^resp_/)
    expect(response.status).toBe("completed")
    expect(response.model).toBe("scripted-1")
    expect(response.output_text).toBe("Hello! You said: hi there (system: Be brief.)")
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"])
    const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem
    expect(reasoning.content).toEqual([{ type: "reasoning_text", text: "Greeting back." }])
    expect(response.usage!.input_tokens).toBeGreaterThan(0)
    expect(response.usage!.output_tokens).toBeGreaterThan(0)
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens)
    expect(response).toMatchObject({ instructions: "Be brief.", temperature: 0.2, metadata: { run: "7" }, store: false, previous_response_id: null, error: null })
  })

  it("reads message items, an earlier answer's output items included, as the conversation", async () => {
    const first = await client.responses.create({ model: "scripted-1", input: [{ role: "developer", content: "Answer in French." }, { role: "user", content: "Bonjour" }] })
    expect(first.output_text).toBe("Hello! You said: Bonjour (system: Answer in French.)")
    const second = await client.responses.create({
      model: "scripted-1",
      input: [
        { role: "user", content: [{ type: "input_text", text: "Bonjour" }] },
        ...first.output,
        { role: "user", content: [{ type: "input_text", text: "Et " }, { type: "input_text", text: "alors ?" }] }
      ] as OpenAI.Responses.ResponseInput
    })
    expect(second.output_text).toBe("Hello! You said: Et alors ?")
  })

  it("ends with status incomplete when max_output_tokens cuts the answer", async () => {
    const response = await client.responses.create({ model: "scripted-1", input: "say a lot", max_output_tokens: 16 })
    expect(response.status).toBe("incomplete")
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" })
    expect(response.output_text).toBe("cut short")
  })

  it("raises the SDK's error classes, naming the Responses field", async () => {
    const bad = client.responses.create({ model: "scripted-1", input: "x", max_output_tokens: 8 })
    await expect(bad).rejects.toBeInstanceOf(OpenAI.BadRequestError)
    await expect(bad).rejects.toMatchObject({ status: 400, param: "max_output_tokens", type: "invalid_request_error" })
    await expect(client.responses.create({ model: "nope", input: "x" })).rejects.toBeInstanceOf(OpenAI.NotFoundError)
    await expect(client.responses.create({ model: "scripted-1", input: "x", previous_response_id: "resp_123" }))
      .rejects.toMatchObject({ status: 400, param: "previous_response_id", code: "unsupported_parameter" })
    const wrongKey = new OpenAI({ apiKey: "wrong", baseURL: `${server.url}/v1`, maxRetries: 0 })
    await expect(wrongKey.responses.create({ model: "scripted-1", input: "x" })).rejects.toBeInstanceOf(OpenAI.AuthenticationError)
    const failed = client.responses.create({ model: "broken", input: "x" })
    await expect(failed).rejects.toBeInstanceOf(OpenAI.InternalServerError)
    await expect(failed).rejects.toMatchObject({ status: 502, code: "upstream_error", message: expect.stringContaining("model server answered 500") })
  })
})

describe("web_search", () => {
  it("searches before the answer: a web_search_call with its query and sources, citations as url_citation annotations on them", async () => {
    const response = await client.responses.create({ model: "scripted-1", input: "how does VACUUM work in PostgreSQL tables?", tools: [{ type: "web_search" }] })
    expect(response.output.map((item) => item.type)).toEqual(["web_search_call", "message"])
    const search = response.output[0] as OpenAI.Responses.ResponseFunctionWebSearch
    expect(search.status).toBe("completed")
    expect(search.id).toMatch(/^ws_/)
    const action = search.action as OpenAI.Responses.ResponseFunctionWebSearch.Search
    expect(action.type).toBe("search")
    expect(action.query).toBe("how does VACUUM work in PostgreSQL tables?")
    const sources = action.sources!.map((s) => s.url)
    expect(sources).toEqual(expect.arrayContaining(documents.map((d) => d.url)))
    const message = response.output[1] as OpenAI.Responses.ResponseOutputMessage
    const text = message.content[0] as OpenAI.Responses.ResponseOutputText
    // [9] named no source: the gateway removed it.
    expect(text.text).not.toContain("[9]")
    expect(text.annotations).toHaveLength(sources.length)
    for (const annotation of text.annotations) {
      if (annotation.type !== "url_citation") throw new Error(`expected a url_citation, got ${annotation.type}`)
      expect(sources).toContain(annotation.url)
      expect(text.text.slice(annotation.start_index, annotation.end_index)).toMatch(/^\[\d\]$/)
      expect(documents.find((d) => d.url === annotation.url)!.title).toBe(annotation.title)
    }
    expect(response.output_text).toBe(text.text)
    expect((response as unknown as { periscope_grounding: { retrieval: string; citations_removed: number } }).periscope_grounding)
      .toMatchObject({ retrieval: "ok", citations_removed: 1 })
  })

  it("keeps the sources to filters.allowed_domains (subdomains included)", async () => {
    const ask = async (allowed: ReadonlyArray<string> | undefined) => {
      const response = await client.responses.create({
        model: "scripted-1",
        input: "VACUUM tips for PostgreSQL tables",
        tools: [{ type: "web_search", search_context_size: "high", ...(allowed === undefined ? {} : { filters: { allowed_domains: [...allowed] } }) }]
      })
      const search = response.output[0] as OpenAI.Responses.ResponseFunctionWebSearch
      return (search.action as OpenAI.Responses.ResponseFunctionWebSearch.Search).sources!.map((s) => s.url)
    }
    expect(await ask(undefined)).toContain("https://blog.other.example/vacuum-tips")
    const docsOnly = await ask(["docs.example"])
    expect(docsOnly.length).toBeGreaterThan(0)
    for (const url of docsOnly) expect(new URL(url).hostname).toBe("docs.example")
    expect(await ask(["https://other.example/"])).toEqual(["https://blog.other.example/vacuum-tips"])
  })

  it("takes the preview tool's type, and allowed_tools keeps the offer to the tools it lists", async () => {
    const preview = await client.responses.create({ model: "scripted-1", input: "ANALYZE statistics", tools: [{ type: "web_search_preview" }] })
    expect(preview.output.map((item) => item.type)).toEqual(["web_search_call", "message"])
    // Only web search allowed: the function is not offered, so the (scripted) model answers from the sources.
    const allowed = await client.responses.create({
      model: "scripted-1",
      input: "ANALYZE statistics",
      tools: [weatherTool, { type: "web_search" }],
      tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "web_search" }] }
    })
    expect(allowed.output.map((item) => item.type)).toEqual(["web_search_call", "message"])
    // Only the function allowed: no search, and the model calls it.
    const functionOnly = await client.responses.create({
      model: "scripted-1",
      input: "ANALYZE statistics",
      tools: [weatherTool, { type: "web_search" }],
      tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "get_weather" }] }
    })
    expect(functionOnly.output.map((item) => item.type)).toEqual(["function_call"])
  })

  it("makes no search with tool_choice none", async () => {
    const response = await client.responses.create({ model: "scripted-1", input: "VACUUM", tools: [{ type: "web_search" }], tool_choice: "none" })
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"])
  })

  it("streams the search as a whole web_search_call before the answer, then the citations", async () => {
    const { events, final } = await streamed({ model: "scripted-1", input: "ANALYZE statistics for PostgreSQL tables", tools: [{ type: "web_search" }] })
    expectSequenced(events)
    const types = events.map((e) => e.type)
    const deltas = types.filter((t) => t === "response.output_text.delta").length
    const annotations = types.filter((t) => t === "response.output_text.annotation.added").length
    expect(deltas).toBeGreaterThan(3)
    expect(annotations).toBe(3)
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.web_search_call.in_progress",
      "response.web_search_call.searching",
      "response.web_search_call.completed",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      ...Array(deltas).fill("response.output_text.delta"),
      ...Array(annotations).fill("response.output_text.annotation.added"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed"
    ])
    const search = final.output[0] as OpenAI.Responses.ResponseFunctionWebSearch
    const sources = (search.action as OpenAI.Responses.ResponseFunctionWebSearch.Search).sources!.map((s) => s.url)
    const text = (final.output[1] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText
    expect(final.output_text).toBe(text.text)
    expect(text.annotations).toHaveLength(3)
    for (const annotation of text.annotations) {
      if (annotation.type !== "url_citation") throw new Error("expected a url_citation")
      expect(sources).toContain(annotation.url)
      expect(text.text.slice(annotation.start_index, annotation.end_index)).toMatch(/^\[\d\]$/)
    }
    expect(final.status).toBe("completed")
    expect(final.usage!.output_tokens).toBeGreaterThan(0)
  })
})

describe("responses.stream", () => {
  it("is assembled by the SDK's helper: events in order, sequence numbers from 0, output_text and usage at the end", async () => {
    const { events, final } = await streamed({ model: "scripted-1", input: "stream it please" })
    expectSequenced(events)
    const types = events.map((e) => e.type)
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"])
    expect(types.at(-1)).toBe("response.completed")
    // The reasoning item ("Greeting back." comes in two pieces), closed before the message opens.
    expect(types.slice(2, 9)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done"
    ])
    const text = events.filter((e) => e.type === "response.output_text.delta").map((e) => (e as OpenAI.Responses.ResponseTextDeltaEvent).delta).join("")
    expect(text).toBe("Hello! You said: stream it please")
    const done = events.find((e) => e.type === "response.output_text.done") as OpenAI.Responses.ResponseTextDoneEvent
    expect(done.text).toBe(text)
    expect(final.output_text).toBe(text)
    expect(final.status).toBe("completed")
    expect(final.usage!.total_tokens).toBeGreaterThan(0)
    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent
    expect(created.response).toMatchObject({ id: final.id, status: "in_progress", output: [] })
  })

  it("names each event on the wire and sends no [DONE]", async () => {
    const response = await fetch(`${server.url}/v1/responses`, { method: "POST", headers: authHeaders(), body: JSON.stringify({ model: "scripted-1", input: "raw", stream: true }) })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const frames = (await response.text()).split("\n\n").filter((f) => f !== "")
    for (const frame of frames) {
      const [event, data] = frame.split("\n")
      expect(event).toMatch(/^event: /)
      expect(JSON.parse(data!.slice("data: ".length)).type).toBe(event!.slice("event: ".length))
    }
    expect(frames.at(-1)).toMatch(/^event: response\.completed\n/)
  })

  it("ends with response.failed, after the events that went out, when the model fails mid-stream", async () => {
    const { events, final } = await streamed({ model: "broken", input: "late" })
    expectSequenced(events)
    const last = events.at(-1) as OpenAI.Responses.ResponseFailedEvent
    expect(last.type).toBe("response.failed")
    expect(last.response.status).toBe("failed")
    expect(last.response.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("model server answered 500") })
    expect(events.filter((e) => e.type === "response.output_text.delta").length).toBe(2)
    expect(final.status).toBe("failed")
    const message = final.output.find((item) => item.type === "message") as OpenAI.Responses.ResponseOutputMessage
    expect(message.status).toBe("incomplete")
    expect(final.output_text).toBe("partial answer ")
  })

  it("refuses with the real status when the model fails before its first token", async () => {
    const failed = streamed({ model: "broken", input: "x" })
    await expect(failed).rejects.toBeInstanceOf(OpenAI.InternalServerError)
    await expect(failed).rejects.toMatchObject({ status: 502, code: "upstream_error" })
  })
})

describe("function tools", () => {
  it("answers a function_call item, then a second turn with its function_call_output", async () => {
    const input: Array<OpenAI.Responses.ResponseInputItem> = [{ role: "user", content: "Weather in Paris?" }]
    const first = await client.responses.create({ model: "scripted-1", input, tools: [weatherTool] })
    expect(first.output.map((item) => item.type)).toEqual(["function_call"])
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall
    expect(call).toMatchObject({ type: "function_call", call_id: "call_weather_1", name: "get_weather", status: "completed" })
    expect(call.id).toMatch(/^fc_/)
    expect(JSON.parse(call.arguments)).toEqual({ city: "Paris" })
    expect(first.output_text).toBe("")

    const second = await client.responses.create({
      model: "scripted-1",
      input: [...input, ...first.output as Array<OpenAI.Responses.ResponseInputItem>, { type: "function_call_output", call_id: call.call_id, output: "sunny, 21 C" }],
      tools: [weatherTool]
    })
    expect(second.output_text).toBe("The weather is sunny, 21 C.")
  })

  it("streams a function call as its item's events", async () => {
    const { events, final } = await streamed({ model: "scripted-1", input: "Weather in Paris?", tools: [weatherTool], tool_choice: { type: "function", name: "get_weather" } })
    expectSequenced(events)
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed"
    ])
    const done = events[4] as OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent
    expect(JSON.parse(done.arguments)).toEqual({ city: "Paris" })
    expect(final.output[0]).toMatchObject({ type: "function_call", name: "get_weather", call_id: "call_weather_1", status: "completed" })
  })
})

describe("text.format json_schema", () => {
  it("answers JSON that holds to the schema", async () => {
    const response = await client.responses.create({
      model: "scripted-1",
      input: "the weather as JSON",
      text: { format: { type: "json_schema", name: "weather", schema: citySchema, strict: true } }
    })
    expect(JSON.parse(response.output_text)).toEqual({ city: "Paris", celsius: 21 })
    expect(response.text?.format).toMatchObject({ type: "json_schema", name: "weather" })
  })

  it("answers a reply that breaks the schema as chat completions answer it", async () => {
    const responses = await fetch(`${server.url}/v1/responses`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ model: "scripted-1", input: "invalid weather", text: { format: { type: "json_schema", name: "weather", schema: citySchema } } })
    })
    const chat = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ model: "scripted-1", messages: [{ role: "user", content: "invalid weather" }], response_format: { type: "json_schema", json_schema: { name: "weather", schema: citySchema } } })
    })
    const [r, c] = [await responses.json() as any, await chat.json() as any]
    expect(responses.status).toBe(chat.status)
    expect(responses.status).toBe(502)
    expect(r.error.code).toBe("response_format_invalid")
    expect(r.error).toEqual(c.error)
  })

  it("refuses a schema that does not compile, at its place", async () => {
    const bad = client.responses.create({ model: "scripted-1", input: "x", text: { format: { type: "json_schema", name: "w", schema: { type: "object", properties: { a: { type: 5 } } } } } })
    await expect(bad).rejects.toMatchObject({ status: 400, param: "text.format.schema" })
  })
})

describe("the document", () => {
  /** The answers' bodies, whole and streamed, validated against /openapi.json's own schemas (JSON Schema 2020-12). */
  it("gives the schema every answer and every event matches", async () => {
    const doc = await (await fetch(`${server.url}/openapi.json`, { headers: authHeaders() })).json() as any
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    ajv.addSchema({ ...doc, $id: "openapi.json" })
    const errorsOf = (name: string, value: unknown) => {
      const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`)!
      return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
    }
    const post = (body: Record<string, unknown>) =>
      fetch(`${server.url}/v1/responses`, { method: "POST", headers: authHeaders(), body: JSON.stringify({ model: "scripted-1", ...body }) })
    const bodies: Array<Record<string, unknown>> = [
      { input: "plain" },
      { input: "VACUUM in PostgreSQL tables", tools: [{ type: "web_search", filters: { allowed_domains: ["docs.example"] } }] },
      { input: "Weather?", tools: [weatherTool] },
      { input: "long", max_output_tokens: 16 },
      { input: "as JSON", text: { format: { type: "json_schema", name: "weather", schema: citySchema } } }
    ]
    for (const body of bodies) {
      const whole = await (await post(body)).json()
      expect(errorsOf("Response", whole), JSON.stringify(whole)).toEqual([])
      const text = await (await post({ ...body, stream: true })).text()
      const events = text.split("\n\n").filter((f) => f !== "").map((f) => JSON.parse(f.split("\n")[1]!.slice("data: ".length)))
      expect(events.length).toBeGreaterThan(2)
      for (const event of events) expect(errorsOf("ResponseStreamEvent", event), JSON.stringify(event)).toEqual([])
    }
    const failed = await (await fetch(`${server.url}/v1/responses`, { method: "POST", headers: authHeaders(), body: JSON.stringify({ model: "broken", input: "late", stream: true }) })).text()
    const last = JSON.parse(failed.trim().split("\n\n").at(-1)!.split("\n")[1]!.slice("data: ".length))
    expect(last.type).toBe("response.failed")
    expect(errorsOf("ResponseStreamEvent", last)).toEqual([])
    const refused = await (await post({ input: "x", temperature: 9 })).json()
    expect(errorsOf("OpenAIErrorBody", refused)).toEqual([])
  })
})
