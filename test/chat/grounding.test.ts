/**
 * Grounded chat over real sockets: our server, the OpenAI model stand-in scripted to cite
 * ([1], [2] and an invented [9]), a SearXNG stand-in and a site whose pages webFetch reads.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { MockUpstream, Scenario } from "../support/mockUpstream.ts"
import type { StandIn } from "../support/searchProviders.ts"
import { authHeaders, readSse, type RunningServer, TEST_KEY } from "../support/servers.ts"
import { type GroundedWorld, htmlPage, type Site, startGroundedWorld } from "./groundingHarness.ts"

const ANSWER = "VACUUM reclaims the storage of dead tuples [1]. ANALYZE collects planner statistics [2]. The moon is cheese [9]."

let upstream: MockUpstream
/** What the next model requests get, in order; then `base`. */
const queue: Array<Scenario> = []
let base: Scenario = { content: ANSWER }
let searx: StandIn
let site: Site
let server: RunningServer
let world: GroundedWorld

const pagesOf = (siteUrl: string) => [
  { title: "VACUUM", url: `${siteUrl}/vacuum`, snippet: "VACUUM reclaims storage occupied by dead tuples.", date: "2024-05-01" },
  { title: "ANALYZE", url: `${siteUrl}/analyze`, snippet: "ANALYZE collects statistics about the contents of tables." },
  { title: "Routine maintenance", url: `${siteUrl}/maintenance`, snippet: "Routine vacuuming and analyzing keep a database healthy." },
  { title: "Autovacuum", url: `${siteUrl}/autovacuum`, snippet: "The autovacuum daemon automates VACUUM and ANALYZE." },
  { title: "Bloat", url: `${siteUrl}/bloat`, snippet: "Table bloat grows when dead tuples are not reclaimed." },
  { title: "Free space map", url: `${siteUrl}/fsm`, snippet: "The free space map tracks reusable space." }
]

beforeAll(async () => {
  world = await startGroundedWorld({
    "/vacuum": htmlPage("VACUUM", "<p>VACUUM reclaims storage occupied by dead tuples. In normal PostgreSQL operation, tuples that are deleted are not physically removed.</p><h2>Options</h2><p>FULL rewrites the table.</p>"),
    "/analyze": htmlPage("ANALYZE", "<p>ANALYZE collects statistics about the contents of tables in the database.</p>"),
    "/slow": "hang"
  }, pagesOf, () => queue.shift() ?? base)
  ;({ upstream, site, searx, server } = world)
})
afterAll(async () => {
  await world?.close()
})
beforeEach(() => {
  queue.length = 0
  base = { content: ANSWER }
  searx.pages = pagesOf(site.url)
  searx.behave({ kind: "ok" })
})

const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: authHeaders(), body: JSON.stringify(body), ...(signal ? { signal } : {}) })

const ask = (content: string, extra: Record<string, unknown> = {}) =>
  post({ model: "gpt-test", messages: [{ role: "user", content }], ...extra })

const dataChunks = (events: ReadonlyArray<string>) => events.filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)))

const lastChatBody = () => upstream.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)!.body

describe("web_search_options", () => {
  it("gives the model numbered sources with dates and read pages; annotations point at the cited spans; the invented [9] is removed and counted", async () => {
    const response = await ask("how does vacuum reclaim storage", { web_search_options: { search_context_size: "medium" } })
    expect(response.status).toBe(200)
    const body = await response.json() as any
    const message = body.choices[0].message
    expect(message.content).toBe("VACUUM reclaims the storage of dead tuples [1]. ANALYZE collects planner statistics [2]. The moon is cheese .")
    expect(message.annotations).toHaveLength(2)
    const [first, second] = message.annotations
    expect(message.content.slice(first.url_citation.start_index, first.url_citation.end_index)).toBe("[1]")
    expect(message.content.slice(second.url_citation.start_index, second.url_citation.end_index)).toBe("[2]")
    expect(first.url_citation).toMatchObject({ url: `${site.url}/vacuum`, title: "VACUUM" })
    expect(second.url_citation).toMatchObject({ url: `${site.url}/analyze`, title: "ANALYZE" })
    // Every annotation's url is one retrieved for this request.
    const retrieved = body.search_results.map((r: any) => r.url)
    for (const a of message.annotations) expect(retrieved).toContain(a.url_citation.url)
    expect(body.search_results).toHaveLength(5)
    expect(body.search_results[0]).toEqual({ title: "VACUUM", url: `${site.url}/vacuum`, snippet: "VACUUM reclaims storage occupied by dead tuples.", date: "2024-05-01" })
    expect(body.periscope_grounding).toMatchObject({
      query: "how does vacuum reclaim storage",
      search_context_size: "medium",
      retrieval: "ok",
      sources: 5,
      pages_read: 2,
      citations_removed: 1,
      tool_rounds: 0,
      tool_limit_reached: false
    })
    // The model got the sources in a system message (OpenRouter's style), with the read page's text.
    const sent = lastChatBody()
    expect(sent.web_search_options).toBeUndefined()
    const system = sent.messages[0]
    expect(system.role).toBe("system")
    expect(system.content).toMatch(/^A web search was conducted on \d{4}-\d{2}-\d{2} for "how does vacuum reclaim storage"/)
    expect(system.content).toContain(`[1] VACUUM\nURL: ${site.url}/vacuum\nDate: 2024-05-01\n`)
    expect(system.content).toContain("tuples that are deleted are not physically removed")
    expect(system.content).toContain("[5] Bloat")
    expect(system.content).not.toContain("[6]")
    expect(sent.messages.at(-1)).toEqual({ role: "user", content: "how does vacuum reclaim storage" })
  })

  it("takes 3 sources for low (snippets only) and 8 for high", async () => {
    searx.pages = [...pagesOf(site.url), ...pagesOf(site.url).map((p) => ({ ...p, url: `${p.url}-2`, title: `${p.title} 2` }))]
    const low = await (await ask("vacuum storage", { web_search_options: { search_context_size: "low" } })).json() as any
    expect(low.search_results).toHaveLength(3)
    expect(low.periscope_grounding).toMatchObject({ search_context_size: "low", pages_read: 0 })
    const high = await (await ask("vacuum storage", { web_search_options: { search_context_size: "high" } })).json() as any
    expect(high.search_results).toHaveLength(8)
    expect(high.periscope_grounding.search_context_size).toBe("high")
  })

  it("passes the user's approximate location to the search and the model", async () => {
    await ask("vacuum near me", { web_search_options: { user_location: { type: "approximate", approximate: { city: "Lyon", country: "FR" } } } })
    expect(lastChatBody().messages[0].content).toContain("The user is located approximately in Lyon, FR.")
  })

  it("answers without sources, and says so, when every search source fails", async () => {
    searx.behave({ kind: "serverError" })
    const body = await (await ask("vacuum failure please", { web_search_options: {} })).json() as any
    expect(body.search_results.length).toBeLessThanOrEqual(1)
    expect(body.choices[0].message.annotations.length).toBeLessThanOrEqual(1)
  })
})

describe(":online", () => {
  it("routes x:online to x with grounding on, and names the model as asked", async () => {
    const body = await (await post({ model: "gpt-test:online", messages: [{ role: "user", content: "vacuum dead tuples" }] })).json() as any
    expect(body.model).toBe("gpt-test:online")
    expect(lastChatBody().model).toBe("mock-model")
    expect(body.choices[0].message.annotations).toHaveLength(2)
    expect(body.periscope_grounding.search_context_size).toBe("medium")
  })

  it("is model_not_found (404) when the base model is unknown", async () => {
    const response = await post({ model: "nope:online", messages: [{ role: "user", content: "hi" }] })
    expect(response.status).toBe(404)
    const body = await response.json() as any
    expect(body.error.code).toBe("model_not_found")
    expect(body.error.param).toBe("model")
  })

  it("leaves a request without grounding exactly as before", async () => {
    const body = await (await ask("plain question")).json() as any
    expect(body.choices[0].message.content).toBe(ANSWER)
    expect(body.choices[0].message.annotations).toBeUndefined()
    expect(body.search_results).toBeUndefined()
    expect(lastChatBody().messages).toEqual([{ role: "user", content: "plain question" }])
  })
})

describe("streaming", () => {
  it("verifies markers split across chunks; annotations then [DONE]; the text matches the whole answer", async () => {
    const whole = await (await ask("vacuum dead tuples", { web_search_options: {} })).json() as any
    // One character per piece: every marker is split across chunks.
    queue.push({ content: ANSWER, pieceSize: 1 })
    const response = await post({
      model: "gpt-test:online",
      stream: true,
      messages: [{ role: "user", content: "vacuum dead tuples" }]
    })
    const events = await readSse(response)
    expect(events.at(-1)).toBe("data: [DONE]")
    const chunks = dataChunks(events)
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")
    expect(content).toBe(whole.choices[0].message.content)
    const last = chunks.at(-1)
    expect(last.choices[0].finish_reason).toBe("stop")
    expect(last.choices[0].delta.annotations).toEqual(whole.choices[0].message.annotations)
    expect(last.search_results).toEqual(whole.search_results)
    expect(last.periscope_grounding.citations_removed).toBe(1)
    for (const a of last.choices[0].delta.annotations) expect(content.slice(a.url_citation.start_index, a.url_citation.end_index)).toMatch(/^\[[12]\]$/)
  })
})

const chatRequests = () => upstream.requests.filter((r) => r.path.endsWith("/chat/completions"))
const searchCall = (query: string) => ({ toolCalls: [{ name: "web_search", arguments: JSON.stringify({ query }) }] })

describe("server tools", () => {
  it("runs web_search for the model, continues, and answers with citations of what the tool found", async () => {
    const before = chatRequests().length
    queue.push(searchCall("autovacuum daemon"), { content: "Autovacuum runs VACUUM for you [1]." })
    const body = await (await ask("what runs vacuum automatically", { tools: [{ type: "web_search" }] })).json() as any
    const message = body.choices[0].message
    expect(message.content).toBe("Autovacuum runs VACUUM for you [1].")
    expect(message.tool_calls).toBeUndefined()
    expect(body.choices[0].finish_reason).toBe("stop")
    expect(message.annotations).toEqual([{ type: "url_citation", url_citation: { start_index: 31, end_index: 34, title: "VACUUM", url: `${site.url}/vacuum` } }])
    expect(body.search_results).toHaveLength(5)
    expect(body.periscope_grounding).toMatchObject({ retrieval: "skipped", tool_rounds: 1, tool_calls: 1, tool_limit_reached: false })
    const [first, second] = chatRequests().slice(before)
    expect(first!.body.tools.map((t: any) => t.function.name)).toEqual(["web_search"])
    expect(searx.last?.query.get("q")).toBe("autovacuum daemon")
    const sent = second!.body.messages
    expect(sent.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ function: { name: "web_search" } }] })
    expect(sent.at(-1).role).toBe("tool")
    expect(sent.at(-1).content).toMatch(/^Results for "autovacuum daemon"; cite them by number as \[k\]/)
  })

  it("runs web_fetch, and a page it read can be cited; a number it never gave is removed", async () => {
    queue.push({ toolCalls: [{ name: "web_fetch", arguments: JSON.stringify({ url: `${site.url}/analyze` }) }] }, { content: "Statistics [1], and more [2]." })
    const body = await (await ask("read the analyze page", { tools: [{ type: "web_fetch" }] })).json() as any
    expect(body.choices[0].message.content).toBe("Statistics [1], and more .")
    expect(body.choices[0].message.annotations.map((a: any) => a.url_citation.url)).toEqual([`${site.url}/analyze`])
    expect(body.periscope_grounding.citations_removed).toBe(1)
    expect(chatRequests().at(-1)!.body.messages.at(-1).content).toContain("ANALYZE collects statistics about the contents of tables")
  })

  it("hands a client tool call back to the client, as without server tools", async () => {
    queue.push({ toolCalls: [{ name: "get_weather", arguments: "{\"city\":\"Paris\"}" }] })
    const tools = [{ type: "web_search" }, { type: "function", function: { name: "get_weather", parameters: { type: "object" } } }]
    const body = await (await ask("weather in Paris?", { tools })).json() as any
    expect(body.choices[0].finish_reason).toBe("tool_calls")
    expect(body.choices[0].message.tool_calls.map((c: any) => c.function.name)).toEqual(["get_weather"])
    expect(chatRequests().at(-1)!.body.tools.map((t: any) => t.function.name)).toEqual(["get_weather", "web_search"])
  })

  it("stops at chat.grounding.maxToolRounds with finish_reason length and tool_limit_reached, whole and streamed", async () => {
    base = { content: "Searching again.", ...searchCall("more vacuum") }
    const before = chatRequests().length
    const body = await (await ask("keep searching", { tools: [{ type: "web_search" }] })).json() as any
    expect(chatRequests().length - before).toBe(3)
    expect(body.choices[0].finish_reason).toBe("length")
    expect(body.choices[0].message.tool_calls).toBeUndefined()
    expect(body.choices[0].message.content).toBe("Searching again.Searching again.Searching again.")
    expect(body.periscope_grounding).toMatchObject({ tool_rounds: 2, tool_calls: 2, tool_limit_reached: true })
    expect(body.periscope_grounding.note).toMatch(/maxToolRounds/)

    const events = await readSse(await ask("keep searching", { tools: [{ type: "web_search" }], stream: true }))
    expect(events.at(-1)).toBe("data: [DONE]")
    const chunks = dataChunks(events)
    expect(chunks.some((c) => c.error !== undefined)).toBe(false)
    const finish = chunks.find((c) => c.choices[0]?.finish_reason)
    expect(finish.choices[0].finish_reason).toBe("length")
    expect(chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])).toEqual([])
    expect(chunks.at(-1).periscope_grounding).toMatchObject({ tool_rounds: 2, tool_limit_reached: true })
  })

  it("streams the final answer after the tool rounds, one completion for the client", async () => {
    queue.push({ ...searchCall("autovacuum daemon"), }, { content: "Autovacuum runs VACUUM for you [1].", pieceSize: 2 })
    const events = await readSse(await ask("what runs vacuum automatically", { tools: [{ type: "web_search" }], stream: true }))
    const chunks = dataChunks(events)
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Autovacuum runs VACUUM for you [1].")
    const last = chunks.at(-1)
    expect(last.choices[0].delta.annotations.map((a: any) => a.url_citation.url)).toEqual([`${site.url}/vacuum`])
    expect(events.at(-1)).toBe("data: [DONE]")
  })
})

describe("a client going away", () => {
  const until = async (check: () => boolean, ms = 5000) => {
    const end = Date.now() + ms
    while (!check()) {
      if (Date.now() > end) throw new Error("condition not met in time")
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  it("cancels the search", async () => {
    searx.behave({ kind: "hang" })
    const seen = searx.requests
    const aborted = searx.aborted
    const controller = new AbortController()
    const done = post({ model: "gpt-test:online", stream: true, messages: [{ role: "user", content: "hanging search one" }] }, controller.signal).catch(() => undefined)
    await until(() => searx.requests > seen)
    controller.abort()
    await done
    await searx.waitAborted(aborted + 1)
  })

  it("cancels the page reads", async () => {
    searx.pages = [{ title: "Slow", url: `${site.url}/slow`, snippet: "A page that never answers." }]
    const aborted = site.aborted()
    const controller = new AbortController()
    const done = post({ model: "gpt-test:online", stream: true, messages: [{ role: "user", content: "slow page please" }] }, controller.signal).catch(() => undefined)
    await site.waitRequested("/slow")
    controller.abort()
    await done
    await site.waitAborted(aborted + 1)
  })

  it("cancels the model call", async () => {
    base = { content: Array.from({ length: 100 }, (_, i) => `word${i}`).join(" "), chunkDelayMs: 50 }
    const index = upstream.requests.length
    const controller = new AbortController()
    const response = await post({ model: "gpt-test:online", stream: true, messages: [{ role: "user", content: "vacuum long answer" }] }, controller.signal)
    const reader = response.body!.getReader()
    await reader.read()
    await upstream.waitForRequest(index)
    controller.abort()
    const closed = await upstream.waitForClose(index, 3000)
    expect(closed.completed).toBe(false)
  })
})

describe("openai SDK", () => {
  const client = () => new OpenAI({ apiKey: TEST_KEY, baseURL: `${server.url}/v1` })

  it("reads annotations from a whole answer", async () => {
    const completion = await client().chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "vacuum dead tuples" }],
      web_search_options: { search_context_size: "low" }
    })
    const message = completion.choices[0]!.message
    const annotations = message.annotations ?? []
    expect(annotations.map((a) => a.url_citation.url)).toEqual([`${site.url}/vacuum`, `${site.url}/analyze`])
    for (const a of annotations) expect(message.content!.slice(a.url_citation.start_index, a.url_citation.end_index)).toMatch(/^\[\d\]$/)
  })

  it("reads annotations from a stream (on the finishing chunk)", async () => {
    const stream = await client().chat.completions.create({
      model: "gpt-test:online",
      stream: true,
      messages: [{ role: "user", content: "vacuum dead tuples" }]
    })
    let content = ""
    const annotations: Array<OpenAI.Chat.Completions.ChatCompletionMessage.Annotation> = []
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as (typeof chunk.choices)[number]["delta"] & { annotations?: typeof annotations } | undefined
      content += delta?.content ?? ""
      annotations.push(...(delta?.annotations ?? []))
    }
    expect(annotations.map((a) => a.url_citation.url)).toEqual([`${site.url}/vacuum`, `${site.url}/analyze`])
    for (const a of annotations) expect(content.slice(a.url_citation.start_index, a.url_citation.end_index)).toMatch(/^\[\d\]$/)
  })
})

describe("bad input", () => {
  const cases: ReadonlyArray<[string, Record<string, unknown>, string]> = [
    ["web_search_options not an object", { web_search_options: "yes" }, "web_search_options"],
    ["unknown context size", { web_search_options: { search_context_size: "huge" } }, "web_search_options.search_context_size"],
    ["user_location of a wrong type", { web_search_options: { user_location: { type: "exact", approximate: {} } } }, "web_search_options.user_location"],
    ["city not a string", { web_search_options: { user_location: { type: "approximate", approximate: { city: 7 } } } }, "web_search_options.user_location.approximate.city"],
    ["unknown server tool type", { tools: [{ type: "web_browse" }] }, "tools[0].type"],
    ["a function tool without function", { tools: [{ type: "web_search" }, { type: "function" }] }, "tools[1].function"]
  ]
  for (const [name, extra, param] of cases) {
    it(`${name}: 400 naming ${param}`, async () => {
      const response = await ask("hi", extra)
      expect(response.status).toBe(400)
      const body = await response.json() as any
      expect(body.error).toMatchObject({ type: "invalid_request_error", code: null })
      expect(body.error.param).toBe(param)
      expect(body.error.message).toContain(param)
    })
  }
})
