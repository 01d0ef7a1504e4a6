/** The embed library's Promise API: same validation and answers as HTTP, errors as PeriscopeError, break cancels. */
import { describe, expect, it } from "vitest"
import { createPeriscope, type Periscope, PeriscopeError, type ResponseObject, type ResponseStreamEvent } from "../../adapters/embed/index.ts"
import type { ScriptedEnd } from "../../core/backends/ScriptedChat.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { buildIndex } from "../index/support.ts"

const docs = [
  { url: "https://example.org/a", title: "Alpha guide", text: "Alpha is the first letter of the Greek alphabet.", date: "2024-05-01", images: [{ url: "https://example.org/a.png", alt: "Alpha letter" }] },
  { url: "https://example.org/b", title: "Beta notes", text: "Beta follows alpha.", images: [{ url: "https://example.org/b.png", title: "" }] }
]

describe("createPeriscope", () => {
  it("searches the given documents with positions, query and dates", async () => {
    const periscope = createPeriscope({ search: { documents: docs } })
    const data = await periscope.webSearch({ keywords: "  alpha  " })
    expect(data.query).toBe("alpha")
    expect(data.organic.map((r) => [r.position, r.link, r.date])).toEqual([
      [1, "https://example.org/a", "2024-05-01"],
      [2, "https://example.org/b", null]
    ])
    expect(await periscope.imageSearch({ keywords: "alpha letter", num: 1 })).toEqual([
      { url: "https://example.org/a.png", refUrl: "https://example.org/a", title: "Alpha letter" }
    ])
    await periscope.close()
  })

  it("searches snapshot bytes, warmed up first when asked, with the same answers", async () => {
    const bytes = encodeSnapshot(buildIndex(docs))
    const cold = createPeriscope({ search: { snapshot: bytes } })
    const warm = createPeriscope({ search: { snapshot: bytes, warmUpMs: 200 } })
    for (const keywords of ["alpha", "beta notes", "greek letter"]) {
      expect(await warm.webSearch({ keywords })).toEqual(await cold.webSearch({ keywords }))
    }
    await cold.close()
    await warm.close()
  })

  it("refuses a warm-up time the config file would refuse, naming the option and the rule", () => {
    const bytes = encodeSnapshot(buildIndex(docs))
    for (const bad of [-1, 60_001, 2.5, Number.NaN, Number.POSITIVE_INFINITY, "1500"]) {
      expect(() => createPeriscope({ search: { snapshot: bytes, warmUpMs: bad as number } }), String(bad))
        .toThrow(new RangeError(`search.warmUpMs: must be an integer from 0 to 60000, got ${String(bad)}`))
    }
  })

  it("rejects bad input with the status and message HTTP would give", async () => {
    const periscope = createPeriscope()
    const error = await periscope.webSearch({ keywords: "x", num: 0 }).catch((e) => e)
    expect(error).toBeInstanceOf(PeriscopeError)
    expect(error).toMatchObject({ status: 400, kind: "invalid_request", param: "num", message: "num: must be an integer from 1 to 100, got 0" })
    expect(error.searchBody.code).toBe("400")
    const chatError = await periscope.chat({ messages: [], model: "periscope-scripted" }).catch((e) => e)
    expect(chatError).toMatchObject({ status: 400, param: "messages" })
    await periscope.close()
  })

  it("chats and streams through the scripted backend", async () => {
    const periscope = createPeriscope({ chat: { models: ["m"], replies: [{ content: "one two", reasoning: "r" }] } })
    const completion = await periscope.chat({ model: "m", messages: [{ role: "user", content: "hi" }] })
    expect(completion.choices[0]!.message.content).toBe("one two")
    let text = ""
    for await (const chunk of periscope.chatStream({ model: "m", messages: [{ role: "user", content: "hi" }] })) {
      text += chunk.choices[0]?.delta.content ?? ""
    }
    expect(text).toBe("one two")
    await periscope.close()
  })

  it("cancels the backend when the caller breaks out of a stream", async () => {
    const ends: Array<ScriptedEnd> = []
    const periscope = createPeriscope({
      chat: { models: ["m"], replies: [{ content: "x ".repeat(1000), delayMs: 5 }], onEnd: (end) => ends.push(end) }
    })
    let seen = 0
    for await (const _ of periscope.chatStream({ model: "m", messages: [{ role: "user", content: "go" }] })) {
      if (++seen === 3) break
    }
    await new Promise((r) => setTimeout(r, 50))
    expect(ends).toEqual([{ kind: "cancelled", model: "m" }])
    await periscope.close()
  })

  it("throws a mid-stream failure as a PeriscopeError after the chunks before it", async () => {
    const periscope = createPeriscope({
      chat: { models: ["m"], replies: [{ content: "a b c", failAfter: 1, failure: { reason: "timeout", message: "upstream too slow" } }] }
    })
    const seen: Array<string> = []
    const error = await (async () => {
      for await (const chunk of periscope.chatStream({ model: "m", messages: [{ role: "user", content: "go" }] })) {
        seen.push(chunk.choices[0]?.delta.content ?? "")
      }
    })().catch((e) => e)
    expect(seen).toEqual(["a "])
    expect(error).toBeInstanceOf(PeriscopeError)
    expect(error).toMatchObject({ status: 504, kind: "timeout", message: "upstream too slow" })
    await periscope.close()
  })

  it("answers the Responses API as POST /v1/responses does, whole and streamed", async () => {
    const periscope = createPeriscope({ chat: { models: ["m"], replies: [{ content: "one two", reasoning: "r" }] } })
    const request = { model: "m", instructions: "Be brief.", input: "hi", metadata: { run: "1" } }
    // `stream` is ignored by responses(), as chat() ignores it.
    const response = await periscope.responses({ ...request, stream: true })
    expect(response).toMatchObject({ object: "response", status: "completed", model: "m", store: false, instructions: "Be brief.", metadata: { run: "1" }, error: null })
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"])
    const message = response.output[1]!
    expect(message.type === "message" && message.content[0]!.text).toBe("one two")
    expect(response.usage?.output_tokens).toBeGreaterThan(0)
    // The same request over the fetch handler answers the same response (ids and times apart).
    const overHttp = await postResponses(periscope, request)
    expect(overHttp.status).toBe(200)
    expect(comparable(response)).toEqual(comparable(await overHttp.json() as ResponseObject))

    const events: Array<ResponseStreamEvent> = []
    for await (const event of periscope.responsesStream(request)) events.push(event)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events[0]!.type).toBe("response.created")
    const last = events[events.length - 1]!
    expect(last.type).toBe("response.completed")
    expect(events.flatMap((e) => e.type === "response.output_text.delta" ? [e.delta] : []).join("")).toBe("one two")
    const streamed = last.type === "response.completed" ? comparable(last.response) : undefined
    expect(streamed?.output).toEqual(comparable(response).output)
    expect(streamed?.status).toBe("completed")
    await periscope.close()
  })

  it("grounds a Responses answer in a web_search tool: the search as a web_search_call, citations as url_citation", async () => {
    const periscope = createPeriscope({ search: { documents: docs }, chat: { models: ["m"], replies: [{ content: "Alpha comes first [1]." }] } })
    const response = await periscope.responses({ model: "m", input: "alpha letter", tools: [{ type: "web_search", search_context_size: "low" }] })
    const [search, message] = response.output
    expect(search?.type).toBe("web_search_call")
    const sources = search?.type === "web_search_call" ? search.action.sources.map((s) => s.url) : []
    expect(sources).toContain("https://example.org/a")
    expect(message?.type).toBe("message")
    const annotations = message?.type === "message" ? message.content[0]!.annotations : []
    expect(annotations.map((a) => a.url)).toEqual([sources[0]])
    await periscope.close()
  })

  it("refuses bad Responses input with the status and body the route gives", async () => {
    const periscope = createPeriscope({ chat: { models: ["m"], replies: [{ content: "x" }] } })
    const bad: ReadonlyArray<Record<string, unknown>> = [
      { model: "m", input: "hi", temprature: 1 },
      { model: "m" },
      { model: "m", input: "hi", previous_response_id: "resp_1" },
      { model: "m", input: [{ type: "function_call_output", output: "sunny" }] },
      { model: "m", input: "hi", tools: [{ type: "file_search" }] },
      { model: "m", input: "hi", max_output_tokens: 8 },
      { model: "m", input: "hi", tool_choice: "required" }
    ]
    for (const body of bad) {
      const error = await periscope.responses(body as never).catch((e) => e)
      expect(error, JSON.stringify(body)).toBeInstanceOf(PeriscopeError)
      const overHttp = await postResponses(periscope, body)
      expect(error.status, JSON.stringify(body)).toBe(overHttp.status)
      expect(error.chatBody, JSON.stringify(body)).toEqual(await overHttp.json())
      // The stream refuses it the same way, before any event.
      const streamed = await (async () => {
        for await (const _ of periscope.responsesStream(body as never)) return "an event"
      })().catch((e) => e)
      expect(streamed, JSON.stringify(body)).toMatchObject({ status: error.status, chatBody: error.chatBody })
    }
    const unknown = await periscope.responses(bad[0] as never).catch((e) => e)
    expect(unknown).toMatchObject({ status: 400, param: "temprature" })
    expect(unknown.chatBody.error).toMatchObject({ code: "unknown_parameter", message: 'temprature: is not a known parameter (did you mean "temperature"?)' })
    await periscope.close()
  })

  it("gives a model server's failure as the route does: thrown before the first event, response.failed after", async () => {
    const failure = { reason: "timeout", message: "upstream too slow" } as const
    const periscope = createPeriscope({
      chat: { models: ["early", "late"], replies: (request) => ({ content: "a b c", failAfter: request.model === "early" ? 0 : 1, failure }) }
    })
    const whole = await periscope.responses({ model: "late", input: "go" }).catch((e) => e)
    const overHttp = await postResponses(periscope, { model: "late", input: "go" })
    expect(whole).toBeInstanceOf(PeriscopeError)
    expect(whole).toMatchObject({ status: 504, kind: "timeout", message: "upstream too slow" })
    expect(whole.status).toBe(overHttp.status)
    expect(whole.chatBody).toEqual(await overHttp.json())

    const early = await (async () => {
      for await (const _ of periscope.responsesStream({ model: "early", input: "go" })) return "an event"
    })().catch((e) => e)
    expect(early).toBeInstanceOf(PeriscopeError)
    expect(early).toMatchObject({ status: 504, message: "upstream too slow" })

    const events: Array<ResponseStreamEvent> = []
    for await (const event of periscope.responsesStream({ model: "late", input: "go" })) events.push(event)
    expect(events.flatMap((e) => e.type === "response.output_text.delta" ? [e.delta] : [])).toEqual(["a "])
    const last = events[events.length - 1]!
    expect(last.type).toBe("response.failed")
    expect(last.type === "response.failed" && last.response.error).toMatchObject({ message: "upstream too slow" })
    await periscope.close()
  })

  it("makes a key for its fetch handler when none is given", async () => {
    const periscope = createPeriscope()
    expect(periscope.apiKey).toMatch(/^psk_/)
    const request = (key: string) =>
      periscope.fetch(new Request("http://x/api/search/webSearch", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ keywords: "chat" })
      }))
    expect((await request(periscope.apiKey!)).status).toBe(200)
    expect((await request("guess")).status).toBe(401)
    await periscope.close()
  })
})

/** POST /v1/responses through the library's own fetch handler, with the key it made. */
const postResponses = (periscope: Periscope, body: unknown): Promise<Response> =>
  periscope.fetch(new Request("http://x/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${periscope.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  }))

/** A response with its ids and times blanked: two answers to one request compare equal. */
const comparable = (response: ResponseObject) => ({
  ...response,
  id: "resp",
  created_at: 0,
  completed_at: response.completed_at === null ? null : 0,
  output: response.output.map((item) => ({ ...item, id: "item" }))
})
