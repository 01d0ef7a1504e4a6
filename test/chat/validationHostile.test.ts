/**
 * The hostile tool calls that used to hold the server for seconds to
 * minutes, over loopback against the real server and a real model-server
 * stand-in: uniqueItems over 60,000 numbers, `format: "url"` on a
 * 40,000-character string under the retry policy, jsonrepair on 800 KB of
 * crafted arguments (refused by a bound, or repaired on a job thread and
 * ended at its deadline), a client schema over the size bound, and one whose
 * regexes would take seconds to compile. Each gets
 * its documented answer, and a steady stream of searches sent meanwhile all
 * succeed (each within a deadline, so a blocked event loop fails them).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ChatConfig } from "../../core/config/ChatConfig.ts"
import { type MockUpstream, startMockUpstream } from "../support/mockUpstream.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { authHeaders, type RunningServer, startInProcess, TEST_KEY } from "../support/servers.ts"

const numbers = Array.from({ length: 60_000 }, (_, i) => i)
/** Arguments by tool name: what the stand-in model answers every time it is asked. */
const hostileArguments: Record<string, string> = {
  unique: JSON.stringify({ xs: numbers }),
  link: JSON.stringify({ u: `http://${"a".repeat(40_000)}!` }),
  // Missing commas after whitespace: each one makes jsonrepair copy all it has written so far.
  repair: `{"xs": [${"1 ".repeat(400_000)}]`
}
const tools: Record<string, Record<string, unknown>> = {
  unique: { type: "object", properties: { xs: { type: "array", uniqueItems: true } } },
  link: { type: "object", properties: { u: { type: "string", format: "url" } } },
  repair: { type: "object", properties: { xs: { type: "array" } } }
}

const configOf = (baseUrl: string, validation: NonNullable<ChatConfig["validation"]>): ChatConfig => ({
  upstreams: { up: { baseUrl, retries: { max: 0, baseDelayMs: 10 } } },
  models: [{ name: "m", targets: [{ upstream: "up", model: "mock-model" }] }],
  validation
}) as ChatConfig

const ask = (server: RunningServer, name: string, parameters: Record<string, unknown> = tools[name]!) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "go" }], tools: [{ type: "function", function: { name, parameters } }] })
  })

/**
 * Runs `hostile` while four clients search at a steady rate; every search must answer 200
 * within its deadline. Resolves with the hostile answer and how many searches were answered
 * from when it went out (until a few after its answer).
 */
const underSearchLoad = async (server: RunningServer, hostile: () => Promise<Response>) => {
  let done = false
  let answered = 0
  const failures: Array<string> = []
  const client = async () => {
    while (!done) {
      try {
        const response = await fetch(`${server.url}/api/search/webSearch`, {
          method: "POST",
          headers: authHeaders(),
          body: JSON.stringify({ keywords: "rivers" }),
          signal: AbortSignal.timeout(5_000)
        })
        if (response.status === 200) answered++
        else failures.push(`status ${response.status}`)
        await response.arrayBuffer()
      } catch (e) {
        failures.push(String(e))
      }
      // A steady rate: each client about 50 searches a second.
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  const clients = [client(), client(), client(), client()]
  const settled = (count: number) => async () => {
    while (answered < count && failures.length === 0) await new Promise((r) => setTimeout(r, 5))
  }
  // The searches are under way before the hostile request goes out, and go on until a few more are answered after it.
  await settled(4)()
  const before = answered
  const response = await hostile()
  const body = await response.json() as any
  await settled(before + 4)()
  done = true
  await Promise.all(clients)
  return { status: response.status, body, answered: answered - before, failures }
}

describe("hostile tool calls, answered while searches keep being answered", () => {
  let upstream: MockUpstream
  const servers: Array<RunningServer> = []
  let defaults: RunningServer
  let raisedArguments: RunningServer
  let raisedUnique: RunningServer
  let repairOnJobs: RunningServer
  beforeAll(async () => {
    upstream = await startMockUpstream({
      respond: (body) => {
        const name = body.tools?.[0]?.function?.name as string
        return { toolCalls: [{ name, arguments: hostileArguments[name] ?? "{}" }] }
      }
    })
    const start = async (validation: NonNullable<ChatConfig["validation"]>) => {
      // A key whose rate limit the steady searches of every test together stay far below.
      const server = await startInProcess({ chatConfig: configOf(upstream.url, validation), keys: recordsFromPlainKeys([TEST_KEY], 1_000_000) })
      servers.push(server)
      return server
    }
    defaults = await start({ policy: "retry", retries: 2 })
    raisedArguments = await start({ policy: "repair", maxArgumentBytes: 4 * 1024 * 1024 })
    // Checked on a job thread: a deadline that a loaded machine's slow thread start does not reach.
    raisedUnique = await start({ policy: "retry", retries: 0, maxArgumentBytes: 4 * 1024 * 1024, maxUniqueItems: 100_000, jobDeadlineMs: 60_000 })
    repairOnJobs = await start({ policy: "repair", maxArgumentBytes: 4 * 1024 * 1024, maxRepairBytes: 1024 * 1024, jobDeadlineMs: 1_000 })
  })
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()))
    await upstream?.close()
  })

  const expectSearchesAnswered = (outcome: { answered: number; failures: Array<string> }) => {
    expect(outcome.failures).toEqual([])
    expect(outcome.answered).toBeGreaterThanOrEqual(4)
  }

  it("uniqueItems over 60,000 numbers (348 KB of arguments), default bounds: 502 naming maxArgumentBytes after the retries", async () => {
    const before = upstream.chatRequests()
    const outcome = await underSearchLoad(defaults, () => ask(defaults, "unique"))
    expect(outcome.status).toBe(502)
    expect(outcome.body.error.code).toBe("tool_call_invalid")
    expect(outcome.body.error.message).toContain(`arguments are ${hostileArguments.unique!.length} bytes, more than the 262144 that are validated (chat.validation.maxArgumentBytes)`)
    // The first answer and two retries, each judged.
    expect(upstream.chatRequests() - before).toBe(3)
    expectSearchesAnswered(outcome)
  })

  it("uniqueItems over 60,000 numbers, arguments bound raised: 502 naming maxUniqueItems", async () => {
    const outcome = await underSearchLoad(raisedArguments, () => ask(raisedArguments, "unique"))
    expect(outcome.status).toBe(502)
    expect(outcome.body.error.message).toContain("xs: has 60000 items; uniqueItems is checked on arrays of at most 10000 (chat.validation.maxUniqueItems)")
    expectSearchesAnswered(outcome)
  })

  it("uniqueItems over 60,000 numbers, both bounds raised: checked in full, 200 with the call", async () => {
    const outcome = await underSearchLoad(raisedUnique, () => ask(raisedUnique, "unique"))
    expect(outcome.status).toBe(200)
    expect(JSON.parse(outcome.body.choices[0].message.tool_calls[0].function.arguments).xs).toHaveLength(60_000)
    expectSearchesAnswered(outcome)
  })

  it("format url on a 40,000-character string, three times under the retry policy: 502, not a URL", async () => {
    const before = upstream.chatRequests()
    const outcome = await underSearchLoad(defaults, () => ask(defaults, "link"))
    expect(outcome.status).toBe(502)
    expect(outcome.body.error.message).toContain("u: String does not match format \"url\"")
    expect(upstream.chatRequests() - before).toBe(3)
    expectSearchesAnswered(outcome)
  })

  it("800 KB of crafted arguments under the default bounds: 502 naming maxArgumentBytes, never repaired", async () => {
    const outcome = await underSearchLoad(defaults, () => ask(defaults, "repair"))
    expect(outcome.status).toBe(502)
    expect(outcome.body.error.message).toContain("(chat.validation.maxArgumentBytes)")
    expectSearchesAnswered(outcome)
  })

  it("800 KB of crafted arguments under the repair policy, arguments bound raised: 502 naming maxRepairBytes", async () => {
    const outcome = await underSearchLoad(raisedArguments, () => ask(raisedArguments, "repair"))
    expect(outcome.status).toBe(502)
    expect(outcome.body.error.message).toContain("failed validation after repair")
    expect(outcome.body.error.message).toContain(`not repaired: ${hostileArguments.repair!.length} bytes, more than the 8192 that are repaired (chat.validation.maxRepairBytes)`)
    expectSearchesAnswered(outcome)
  })

  it("800 KB of crafted arguments with repair allowed up to 1 MiB: repaired on a job thread, ended at jobDeadlineMs, 502 saying so", async () => {
    const outcome = await underSearchLoad(repairOnJobs, () => ask(repairOnJobs, "repair"))
    expect(outcome.status).toBe(502)
    expect(outcome.body.error.message).toContain("the arguments were not checked within 1000 ms (chat.validation.jobDeadlineMs)")
    expectSearchesAnswered(outcome)
  })

  it("a 5 KB tool schema of a hundred distinct counted repetitions (seconds to compile): 400 before any is compiled", async () => {
    const properties = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, { type: "string", pattern: `[^${String.fromCharCode(0x4e00 + i)}]{1,999}` }]))
    const outcome = await underSearchLoad(defaults, () => ask(defaults, "unique", { type: "object", properties }))
    expect(outcome.status).toBe(400)
    expect(outcome.body.error.param).toBe("tools[0].function.parameters")
    expect(outcome.body.error.message).toMatch(/pattern takes the patterns of the request past 20000 RE2 steps in all/)
    expectSearchesAnswered(outcome)
  })

  it("a tool schema over maxSchemaBytes, or nested deeper than maxSchemaDepth: 400 naming the field and the setting", async () => {
    const wide = { type: "object", properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`p${i}`, { type: "string", description: "x".repeat(40) }])) }
    const large = await ask(defaults, "unique", wide)
    expect(large.status).toBe(400)
    expect((await large.json() as any).error).toMatchObject({
      type: "invalid_request_error",
      param: "tools[0].function.parameters",
      message: "tools[0].function.parameters: must be at most 131072 bytes as JSON (chat.validation.maxSchemaBytes), got more"
    })
    let deep: Record<string, unknown> = { type: "string" }
    for (let i = 0; i < 100; i++) deep = { type: "array", items: deep }
    const nested = await ask(defaults, "unique", deep)
    expect(nested.status).toBe(400)
    expect((await nested.json() as any).error.message).toMatch(/^tools\[0\]\.function\.parameters: must be nested at most 64 levels deep as JSON \(chat\.validation\.maxSchemaDepth\)/)
  })
})
