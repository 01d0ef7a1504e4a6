/** The embed library's Promise API: same validation and answers as HTTP, errors as PeriscopeError, break cancels. */
import { describe, expect, it } from "vitest"
import { createPeriscope, PeriscopeError } from "../../adapters/embed/index.ts"
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
