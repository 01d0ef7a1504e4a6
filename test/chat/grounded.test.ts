/** periscope-grounded over real sockets: it quotes the sources grounding found, cited as [k] with annotations; honours max_tokens, n and stop, never calls tools. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { makeGroundedModel } from "../../core/chat/GroundedModel.ts"
import { ChatModel } from "../../core/chat/ChatModel.ts"
import { TokenCount } from "../../core/chat/TokenCount.ts"
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
      return makeGroundedModel(yield* TokenCount)
    })
  ).pipe(Layer.provide(TokenCount.layer))
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
  it("quotes the sources it was given, each cited as [k] with a url_citation and listed in search_results", async () => {
    const body = await (await ask("how does VACUUM reclaim storage?")).json() as any
    const message = body.choices[0].message
    expect(message.content).toMatch(/^From the sources found for "how does VACUUM reclaim storage\?":/)
    expect(message.content).toContain("VACUUM - PostgreSQL")
    const vacuum = body.search_results.findIndex((r: any) => r.url === "https://docs.example/postgres/vacuum")
    expect(vacuum).toBe(0)
    expect(body.search_results[0]).toMatchObject({ title: "VACUUM - PostgreSQL", snippet: expect.stringContaining("VACUUM") })
    expect(message.annotations.length).toBe(body.search_results.length)
    for (const a of message.annotations) {
      expect(a.type).toBe("url_citation")
      expect(message.content.slice(a.url_citation.start_index, a.url_citation.end_index)).toMatch(/^\[\d\]$/)
      expect(body.search_results.map((r: any) => r.url)).toContain(a.url_citation.url)
    }
    expect(message.annotations[0].url_citation.url).toBe("https://docs.example/postgres/vacuum")
    expect(message.reasoning_content).toMatch(/^Searched for "how does VACUUM reclaim storage\?"/)
    expect(message.reasoning_content).toMatch(/retrieves and quotes; it does not generate/)
    expect(body.choices[0].finish_reason).toBe("stop")
    expect(message.tool_calls).toBeUndefined()
    expect(body.usage.completion_tokens).toBeGreaterThan(10)
    expect(body.periscope_grounding).toMatchObject({ retrieval: "ok", citations_removed: 0, search_context_size: "medium" })
  })

  it("says so when the search finds nothing", async () => {
    const body = await (await ask("zebra migration patterns")).json() as any
    expect(body.choices[0].message.content).toBe("The search found nothing on \"zebra migration patterns\".")
    expect(body.choices[0].message.annotations).toEqual([])
    expect(body.search_results).toEqual([])
  })

  it("honours max_tokens with finish_reason length", async () => {
    const body = await (await ask("VACUUM tables", { max_tokens: 40 })).json() as any
    expect(body.choices[0].finish_reason).toBe("length")
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(40)
  })

  it("honours n and stop, and ignores tools", async () => {
    const tools = [{ type: "function", function: { name: "get_weather" } }]
    const body = await (await ask("statistics for the query planner", { n: 2, stop: ["[1]"], tools })).json() as any
    expect(body.choices).toHaveLength(2)
    for (const choice of body.choices) {
      expect(choice.message.content).not.toContain("[1]")
      expect(choice.message.annotations).toEqual([])
      expect(choice.finish_reason).toBe("stop")
      expect(choice.message.tool_calls).toBeUndefined()
    }
  })

  it("streams like any model", async () => {
    const events = await readSse(await ask("operating system module", { stream: true }))
    expect(events.at(-1)).toBe("data: [DONE]")
    const chunks = events.filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)))
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")
    expect(content).toContain("os - Python")
    expect(chunks.length).toBeGreaterThan(10)
    const last = chunks.at(-1)
    expect(last.search_results.map((r: any) => r.url)).toContain("https://docs.example/python/os")
    const annotations = chunks.flatMap((c) => c.choices[0]?.delta.annotations ?? [])
    expect(annotations.length).toBeGreaterThan(0)
    for (const a of annotations) expect(content.slice(a.url_citation.start_index, a.url_citation.end_index)).toMatch(/^\[\d\]$/)
  })
})

describe("default model", () => {
  it("is periscope-grounded when no upstream is configured (npm start's default)", async () => {
    const { createPeriscope } = await import("../../adapters/embed/index.ts")
    const periscope = createPeriscope({ search: { documents } })
    const completion = await periscope.chat({ messages: [{ role: "user", content: "ANALYZE statistics" }] })
    expect(completion.model).toBe("periscope-grounded")
    expect(completion.choices[0]!.message.annotations?.map((a) => a.url_citation.url)).toContain("https://docs.example/postgres/analyze")
    await periscope.close()
  })
})

