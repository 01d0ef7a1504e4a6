/**
 * Fault classes of chat over HTTP, each with several variants, against the
 * real server on loopback and real (or raw TCP) model server stand-ins:
 * - tool and response-format schemas checked on arrival (400 naming the field);
 * - patterns that would backtrack for minutes evaluated in linear time, the
 *   server answering other requests meanwhile;
 * - a stream that fails before its first byte answered with its real status;
 * - every wait on an upstream bounded by its documented timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ChatConfig } from "../../core/config/ChatConfig.ts"
import { type MockUpstream, startMockUpstream } from "../support/mockUpstream.ts"
import { authHeaders, readSse, type RunningServer, startInProcess } from "../support/servers.ts"
import { type RawBehaviour, type RawUpstream, startRawUpstream } from "./rawUpstream.ts"

const chatConfig = (baseUrl: string, extra: Record<string, unknown> = {}): ChatConfig => ({
  upstreams: { up: { baseUrl, retries: { max: 0, baseDelayMs: 10 }, ...extra } },
  models: [{ name: "m", targets: [{ upstream: "up", model: "mock-model" }] }]
}) as ChatConfig

const post = (server: RunningServer, body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], ...body }),
    ...(signal === undefined ? {} : { signal })
  })

describe("tool and response-format schemas are checked on arrival", () => {
  let upstream: MockUpstream
  let server: RunningServer
  beforeAll(async () => {
    upstream = await startMockUpstream()
    server = await startInProcess({ chatConfig: chatConfig(upstream.url) })
  })
  afterAll(async () => {
    await server?.close()
    await upstream?.close()
  })

  const tool = (name: string, parameters: unknown) => ({ type: "function", function: { name, parameters } })
  const variants: ReadonlyArray<[string, Record<string, unknown>, string, RegExp]> = [
    ["an unknown type", { tools: [tool("a", { type: "strnig" })] }, "tools[0].function.parameters", /\/type must be one of/],
    ["an unsupported draft", { tools: [tool("a", { $schema: "http://json-schema.org/draft-03/schema#", type: "object" })] }, "tools[0].function.parameters", /\/\$schema must name a supported draft/],
    ["a lookahead pattern", { tools: [tool("a", { type: "object", properties: { s: { type: "string", pattern: "(?=a)b" } } })] }, "tools[0].function.parameters", /\/properties\/s\/pattern must be a regular expression that runs in linear time/],
    ["a backreference in the second tool", { tools: [tool("a", { type: "object" }), tool("b", { type: "object", patternProperties: { "^(x)\\1$": { type: "string" } } })] }, "tools[1].function.parameters", /patternProperties/],
    ["a broken regex", { tools: [tool("a", { properties: { s: { pattern: "[" } } })] }, "tools[0].function.parameters", /missing closing \]/],
    ["required not an array", { tools: [tool("a", { type: "object", required: "s" })] }, "tools[0].function.parameters", /\/required must be an array/],
    ["a dangling $ref", { tools: [tool("a", { type: "object", properties: { s: { $ref: "#/$defs/missing" } } })] }, "tools[0].function.parameters", /\$ref must point at a part of this schema/],
    ["an empty anyOf", { tools: [tool("a", { anyOf: [] })] }, "tools[0].function.parameters", /anyOf must be a non-empty array/],
    ["a negative minLength", { tools: [tool("a", { properties: { s: { minLength: -1 } } })] }, "tools[0].function.parameters", /minLength must be a non-negative integer/],
    ["a bad response_format schema", { response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: 7 } } } }, "response_format.json_schema.schema", /\/type must be one of/]
  ]
  for (const [name, body, param, message] of variants) {
    it(`400 for ${name}, naming ${param}`, async () => {
      const response = await post(server, body)
      expect(response.status).toBe(400)
      const error = (await response.json() as any).error
      expect(error).toMatchObject({ type: "invalid_request_error", param })
      expect(error.message.startsWith(`${param}: must be a valid JSON Schema: `)).toBe(true)
      expect(error.message).toMatch(message)
    })
  }

  it("accepts good schemas of every supported draft, and the stream form too", async () => {
    for (const $schema of ["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#", undefined]) {
      const response = await post(server, {
        tools: [tool("lookup", { ...($schema === undefined ? {} : { $schema }), type: "object", properties: { q: { type: "string", pattern: "^[a-z]+$" } }, required: ["q"], $defs: { x: { type: "string" } } })]
      })
      expect(response.status).toBe(200)
    }
    const stream = await post(server, { stream: true, tools: [tool("a", { type: "nope" })] })
    expect(stream.status).toBe(400)
  })
})

describe("regular expressions in schemas run in linear time", () => {
  let upstream: MockUpstream
  let server: RunningServer
  const evil = `${"a".repeat(5000)}!`
  beforeAll(async () => {
    // Every answer is a tool call whose argument is the string that makes backtracking engines explode.
    upstream = await startMockUpstream({
      respond: (body) => ({ toolCalls: [{ name: body.tools[0].function.name, arguments: JSON.stringify({ s: evil, [evil]: "x" }) }] })
    })
    server = await startInProcess({ chatConfig: chatConfig(upstream.url), validation: { mode: "retry", retries: 0 } })
  })
  afterAll(async () => {
    await server?.close()
    await upstream?.close()
  })

  const catastrophic = ["^(a+)+$", "^(a|a)*$", "^(a|aa)+$", "^([a-zA-Z]+)*$", "(.*a){12}$"]
  for (const pattern of catastrophic) {
    it(`${pattern} against "aaa…!" (pattern and patternProperties): answered, and /healthz answers meanwhile`, async () => {
      const started = performance.now()
      let healthy = 0
      let done = false
      const probe = (async () => {
        while (!done) {
          // Bounded: a blocked event loop fails the test here instead of leaving it hanging.
          const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) })
          if (response.ok) healthy++
          await new Promise((r) => setTimeout(r, 5))
        }
      })()
      const response = await post(server, {
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { s: { type: "string", pattern } }, patternProperties: { [pattern]: { type: "string" } } } } }]
      })
      done = true
      await probe
      const elapsed = performance.now() - started
      // The arguments break the pattern: with no retry left that is the model's fault (502), with the rule named.
      expect(response.status).toBe(502)
      expect(await response.text()).toMatch(/does not match pattern|String does not match/)
      // A backtracking engine takes longer than the age of the universe on 5000 characters.
      expect(elapsed).toBeLessThan(10_000)
      expect(healthy).toBeGreaterThan(0)
    })
  }
})

describe("a stream that fails before its first byte gets its real status", () => {
  let upstream: MockUpstream
  let server: RunningServer
  let refused: RunningServer
  beforeAll(async () => {
    upstream = await startMockUpstream({
      byModel: {
        "s500": { status: 500, errorMessage: "boom" },
        "s401": { status: 401, errorMessage: "bad key" },
        "s429": { status: 429, retryAfter: "7" },
        "s503": { status: 503 },
        "ok": { content: "fine", chunkDelayMs: 5 },
        "mid": { content: "one two three four", errorEventAfterChunks: 2 }
      }
    })
    const config = {
      upstreams: { up: { baseUrl: upstream.url, retries: { max: 0, baseDelayMs: 10 } }, gone: { baseUrl: "http://127.0.0.1:9/v1", retries: { max: 0, baseDelayMs: 10 } } },
      models: [
        ...["s500", "s401", "s429", "s503", "ok", "mid"].map((name) => ({ name, targets: [{ upstream: "up", model: name }] })),
        { name: "refused", targets: [{ upstream: "gone", model: "x" }] }
      ]
    } as ChatConfig
    server = await startInProcess({ chatConfig: config })
    refused = server
  })
  afterAll(async () => {
    await server?.close()
    await upstream?.close()
  })

  const variants: ReadonlyArray<[string, number, string]> = [
    ["s500", 502, "upstream_error"],
    ["s401", 502, "upstream_error"],
    ["s503", 502, "upstream_error"],
    ["s429", 429, "rate_limit_exceeded"],
    ["refused", 503, ""]
  ]
  for (const [model, status, code] of variants) {
    it(`${model}: HTTP ${status} with an OpenAI error body, not 200 and an error event`, async () => {
      const response = await post(refused, { model, stream: true })
      expect(response.status).toBe(status)
      expect(response.headers.get("content-type")).toContain("application/json")
      const error = (await response.json() as any).error
      if (code !== "") expect(error.code).toBe(code)
      if (model === "s429") expect(response.headers.get("retry-after")).toBe("7")
    })
  }

  it("a failure after the first chunk is still an error event in a 200 stream, then [DONE]", async () => {
    const response = await post(server, { model: "mid", stream: true })
    expect(response.status).toBe(200)
    const events = await readSse(response)
    expect(events.some((e) => e.includes("\"error\""))).toBe(true)
    expect(events.at(-1)).toBe("data: [DONE]")
  })

  it("a good stream is unchanged", async () => {
    const response = await post(server, { model: "ok", stream: true })
    expect(response.status).toBe(200)
    const events = await readSse(response)
    expect(events.join("")).toContain("fine")
    expect(events.at(-1)).toBe("data: [DONE]")
  })
})

describe("every upstream wait is bounded by its documented timeout", () => {
  const raws: Array<RawUpstream> = []
  const servers: Array<RunningServer> = []
  afterAll(async () => {
    for (const s of servers) await s.close()
    for (const r of raws) await r.close()
  })

  const serveRaw = async (behaviour: RawBehaviour, timeouts: Record<string, number>, retries = 2) => {
    const raw = await startRawUpstream(behaviour)
    raws.push(raw)
    const server = await startInProcess({ chatConfig: chatConfig(raw.url, { timeouts, retries: { max: retries, baseDelayMs: 10 } }) })
    servers.push(server)
    return { raw, server }
  }

  // totalMs is far below firstTokenMs × tries: the total bounds the whole request, retries included.
  const variants: ReadonlyArray<[RawBehaviour, boolean, Record<string, number>, number, RegExp]> = [
    ["silent", false, { connectMs: 5_000, firstTokenMs: 4_000, totalMs: 1_500 }, 504, /total timeout/],
    ["silent", true, { connectMs: 400, firstTokenMs: 4_000, totalMs: 10_000 }, 504, /connect timeout/],
    ["headers-then-silence", false, { connectMs: 5_000, firstTokenMs: 700, totalMs: 10_000 }, 504, /first-token timeout/],
    ["headers-then-silence", true, { connectMs: 5_000, firstTokenMs: 700, totalMs: 10_000 }, 504, /first-token timeout/],
    ["stream-stalls", true, { connectMs: 5_000, firstTokenMs: 60_000, totalMs: 1_000 }, 200, /total timeout/],
    ["body-stalls", false, { connectMs: 5_000, firstTokenMs: 60_000, totalMs: 1_200 }, 504, /total timeout/]
  ]
  for (const [behaviour, stream, timeouts, status, message] of variants) {
    it(`${behaviour}, ${stream ? "streamed" : "whole"}: ${status} within the bound (${JSON.stringify(timeouts)})`, async () => {
      const { raw, server } = await serveRaw(behaviour, timeouts)
      const started = performance.now()
      const response = await post(server, { stream })
      const body = await response.text()
      const elapsed = performance.now() - started
      expect(response.status).toBe(status)
      expect(body).toMatch(message)
      // Never later than the total timeout (plus scheduling slack); retries do not multiply it.
      expect(elapsed).toBeLessThan(timeouts.totalMs! + 1_500)
      await new Promise((r) => setTimeout(r, 200))
      expect(raw.open()).toBe(0)
    })
  }

  it("a stream that stalls between chunks ends at totalMs with an error event and [DONE]", async () => {
    const { raw, server } = await serveRaw("stream-stalls", { connectMs: 5_000, firstTokenMs: 5_000, totalMs: 1_500 })
    const started = performance.now()
    const response = await post(server, { stream: true })
    expect(response.status).toBe(200)
    const events = await readSse(response)
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(events.join("\n")).toContain("Hello")
    expect(events.at(-2)).toMatch(/total timeout/)
    expect(events.at(-1)).toBe("data: [DONE]")
    await new Promise((r) => setTimeout(r, 200))
    expect(raw.open()).toBe(0)
  })
})
