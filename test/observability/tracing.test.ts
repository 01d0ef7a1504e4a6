/**
 * OTLP traces with a loopback collector stand-in: one server span per request
 * (continuing the caller's W3C traceparent), with children for auth, search and
 * the upstream calls (the provider's HTTP request), and for the chat model.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashKey } from "../../core/auth/KeyRecord.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { eventually, type Instance, startInstance } from "../store/instances.ts"
import { type Collector, type ReceivedSpan, startCollector } from "./collector.ts"

const KEY = "tracing-key-0123456789"
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const CALLER_SPAN = "00f067aa0ba902b7"

let collector: Collector
let searx: StandIn
let server: Instance

beforeAll(async () => {
  collector = await startCollector()
  searx = await startStandIn("searxng", [{ title: "Traced rivers", url: "https://searx.example/t", snippet: "rivers" }])
  server = await startInstance(
    { observability: { otlpEndpoint: collector.url, serviceName: "periscope-test", traceSampleRatio: 1 }, search: { providers: [{ name: "searx", kind: "searxng", baseUrl: searx.url }] } },
    [{ name: "tracing", sha256: hashKey(KEY), requestsPerMinute: 1000 }],
    { chatModel: ScriptedChat.layer({ models: ["traced-model"], replies: [{ content: "traced answer" }] }) }
  )
})

afterAll(async () => {
  await server?.close()
  await searx?.close()
  await collector?.close()
})

const ancestors = (span: ReceivedSpan, all: ReadonlyArray<ReceivedSpan>): Array<string> => {
  const names: Array<string> = []
  let current: ReceivedSpan | undefined = span
  while (current?.parentSpanId !== undefined) {
    const parentId: string = current.parentSpanId
    current = all.find((s) => s.spanId === parentId)
    if (current !== undefined) names.push(current.name)
  }
  return names
}

describe("OTLP traces", () => {
  it("one server span per request with children for auth, search and the upstream call; the chat model under its request", async () => {
    const search = await fetch(`${server.url}/api/search/webSearch`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ keywords: "traced rivers" })
    })
    expect(search.status).toBe(200)
    const chat = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] })
    })
    expect(chat.status).toBe(200)

    // Spans are exported in batches (every 2 s here); closing the server flushes the rest.
    expect(await eventually(async () => collector.spans.some((s) => s.name === "POST /v1/chat/completions"), 8_000)).toBe(true)
    const spans = collector.spans

    const root = spans.find((s) => s.name === "POST /api/search/webSearch")!
    expect(root).toBeDefined()
    expect(root.kind).toBe(2) // SERVER
    expect(root.traceId).toBe(TRACE_ID)
    expect(root.parentSpanId).toBe(CALLER_SPAN)
    expect(root.serviceName).toBe("periscope-test")
    const inTrace = spans.filter((s) => s.traceId === TRACE_ID)
    const child = (name: string) => inTrace.find((s) => s.name === name)
    expect(child("ApiKeys.authenticate")?.parentSpanId).toBe(root.spanId)
    expect(child("RateLimits.check")?.parentSpanId).toBe(root.spanId)
    const searchSpan = child("search.web")!
    expect(searchSpan.parentSpanId).toBe(root.spanId)
    // the provider's HTTP request: a client span below the search span
    const upstream = inTrace.find((s) => s.kind === 3 && ancestors(s, inTrace).includes("search.web"))
    expect(upstream, `client span under search.web among ${inTrace.map((s) => s.name).join(", ")}`).toBeDefined()
    expect(ancestors(upstream!, inTrace)).toContain("POST /api/search/webSearch")

    const chatRoot = spans.find((s) => s.name === "POST /v1/chat/completions")!
    expect(chatRoot.traceId).not.toBe(TRACE_ID)
    const model = spans.find((s) => s.name === "chat.model.complete" && s.traceId === chatRoot.traceId)!
    expect(model).toBeDefined()
    expect(ancestors(model, spans)).toContain("POST /v1/chat/completions")
    // no secret in any span
    expect(JSON.stringify(spans)).not.toContain(KEY)
  }, 20_000)
})
