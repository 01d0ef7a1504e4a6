/**
 * Chat for people who put Periscope in front of their own model servers,
 * through our real server on loopback and OpenAI-compatible stand-ins:
 * - chat.requestDefaults: the spec's defaults sent (default) or only what the client set;
 * - an upstream that ignores n: the missing choices asked one by one, whole and streamed;
 * - a 404 on the chat path: a 502 naming the upstream and the base URL to set;
 * - aliases listed in /v1/models, and `alias:online` grounded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Result } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { createPeriscope } from "../../adapters/embed/index.ts"
import type { ChatConfig } from "../../core/config/ChatConfig.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { decoderFor } from "../../core/schema/Decode.ts"
import { type MockUpstream, type MockUpstreamOptions, type Scenario, startMockUpstream } from "../support/mockUpstream.ts"
import { authHeaders, readSse, type RunningServer, startInProcess } from "../support/servers.ts"

const opened: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((x) => x.close()))
})

const mock = async (options: MockUpstreamOptions = {}) => {
  const upstream = await startMockUpstream(options)
  opened.push(upstream)
  return upstream
}
const serve = async (chatConfig: ChatConfig) => {
  const server = await startInProcess({ chatConfig })
  opened.push(server)
  return server
}
const upstreamAt = (url: string, extra: Record<string, unknown> = {}) => ({ baseUrl: url, retries: { max: 0, baseDelayMs: 5 }, ...extra })
const oneModel = (upstream: string, extra: Partial<ChatConfig> = {}): ChatConfig => ({
  models: [{ name: "main", targets: [{ upstream, model: "m" }] }],
  ...extra
})

const post = (server: RunningServer, body: Record<string, unknown>) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }], ...body })
  })
const chunksOf = (events: Array<string>): Array<any> =>
  events.filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)))
/** The text each choice index received over a stream. */
const textByIndex = (events: Array<string>): Map<number, string> => {
  const out = new Map<number, string>()
  for (const chunk of chunksOf(events)) {
    for (const c of chunk.choices ?? []) out.set(c.index, (out.get(c.index) ?? "") + (c.delta?.content ?? ""))
  }
  return out
}
/** Upstream bodies without the messages (the same in every request). */
const sentFields = (upstream: MockUpstream) =>
  upstream.requests.filter((r) => r.path.endsWith("/chat/completions")).map(({ body }) => {
    const { messages: _messages, ...rest } = body
    return rest
  })

describe("message roles", () => {
  // Filled in after decoding (core/chat/ChatRequest.ts normalizeMessages), on both of the server's paths.
  for (const expressLane of [true, false]) {
    it(`a message without a role is a user's, developer is sent as system, the rest as sent (express lane ${expressLane ? "on" : "off"})`, async () => {
      const a = await mock()
      const server = await startInProcess({ chatConfig: { upstreams: { a: upstreamAt(a.url) }, ...oneModel("a") }, expressLane })
      opened.push(server)
      const messages = [
        { role: "developer", content: "Answer in French." },
        { content: "Bonjour ?" },
        { role: "assistant", content: "Bonjour !" },
        { role: "user", content: "Et alors ?" }
      ]
      for (const stream of [false, true]) {
        const response = await post(server, { messages, stream })
        expect(response.status).toBe(200)
        await response.text()
        expect(a.requests.at(-1)!.body.messages).toEqual([
          { role: "system", content: "Answer in French." },
          { role: "user", content: "Bonjour ?" },
          { role: "assistant", content: "Bonjour !" },
          { role: "user", content: "Et alors ?" }
        ])
      }
    })
  }
})

describe("chat.requestDefaults", () => {
  // Each request as a client sends it; the gateway must fill or leave out what it omits.
  const requests: Array<Record<string, unknown>> = [
    {},
    { temperature: 0.2 },
    { top_p: 0.9, max_completion_tokens: 100, seed: 7 },
    { stop: "END", frequency_penalty: 0, n: 1, top_k: 5 },
    { stream: true },
    { stream: true, temperature: 1.1, max_tokens: 64 },
    // Grounded: the sources go in a system message; the sampling fields are the client's all the same.
    { model: "main:online", messages: [{ role: "user", content: "What is Effect?" }] }
  ]
  const send = async (server: RunningServer) => {
    for (const body of requests) {
      const response = await post(server, body)
      expect(response.status).toBe(200)
      await response.text()
    }
  }
  const specDefaults = { temperature: 0.7, top_p: 0.7, top_k: 50, frequency_penalty: 0.5, max_tokens: 512 }

  it("spec (the default): every upstream request carries the spec's defaults for what the client left out", async () => {
    const a = await mock()
    await send(await serve({ upstreams: { a: upstreamAt(a.url) }, ...oneModel("a") }))
    expect(sentFields(a)).toEqual([
      { model: "m", ...specDefaults, stream: false },
      { model: "m", ...specDefaults, temperature: 0.2, stream: false },
      { model: "m", ...specDefaults, top_p: 0.9, max_tokens: 100, seed: 7, stream: false },
      { model: "m", ...specDefaults, frequency_penalty: 0, top_k: 5, stop: ["END"], stream: false },
      { model: "m", ...specDefaults, stream: true, stream_options: { include_usage: true } },
      { model: "m", ...specDefaults, temperature: 1.1, max_tokens: 64, stream: true, stream_options: { include_usage: true } },
      { model: "m", ...specDefaults, stream: false }
    ])
  })

  it("upstream: each request carries only what the client set, plus model and the stream handling", async () => {
    const a = await mock()
    await send(await serve({ requestDefaults: "upstream", upstreams: { a: upstreamAt(a.url) }, ...oneModel("a") }))
    expect(sentFields(a)).toEqual([
      { model: "m", stream: false },
      { model: "m", temperature: 0.2, stream: false },
      { model: "m", top_p: 0.9, max_tokens: 100, seed: 7, stream: false },
      { model: "m", frequency_penalty: 0, top_k: 5, stop: ["END"], stream: false },
      { model: "m", stream: true, stream_options: { include_usage: true } },
      { model: "m", temperature: 1.1, max_tokens: 64, stream: true, stream_options: { include_usage: true } },
      { model: "m", stream: false }
    ])
  })

  it("upstream, embedded: chat() and chatStream() send only what the caller set", async () => {
    const a = await mock()
    const periscope = createPeriscope({ chat: { config: { requestDefaults: "upstream", upstreams: { a: upstreamAt(a.url) }, ...oneModel("a") } } })
    opened.push(periscope)
    await periscope.chat({ model: "main", messages: [{ role: "user", content: "hi" }], top_p: 0.5 })
    for await (const _ of periscope.chatStream({ model: "main", messages: [{ role: "user", content: "hi" }] })) { /* drained */ }
    expect(sentFields(a)).toEqual([
      { model: "m", top_p: 0.5, stream: false },
      { model: "m", stream: true, stream_options: { include_usage: true } }
    ])
  })

  it("an upstream's own setting wins over chat.requestDefaults, and its preset still maps the fields sent", async () => {
    const spec = await mock()
    const own = await mock()
    const server = await serve({
      requestDefaults: "spec",
      upstreams: { spec: upstreamAt(spec.url), own: upstreamAt(own.url, { requestDefaults: "upstream", preset: "openai" }) },
      models: [
        { name: "main", targets: [{ upstream: "spec", model: "m" }] },
        { name: "other", targets: [{ upstream: "own", model: "gpt" }] }
      ]
    })
    for (const model of ["main", "other"]) {
      expect((await post(server, { model, max_completion_tokens: 50, top_k: 3 })).status).toBe(200)
      expect((await post(server, { model })).status).toBe(200)
    }
    expect(sentFields(spec)).toEqual([
      { model: "m", ...specDefaults, max_tokens: 50, top_k: 3, stream: false },
      { model: "m", ...specDefaults, stream: false }
    ])
    // openai preset: top_k dropped, max_tokens sent as max_completion_tokens.
    expect(sentFields(own)).toEqual([
      { model: "gpt", max_completion_tokens: 50, stream: false },
      { model: "gpt", stream: false }
    ])
  })

  it("upstream: a fan-out for a server without n sends each request only what the client set", async () => {
    const a = await mock()
    const server = await serve({ requestDefaults: "upstream", upstreams: { a: upstreamAt(a.url, { preset: "llamacpp" }) }, ...oneModel("a") })
    const body = await (await post(server, { n: 3, temperature: 0.3 })).json() as any
    expect(body.choices.map((c: any) => c.index)).toEqual([0, 1, 2])
    expect(sentFields(a)).toEqual(Array.from({ length: 3 }, () => ({ model: "m", temperature: 0.3, stream: false })))
  })

  const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })
  const message = (input: unknown) => {
    const result = decode(input)
    return Result.isFailure(result) ? result.failure.message : "decoded"
  }
  it("a bad value is named by its path and rule; a misspelt key gets the one meant", () => {
    expect(message({ chat: { requestDefaults: "upstream" } })).toBe("decoded")
    expect(message({ chat: { requestDefaults: "client" } })).toMatch(/^chat\.requestDefaults: must be spec or upstream, got "client"/)
    expect(message({ chat: { upstreams: { a: { baseUrl: "http://x/v1", requestDefaults: false } } } }))
      .toMatch(/^chat\.upstreams\.a\.requestDefaults: must be spec or upstream, got false/)
    expect(message({ chat: { requestDefault: "spec" } })).toMatch(/^chat\.requestDefault: is not a known key \(did you mean "requestDefaults"\?\)/)
  })
})

describe("an upstream that ignores n", () => {
  /** A stand-in that answers one choice whatever n asks, numbering its answers; usage 4 + 3 tokens each. */
  const ignoringN = (options: { readonly done?: boolean } = {}) => {
    let answers = 0
    return mock({
      respond: (body): Scenario => {
        const text = `answer ${++answers}`
        const usage = { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 }
        if (body?.stream !== true) {
          return {
            rawBody: JSON.stringify({
              id: `c${answers}`,
              object: "chat.completion",
              created: 0,
              model: body.model,
              choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
              usage
            })
          }
        }
        const event = (choices: Array<unknown>, extra: object = {}) =>
          `data: ${JSON.stringify({ id: `c${answers}`, object: "chat.completion.chunk", created: 0, model: body.model, choices, ...extra })}\n\n`
        return {
          rawSse: event([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]) +
            event([{ index: 0, delta: { content: text }, finish_reason: null }]) +
            event([{ index: 0, delta: {}, finish_reason: "stop" }]) +
            (body.stream_options?.include_usage === true ? event([], { usage }) : "") +
            (options.done === false ? "" : "data: [DONE]\n\n")
        }
      }
    })
  }

  it("whole: the missing choices are asked one at a time, indices 0..n-1, usage summed; later requests fan out at once", async () => {
    const a = await ignoringN()
    const server = await serve({ upstreams: { a: upstreamAt(a.url) }, ...oneModel("a") })
    const first = await (await post(server, { n: 3 })).json() as any
    expect(first.choices.map((c: any) => c.index)).toEqual([0, 1, 2])
    expect(new Set(first.choices.map((c: any) => c.message.content))).toEqual(new Set(["answer 1", "answer 2", "answer 3"]))
    expect(first.choices[0].message.content).toBe("answer 1")
    expect(first.usage).toEqual({ prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 })
    // Asked with n=3 once, then the two missing ones without n.
    expect(sentFields(a).map((b) => b.n)).toEqual([3, undefined, undefined])

    // Learned: the next n > 1 request goes out as n requests at once.
    const second = await (await post(server, { n: 2 })).json() as any
    expect(second.choices.map((c: any) => c.index)).toEqual([0, 1])
    expect(second.usage.total_tokens).toBe(14)
    expect(sentFields(a).slice(3).map((b) => b.n)).toEqual([undefined, undefined])
  })

  it("streamed: every index 0..n-1 gets a whole answer and the usage chunk sums every request", async () => {
    const a = await ignoringN()
    const server = await serve({ upstreams: { a: upstreamAt(a.url) }, ...oneModel("a") })
    const events = await readSse(await post(server, { n: 3, stream: true, stream_options: { include_usage: true } }))
    expect(events.at(-1)).toBe("data: [DONE]")
    const texts = textByIndex(events)
    expect([...texts.keys()].sort()).toEqual([0, 1, 2])
    expect(new Set(texts.values())).toEqual(new Set(["answer 1", "answer 2", "answer 3"]))
    const finishes = chunksOf(events).flatMap((c) => c.choices).filter((c: any) => c.finish_reason !== null)
    expect(finishes.map((c: any) => c.index).sort()).toEqual([0, 1, 2])
    expect(chunksOf(events).at(-1).usage).toEqual({ prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 })
    expect(sentFields(a).map((b) => b.n)).toEqual([3, undefined, undefined])

    // Learned here too: the next streamed n > 1 request fans out from the start.
    const again = textByIndex(await readSse(await post(server, { n: 2, stream: true })))
    expect([...again.keys()].sort()).toEqual([0, 1])
    expect(sentFields(a).slice(3).map((b) => b.n)).toEqual([undefined, undefined])
  })

  it("streamed without [DONE]: its one finished choice is a whole answer, not a cut stream", async () => {
    const a = await ignoringN({ done: false })
    const server = await serve({ upstreams: { a: upstreamAt(a.url) }, ...oneModel("a") })
    const events = await readSse(await post(server, { n: 2, stream: true }))
    expect(events.some((e) => e.includes("\"error\""))).toBe(false)
    expect(new Set(textByIndex(events).values())).toEqual(new Set(["answer 1", "answer 2"]))
  })

  it("a server that honours n is asked once", async () => {
    const a = await mock()
    const server = await serve({ upstreams: { a: upstreamAt(a.url) }, ...oneModel("a") })
    const body = await (await post(server, { n: 3 })).json() as any
    expect(body.choices.map((c: any) => c.index)).toEqual([0, 1, 2])
    const streamed = textByIndex(await readSse(await post(server, { n: 3, stream: true })))
    expect([...streamed.keys()].sort()).toEqual([0, 1, 2])
    expect(sentFields(a).map((b) => b.n)).toEqual([3, 3])
  })
})

describe("an upstream answering 404 on the chat path", () => {
  const KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c"
  /**
   * Serves chat only at /v1/chat/completions, as OpenAI, vLLM and Ollama do; other
   * paths get 404 in OpenAI's shape, echoing the key as OpenAI echoes a wrong one.
   */
  const strictServer = async () => {
    const paths: Array<string> = []
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume()
      req.on("end", () => {
        paths.push(req.url ?? "")
        if (req.url === "/v1/chat/completions") {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({
            id: "c1",
            object: "chat.completion",
            created: 0,
            model: "m",
            choices: [{ index: 0, message: { role: "assistant", content: "found" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
          }))
          return
        }
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({
          error: { message: `Invalid URL (POST ${req.url}) for key ${req.headers.authorization?.slice(7)}`, type: "invalid_request_error", code: null }
        }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    opened.push({ close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }) })
    return { origin, paths }
  }

  const failing = async (baseUrl: string) => {
    const server = await serve({ upstreams: { "local-vllm": upstreamAt(baseUrl, { apiKey: KEY }) }, ...oneModel("local-vllm") })
    const whole = await post(server, {})
    const streamed = await post(server, { stream: true })
    const wholeText = await whole.text()
    const streamedText = await streamed.text()
    expect(wholeText).not.toContain(KEY)
    expect(streamedText).not.toContain(KEY)
    expect(whole.status).toBe(502)
    expect(streamed.status).toBe(502)
    const error = JSON.parse(wholeText).error
    expect(JSON.parse(streamedText).error.message).toBe(error.message)
    expect(error.code).toBe("upstream_not_found")
    expect(error.type).not.toBe("invalid_request_error")
    return error.message as string
  }

  it("a base URL without /v1, with or without a trailing slash, is told to add it", async () => {
    const { origin } = await strictServer()
    for (const baseUrl of [origin, `${origin}/`]) {
      const message = await failing(baseUrl)
      expect(message).toContain(`upstream local-vllm answered 404 Not Found to POST ${origin}/chat/completions`)
      expect(message).toContain(`set chat.upstreams.local-vllm.baseUrl to ${origin}/v1`)
      expect(message).toContain("Invalid URL (POST /chat/completions)")
    }
  })

  it("a base URL with a path prefix gets /v1 added after it", async () => {
    const { origin } = await strictServer()
    const message = await failing(`${origin}/openai`)
    expect(message).toContain(`POST ${origin}/openai/chat/completions`)
    expect(message).toContain(`set chat.upstreams.local-vllm.baseUrl to ${origin}/openai/v1`)
  })

  it("a base URL with a version segment is not told to add /v1, but to check it and the model", async () => {
    const { origin } = await strictServer()
    const message = await failing(`${origin}/v2`)
    expect(message).toContain(`POST ${origin}/v2/chat/completions`)
    expect(message).not.toContain("set chat.upstreams")
    expect(message).toContain("check chat.upstreams.local-vllm.baseUrl and that the upstream serves the model \"m\"")
  })

  it("credentials in the base URL never show; the right base URL answers", async () => {
    const { origin, paths } = await strictServer()
    const withUser = origin.replace("http://", "http://operator:hunter2secret@")
    const message = await failing(withUser)
    expect(message).not.toContain("hunter2secret")
    expect(message).toContain(`set chat.upstreams.local-vllm.baseUrl to ${origin}/v1`)
    const server = await serve({ upstreams: { ok: upstreamAt(`${origin}/v1`, { apiKey: KEY }) }, ...oneModel("ok") })
    expect((await (await post(server, {})).json() as any).choices[0].message.content).toBe("found")
    expect(paths.at(-1)).toBe("/v1/chat/completions")
  })

  it("a route falls back from a target answering 404 to the next", async () => {
    const { origin } = await strictServer()
    const server = await serve({
      upstreams: { wrong: upstreamAt(origin), right: upstreamAt(`${origin}/v1`) },
      models: [{ name: "main", targets: [{ upstream: "wrong", model: "m", weight: 1_000_000 }, { upstream: "right", model: "m", weight: 1 }] }]
    })
    const response = await post(server, {})
    expect(response.status).toBe(200)
    expect((await response.json() as any).choices[0].message.content).toBe("found")
  })
})

describe("aliases", () => {
  it("are listed in /v1/models with owned_by and what they answer as; an alias and alias:online are served", async () => {
    const a = await mock({ defaultScenario: { content: "from a" } })
    const server = await serve({
      upstreams: { a: upstreamAt(a.url) },
      models: [
        { name: "main", aliases: ["fast", "gpt-4o-mini"], targets: [{ upstream: "a", model: "m" }] },
        { name: "second", targets: [{ upstream: "a", model: "m2" }] }
      ]
    })
    const list = await (await fetch(`${server.url}/v1/models`, { headers: authHeaders() })).json() as any
    expect(list.data).toEqual([
      { id: "main", object: "model", created: 0, owned_by: "a" },
      { id: "fast", object: "model", created: 0, owned_by: "a", periscope_alias_of: "main" },
      { id: "gpt-4o-mini", object: "model", created: 0, owned_by: "a", periscope_alias_of: "main" },
      { id: "second", object: "model", created: 0, owned_by: "a" },
      { id: "periscope-grounded", object: "model", created: 0, owned_by: "periscope" }
    ])

    const viaAlias = await (await post(server, { model: "fast" })).json() as any
    expect(viaAlias.model).toBe("main")
    expect(viaAlias.choices[0].message.content).toBe("from a")

    // `fast:online` is `fast` with web search: the gateway must know `fast` is served.
    const online = await post(server, { model: "fast:online", messages: [{ role: "user", content: "What is Effect?" }] })
    expect(online.status).toBe(200)
    const grounded = await online.json() as any
    expect(grounded.model).toBe("fast:online")
    expect(grounded.periscope_grounding).toBeDefined()
    expect(sentFields(a).at(-1)!.model).toBe("m")
    // The upstream was given the sources in a system message.
    expect(a.requests.at(-1)!.body.messages.some((m: any) => m.role === "system")).toBe(true)
    expect((await post(server, { model: "slow:online" })).status).toBe(404)
  })
})
