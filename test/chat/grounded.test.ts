/** periscope-grounded over real sockets: it quotes the index with links, honours max_tokens, n and stop, never calls tools. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { makeGroundedModel } from "../../core/chat/GroundedModel.ts"
import { ChatModel } from "../../core/chat/ChatModel.ts"
import { TokenCount } from "../../core/chat/TokenCount.ts"
import { WebSearch } from "../../core/search/WebSearch.ts"
import { Effect, Layer } from "effect"
import { authHeaders, readSse, type RunningServer, startInProcess } from "../support/servers.ts"

const documents = [
  { url: "https://docs.example/postgres/vacuum", title: "VACUUM - PostgreSQL", text: "VACUUM reclaims storage occupied by dead tuples. Run VACUUM regularly on busy tables." },
  { url: "https://docs.example/postgres/analyze", title: "ANALYZE - PostgreSQL", text: "ANALYZE collects statistics about the contents of tables for the query planner." },
  { url: "https://docs.example/python/os", title: "os - Python", text: "The os module provides a portable way of using operating system dependent functionality." }
]

let server: RunningServer
beforeAll(async () => {
  const search = FixtureSearch.layer(documents)
  const grounded = Layer.effect(
    ChatModel,
    Effect.gen(function*() {
      return makeGroundedModel(yield* WebSearch, yield* TokenCount)
    })
  ).pipe(Layer.provide([search, TokenCount.layer]))
  server = await startInProcess({ search, chat: grounded })
})
afterAll(() => server.close())

const ask = (content: string, extra: Record<string, unknown> = {}) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: "periscope-grounded", messages: [{ role: "system", content: "be useful" }, { role: "user", content }], ...extra })
  })

describe("periscope-grounded", () => {
  it("quotes the top passages with their links and says what it searched", async () => {
    const body = await (await ask("how does VACUUM reclaim storage?")).json() as any
    const message = body.choices[0].message
    expect(message.content).toContain("VACUUM - PostgreSQL")
    expect(message.content).toContain("Source: https://docs.example/postgres/vacuum")
    expect(message.content.indexOf("postgres/vacuum")).toBeLessThan(message.content.indexOf("python/os") === -1 ? Infinity : message.content.indexOf("python/os"))
    expect(message.reasoning_content).toMatch(/^Searched the local index for "how does VACUUM reclaim storage\?"/)
    expect(message.reasoning_content).toMatch(/retrieves and quotes; it does not generate/)
    expect(body.choices[0].finish_reason).toBe("stop")
    expect(message.tool_calls).toBeUndefined()
    expect(body.usage.completion_tokens).toBeGreaterThan(10)
  })

  it("says so when the index has nothing", async () => {
    const body = await (await ask("zebra migration patterns")).json() as any
    expect(body.choices[0].message.content).toBe("The local index has nothing on \"zebra migration patterns\".")
  })

  it("honours max_tokens with finish_reason length", async () => {
    const body = await (await ask("VACUUM tables", { max_tokens: 40 })).json() as any
    expect(body.choices[0].finish_reason).toBe("length")
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(40)
  })

  it("honours n and stop, and ignores tools", async () => {
    const tools = [{ type: "function", function: { name: "get_weather" } }]
    const body = await (await ask("statistics for the query planner", { n: 2, stop: ["Source:"], tools })).json() as any
    expect(body.choices).toHaveLength(2)
    for (const choice of body.choices) {
      expect(choice.message.content).not.toContain("Source:")
      expect(choice.finish_reason).toBe("stop")
      expect(choice.message.tool_calls).toBeUndefined()
    }
  })

  it("streams like any model", async () => {
    const events = await readSse(await ask("operating system module", { stream: true }))
    expect(events.at(-1)).toBe("data: [DONE]")
    const chunks = events.filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)))
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")
    expect(content).toContain("Source: https://docs.example/python/os")
    expect(chunks.length).toBeGreaterThan(10)
  })
})

describe("default model", () => {
  it("is periscope-grounded when no upstream is configured (npm start's default)", async () => {
    const { createPeriscope } = await import("../../adapters/embed/index.ts")
    const periscope = createPeriscope({ search: { documents } })
    const completion = await periscope.chat({ messages: [{ role: "user", content: "ANALYZE statistics" }] })
    expect(completion.model).toBe("periscope-grounded")
    expect(completion.choices[0]!.message.content).toContain("https://docs.example/postgres/analyze")
    await periscope.close()
  })
})

