/**
 * POST /v1/responses' bad inputs, each with its exact HTTP status and OpenAI error body (type,
 * code, param, a message naming the field and the rule): wrong types, unknown fields,
 * out-of-range values, what this server refuses to pretend (stored responses, background runs),
 * bodies that are not JSON, too large or unkeyed. Against the real Node server, with its express
 * lane and with every route on the full stack: the same answers both ways.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashKey, recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

const PATH = "/v1/responses"
const LIMITED_KEY = "limited-responses-key"
const INVALID = "invalid_request_error"

interface Case {
  readonly name: string
  readonly body?: unknown
  readonly raw?: string
  readonly headers?: Record<string, string>
  readonly key?: string | null
  readonly method?: string
  readonly status: number
  readonly type?: string
  /** The OpenAI body's code; null when it must be null. */
  readonly code?: string | null
  readonly param?: string | null
  readonly message?: RegExp
}

const base = { model: "scripted-1", input: "hi" }
const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: "function", name, parameters: { type: "object", properties: {} }, ...extra })
const bad = (name: string, body: Record<string, unknown>, param: string, message: RegExp, code: string | null = null): Case =>
  ({ name, body: { ...base, ...body }, status: 400, type: INVALID, code, param, message })

const wrongTypes: Array<Case> = [
  bad("input a number", { input: 5 }, "input", /^input: must be a string or a non-empty array of input items, got 5$/),
  bad("model a number", { model: 5 }, "model", /^model: must be a model name \(string\), got 5$/),
  bad("instructions a number", { instructions: 5 }, "instructions", /^instructions: must be a string or null, got 5$/),
  bad("temperature a string", { temperature: "hot" }, "temperature", /^temperature: must be a number from 0 to 2, or null, got "hot" \(a string\)$/),
  bad("stream a string", { stream: "yes" }, "stream", /^stream: must be a boolean or null, got "yes" \(a string\)$/),
  bad("tools an object", { tools: {} }, "tools", /^tools: must be an array of at most 128 tools, got an object$/),
  bad("tool_choice a number", { tool_choice: 5 }, "tool_choice", /^tool_choice: must be "none", "auto", "required", .*got 5$/),
  bad("text a string", { text: "json" }, "text", /^text: must be an object \{format\?, verbosity\?\} or null, got "json" \(a string\)$/),
  bad("metadata with a number", { metadata: { run: 7 } }, "metadata.run", /^metadata\.run: must be an object of at most 16 string values/),
  bad("an input item that is a string", { input: ["hi"] }, "input[0]", /^input\[0\]: must be an input item: a message \{role, content\}, a function_call or a function_call_output, got "hi" \(a string\)$/),
  bad("message content a number", { input: [{ role: "user", content: 5 }] }, "input[0].content", /^input\[0\]\.content: must be a string or an array of content parts, got 5$/),
  bad("input_text without text", { input: [{ role: "user", content: [{ type: "input_text" }] }] }, "input[0].content[0].text", /^input\[0\]\.content\[0\]\.text: is required$/),
  bad("function_call without call_id", { input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id", /^input\[0\]\.call_id: is required$/),
  bad("function_call_output with a number", { input: [{ type: "function_call_output", call_id: "c", output: 5 }] }, "input[0].output", /^input\[0\]\.output: must be a string or an array of content parts, got 5$/),
  bad("a tool without type", { tools: [{ name: "f" }] }, "tools[0].type", /^tools\[0\]\.type: is required$/),
  bad("function parameters a string", { tools: [fn("f", { parameters: "{}" })] }, "tools[0].parameters", /^tools\[0\]\.parameters: must be a JSON Schema object or null/),
  bad("user_location.city a number", { tools: [{ type: "web_search", user_location: { type: "approximate", city: 5 } }] }, "tools[0].user_location.city", /^tools\[0\]\.user_location\.city: must be a string or null, got 5$/)
]

const unknownFields: Array<Case> = [
  bad("an unknown top-level field", { foo: 1 }, "foo", /^foo: is not a known parameter$/, "unknown_parameter"),
  bad("a misspelt field", { temprature: 0.5 }, "temprature", /^temprature: is not a known parameter \(did you mean "temperature"\?\)$/, "unknown_parameter"),
  bad("chat's messages field", { messages: [{ role: "user", content: "hi" }] }, "messages", /^messages: is not a known parameter/, "unknown_parameter"),
  bad("an unknown field in a tool", { tools: [fn("f", { foo: 1 })] }, "tools[0].foo", /^tools\[0\]\.foo: is not a known parameter/, "unknown_parameter"),
  bad("an unknown web search filter", { tools: [{ type: "web_search", filters: { blocked_domains: ["a.com"] } }] }, "tools[0].filters.blocked_domains", /is not a known parameter/, "unknown_parameter"),
  bad("an unknown field in text", { text: { format: { type: "text" }, style: "terse" } }, "text.style", /^text\.style: is not a known parameter/, "unknown_parameter"),
  bad("an unknown field in text.format", { text: { format: { type: "json_object", schema: {} } } }, "text.format.schema", /^text\.format\.schema: is not a known parameter/, "unknown_parameter")
]

const outOfRange: Array<Case> = [
  bad("temperature 2.5", { temperature: 2.5 }, "temperature", /^temperature: must be a number from 0 to 2, or null, got 2\.5$/),
  bad("temperature -1", { temperature: -1 }, "temperature", /got -1$/),
  bad("top_p 0", { top_p: 0 }, "top_p", /^top_p: must be a number with 0 < x <= 1, or null, got 0$/),
  bad("top_p 1.5", { top_p: 1.5 }, "top_p", /got 1\.5$/),
  bad("max_output_tokens 15", { max_output_tokens: 15 }, "max_output_tokens", /^max_output_tokens: must be an integer from 16 to 8191, or null, got 15$/),
  bad("max_output_tokens 8192", { max_output_tokens: 8192 }, "max_output_tokens", /got 8192$/),
  bad("max_output_tokens 20.5", { max_output_tokens: 20.5 }, "max_output_tokens", /got 20\.5$/),
  bad("max_tool_calls -1", { max_tool_calls: -1 }, "max_tool_calls", /^max_tool_calls: must be an integer >= 0, or null, got -1$/),
  bad("top_logprobs 21", { top_logprobs: 21 }, "top_logprobs", /^top_logprobs: must be an integer from 0 to 20, or null, got 21$/),
  bad("an empty input array", { input: [] }, "input", /^input: must be a string or a non-empty array of input items, got an array of 0$/),
  bad("129 tools", { tools: Array.from({ length: 129 }, (_, i) => fn(`t${i}`)) }, "tools", /^tools: must be an array of at most 128 tools/),
  bad("21 allowed domains", { tools: [{ type: "web_search", filters: { allowed_domains: Array.from({ length: 21 }, (_, i) => `d${i}.example`) } }] }, "tools[0].filters.allowed_domains", /must be an array of at most 20 domain names/),
  bad("17 metadata keys", { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, "metadata", /^metadata: must be an object of at most 16 string values/),
  bad("a metadata value of 513 characters", { metadata: { k: "v".repeat(513) } }, "metadata.k", /^metadata\.k: must be an object of at most 16 string values/)
]

const badValues: Array<Case> = [
  bad("a message role robot", { input: [{ role: "robot", content: "hi" }] }, "input[0].role", /^input\[0\]\.role: must be user, assistant, system or developer, got "robot" \(a string\)$/),
  bad("an input item of an unknown type", { input: [{ type: "note", text: "x" }] }, "input[0].type", /^input\[0\]\.type: must be one of message, function_call, function_call_output, web_search_call, reasoning, got "note"/),
  bad("an item_reference (needs stored responses)", { input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].type", /^input\[0\]\.type: item_reference needs a stored response, and this server stores none/),
  bad("a file_search_call item", { input: [{ type: "file_search_call", id: "fs_1" }] }, "input[0].type", /file_search_call items are not supported here/),
  bad("an input_file part", { input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] }, "input[0].content[0].type", /input_file is not supported here/),
  bad("an image by file_id", { input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1", detail: "auto" }] }] }, "input[0].content[0].image_url", /^input\[0\]\.content\[0\]\.image_url: is required: images by file_id are not supported here/),
  bad("a file_search tool", { tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] }, "tools[0].type", /^tools\[0\]\.type: file_search tools are not supported here \(function and web_search are\)$/),
  bad("a function name with a space", { tools: [fn("get weather")] }, "tools[0].name", /^tools\[0\]\.name: must match \^\[A-Za-z0-9_-\]\{1,64\}\$/),
  bad("two functions of one name", { tools: [fn("f"), fn("f")] }, "tools[1].name", /^tools\[1\]\.name: duplicates the tool name "f"$/),
  bad("two web_search tools", { tools: [{ type: "web_search" }, { type: "web_search_preview" }] }, "tools[1].type", /gives web search a second time/),
  bad("a domain that is not one", { tools: [{ type: "web_search", filters: { allowed_domains: ["not a domain"] } }] }, "tools[0].filters.allowed_domains[0]", /must be a domain name such as example\.com/),
  bad("search_context_size huge", { tools: [{ type: "web_search", search_context_size: "huge" }] }, "tools[0].search_context_size", /must be low, medium or high, got "huge"/),
  bad("tool_choice required without tools", { tool_choice: "required" }, "tool_choice", /^tool_choice: is "required" but no tools are given$/),
  bad("tool_choice naming no function", { tools: [fn("f")], tool_choice: { type: "function", name: "g" } }, "tool_choice.name", /^tool_choice\.name: names no function in tools \("g"\)$/),
  bad("tool_choice web search without the tool", { tool_choice: { type: "web_search_preview" } }, "tool_choice.type", /asks for web search, which tools does not give/),
  bad("tool_choice mcp", { tool_choice: { type: "mcp", server_label: "x" } }, "tool_choice.type", /mcp tools are not supported here/),
  bad("text.format xml", { text: { format: { type: "xml" } } }, "text.format.type", /^text\.format\.type: must be one of text, json_object, json_schema, got "xml"/),
  bad("json_schema without a schema", { text: { format: { type: "json_schema", name: "w" } } }, "text.format.schema", /^text\.format\.schema: is required$/),
  bad("json_schema with a schema that does not compile", { text: { format: { type: "json_schema", name: "w", schema: { type: "object", properties: { a: { type: 5 } } } } } }, "text.format.schema", /^text\.format\.schema/),
  bad("function parameters that do not compile", { tools: [fn("f", { parameters: { type: "object", properties: { a: { type: 5 } } } })] }, "tools[0].parameters", /^tools\[0\]\.parameters/),
  bad("include of an unknown value", { include: ["everything"] }, "include[0]", /^include\[0\]: must be one of /)
]

const unsupported = (name: string, body: Record<string, unknown>, param: string, message: RegExp): Case => bad(name, body, param, message, "unsupported_parameter")
const refusedFeatures: Array<Case> = [
  unsupported("previous_response_id", { previous_response_id: "resp_abc" }, "previous_response_id", /^previous_response_id: is not supported: this server stores no responses; send the earlier turns/),
  unsupported("background true", { background: true }, "background", /^background: must be false or absent/),
  unsupported("a conversation", { conversation: "conv_1" }, "conversation", /^conversation: is not supported/),
  unsupported("a prompt template", { prompt: { id: "pmpt_1" } }, "prompt", /^prompt: is not supported/),
  unsupported("top_logprobs 5", { top_logprobs: 5 }, "top_logprobs", /^top_logprobs: must be 0 or absent/),
  unsupported("logprobs in include", { include: ["message.output_text.logprobs"] }, "include", /^include: message\.output_text\.logprobs is not supported/),
  unsupported("cached pages only", { tools: [{ type: "web_search", external_web_access: false }] }, "tools[0].external_web_access", /not supported here/)
]

const bodies: Array<Case> = [
  { name: "a body that is an array", body: [], status: 400, type: INVALID, param: null, message: /^request body: must be a JSON object with input and model$/ },
  { name: "a body that is not JSON", raw: "{\"input\":", status: 400, type: INVALID, code: "invalid_json", param: null, message: /^request body: is not valid JSON/ },
  { name: "an empty body", raw: "", status: 400, code: "invalid_json", message: /^request body: is empty/ },
  { name: "no input", body: { model: "scripted-1" }, status: 400, type: INVALID, param: "input", message: /^input: is required/ },
  { name: "a body over 16 MiB", raw: JSON.stringify({ ...base, input: "a".repeat(16 * 1024 * 1024) }), status: 413, code: "payload_too_large", message: /^request body: must be at most 16 MiB/ },
  { name: "a form body", raw: "input=hi", headers: { "content-type": "application/x-www-form-urlencoded" }, status: 415, code: "unsupported_media_type", message: /^Content-Type: must be application\/json/ },
  { name: "no key", body: base, key: null, status: 401, type: "authentication_error", code: "invalid_api_key" },
  { name: "a wrong key", body: base, key: "not-a-key", status: 401, type: "authentication_error", code: "invalid_api_key" },
  { name: "a model this server does not answer for", body: { ...base, model: "gpt-nope" }, status: 404, type: INVALID, code: "model_not_found", param: "model", message: /gpt-nope/ },
  { name: "GET", method: "GET", status: 405, code: "method_not_allowed", message: /accepts POST, not GET/ }
]

let server: RunningServer

const send = (c: Case) => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  const key = c.key === undefined ? TEST_KEY : c.key
  if (key !== null) headers.authorization = `Bearer ${key}`
  const method = c.method ?? "POST"
  return fetch(server.url + PATH, { method, headers: { ...headers, ...c.headers }, ...(method === "GET" ? {} : { body: c.raw ?? JSON.stringify(c.body) }) })
}

const check = async (c: Case) => {
  const response = await send(c)
  const body = await response.json() as any
  expect(response.status, JSON.stringify(body)).toBe(c.status)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  expect(Object.keys(body)).toEqual(["error"])
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"])
  if (c.type !== undefined) expect(body.error.type).toBe(c.type)
  if (c.code !== undefined) expect(body.error.code).toBe(c.code)
  if (c.param !== undefined) expect(body.error.param).toBe(c.param)
  if (c.message !== undefined) expect(body.error.message).toMatch(c.message)
  return response
}

for (const expressLane of [true, false]) describe(expressLane ? "express lane on" : "express lane off", () => {
  beforeAll(async () => {
    server = await startInProcess({
      keys: [...recordsFromPlainKeys([TEST_KEY]), { name: "limited", sha256: hashKey(LIMITED_KEY), requestsPerMinute: 1 }],
      // JSON text: a plain answer, and one that holds to a json_object format.
      chat: ScriptedChat.layer({ models: ["scripted-1"], replies: [{ content: "{\"ok\": true}" }] }),
      expressLane
    })
  })
  afterAll(() => server.close())

  for (const [group, cases] of [
    ["wrong types", wrongTypes],
    ["unknown fields", unknownFields],
    ["out-of-range values", outOfRange],
    ["bad values", badValues],
    ["features this server does not have", refusedFeatures],
    ["bodies", bodies]
  ] as const) {
    describe(group, () => {
      for (const c of cases) it(c.name, () => check(c))
    })
  }

  it("401 carries WWW-Authenticate, 405 Allow", async () => {
    expect((await check({ name: "", body: base, key: null, status: 401 })).headers.get("www-authenticate")).toBe("Bearer")
    expect((await check({ name: "", method: "GET", status: 405 })).headers.get("allow")).toBe("POST")
  })

  it("a key over its limit gets 429 rate_limit_exceeded with Retry-After", async () => {
    expect((await send({ name: "", body: base, key: LIMITED_KEY, status: 200 })).status).toBe(200)
    const limited = await check({ name: "", body: base, key: LIMITED_KEY, status: 429, type: "rate_limit_error", code: "rate_limit_exceeded" })
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
  })

  it("accepts the edges of each range, null for what is unset, and the fields that change nothing here", async () => {
    const accepted: Array<Record<string, unknown>> = [
      { temperature: 0, top_p: 1, max_output_tokens: 16 },
      { temperature: 2, max_output_tokens: 8191, max_tool_calls: 0, top_logprobs: 0 },
      { instructions: null, temperature: null, top_p: null, max_output_tokens: null, tools: null, tool_choice: null, text: null, stream: null, store: null, previous_response_id: null, background: null },
      { store: true, background: false, parallel_tool_calls: false, truncation: "disabled", service_tier: "auto", user: "u1", safety_identifier: "s1", prompt_cache_key: "k" },
      { metadata: { a: "b" }, reasoning: { effort: "low" }, include: ["web_search_call.action.sources", "reasoning.encrypted_content"], stream_options: null },
      { tools: [{ type: "web_search", filters: { allowed_domains: ["https://docs.example/"] }, user_location: { type: "approximate", country: "FR" } }], tool_choice: "required" },
      { text: { format: { type: "json_object" }, verbosity: "low" } },
      { input: [{ type: "message", role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png", detail: "original" }, { type: "input_text", text: "what is it?" }] }] }
    ]
    for (const extra of accepted) {
      const response = await send({ name: "", body: { ...base, ...extra }, status: 200 })
      expect(response.status, `${JSON.stringify(extra)}: ${await response.clone().text()}`).toBe(200)
      const answer = await response.json() as any
      expect(answer.object).toBe("response")
      // Nothing is stored, whatever store asks: the response says so.
      expect(answer.store).toBe(false)
    }
  })
})
