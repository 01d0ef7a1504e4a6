/**
 * GET /metrics after known requests, parsed by a real Prometheus text parser
 * (parse-prometheus-text-format): requests by route and status, latency
 * histograms, rate-limit rejections, cache hits and misses, chat tokens and
 * time to first token, index size and reloads. Also: /metrics wants a key
 * unless configured public, the access log is one JSON line per request with
 * the key's name and never the key, /readyz and /version.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Queue, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { hashKey, type KeyRecord } from "../../core/auth/KeyRecord.ts"
import { ScriptedChat } from "../../core/backends/ScriptedChat.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { buildIndex } from "../index/support.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { eventually, type Instance, startInstance } from "../store/instances.ts"

interface Sample {
  readonly labels?: Record<string, string>
  readonly value?: string
  readonly count?: string
  readonly sum?: string
  readonly buckets?: Record<string, string>
}
interface Family {
  readonly name: string
  readonly type: string
  readonly metrics: ReadonlyArray<Sample>
}
const parse = createRequire(import.meta.url)("parse-prometheus-text-format") as (text: string) => Array<Family>

const KEY = "metrics-main-key-0123456789"
const TINY = "metrics-tiny-key-0123456789"
const keys: ReadonlyArray<KeyRecord> = [
  { name: "main", sha256: hashKey(KEY), requestsPerMinute: 100_000 },
  { name: "tiny", sha256: hashKey(TINY), requestsPerMinute: 1 }
]
const MODEL = "metrics-model"

const docs = Array.from({ length: 5 }, (_, i) => ({ url: `https://docs.example/${i}`, title: `Rivers page ${i}`, text: `rivers and lakes number ${i}` }))

let dir: string
let searx: StandIn
let server: Instance
let open: Instance
let reloads: Queue.Queue<void>
const logged: Array<string> = []

const post = (path: string, body: unknown, key: string | null = KEY) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body)
  })

let lastText = ""
const scrape = async () => {
  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toContain("text/plain")
  lastText = await response.text()
  return parse(lastText)
}

/**
 * One series of a labelled histogram, parsed on its own: parse-prometheus-text-format 1.1.1
 * folds every series of a histogram family into one bucket map and drops the labelled
 * _sum/_count, so the series' lines are handed to it with their labels (all but le) removed.
 */
const histogramSeries = (text: string, name: string, labels: Record<string, string>): Sample => {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  const lines = text.split("\n").filter((line) =>
    (line.startsWith(`${name}_bucket{`) || line.startsWith(`${name}_sum{`) || line.startsWith(`${name}_count{`)) &&
    wanted.every((w) => line.includes(w)))
  const stripped = lines.map((line) => line.replace(/\{([^}]*)\}/, (_, inner: string) => {
    const le = inner.split(",").find((part) => part.startsWith("le="))
    return le === undefined ? "" : `{${le}}`
  }))
  const parsed = parse(`# TYPE ${name} histogram\n${stripped.join("\n")}\n`)
  return parsed[0]?.metrics[0] ?? {}
}

const family = (families: ReadonlyArray<Family>, name: string) => {
  const found = families.find((f) => f.name === name)
  expect(found, `family ${name}`).toBeDefined()
  return found!
}
const sample = (f: Family, labels: Record<string, string>) =>
  f.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "periscope-metrics-"))
  const snapshot = join(dir, "index.snapshot")
  writeFileSync(snapshot, encodeSnapshot(buildIndex(docs)))
  searx = await startStandIn("searxng", [{ title: "Searx rivers", url: "https://searx.example/r", snippet: "rivers" }])
  reloads = Effect.runSync(Queue.unbounded<void>())
  vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
    logged.push(args.map(String).join(" "))
  })
  server = await startInstance(
    { logRequests: true, search: { providers: [{ name: "searx", kind: "searxng", baseUrl: searx.url }] } },
    keys,
    {
      search: { _tag: "Engine", snapshot },
      hooks: { reloads: { name: "test", requests: Stream.fromQueue(reloads) } },
      chatModel: ScriptedChat.layer({ models: [MODEL], replies: [{ content: "three word answer", usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }] })
    }
  )
  open = await startInstance({ observability: { metrics: { public: true } } }, keys)
})

afterAll(async () => {
  vi.restoreAllMocks()
  await server?.close()
  await open?.close()
  await searx?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("GET /metrics", () => {
  it("counts known requests in the Prometheus text format", async () => {
    for (let i = 0; i < 3; i++) expect((await post("/api/search/webSearch", { keywords: "rivers" })).status).toBe(200)
    expect((await post("/api/search/webSearch", {})).status).toBe(400)
    expect((await post("/api/search/webSearch", { keywords: "rivers" }, null)).status).toBe(401)
    expect((await post("/api/search/webSearch", { keywords: "rivers" }, TINY)).status).toBe(200)
    expect((await post("/api/search/webSearch", { keywords: "rivers" }, TINY)).status).toBe(429)
    expect((await fetch(`${server.url}/no/such/path`)).status).toBe(404)
    // through the cache: a miss, then a hit
    const miss = await (await post("/api/search/webSearch", { keywords: "cached rivers", explain: true })).json() as any
    const hit = await (await post("/api/search/webSearch", { keywords: "cached rivers", explain: true })).json() as any
    expect([miss.extra.cache, hit.extra.cache]).toEqual(["miss", "hit"])
    // chat: a whole completion and a stream
    expect((await post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "hi" }] })).status).toBe(200)
    const stream = await post("/v1/chat/completions", { model: MODEL, stream: true, messages: [{ role: "user", content: "hi" }] })
    expect(stream.status).toBe(200)
    expect(await stream.text()).toContain("[DONE]")
    // a reload of the index
    Queue.offerUnsafe(reloads, undefined)
    expect(await eventually(async () => {
      const f = (await scrape()).find((x) => x.name === "periscope_index_reloads_total")
      return f !== undefined && sample(f, { outcome: "ok" })?.value === "1"
    }, 5_000)).toBe(true)

    const families = await scrape()
    const requests = family(families, "periscope_http_requests_total")
    expect(requests.type).toBe("COUNTER")
    const count = (labels: Record<string, string>) => Number(sample(requests, labels)?.value ?? 0)
    expect(count({ method: "POST", route: "/api/search/webSearch", status: "200" })).toBe(6)
    expect(count({ method: "POST", route: "/api/search/webSearch", status: "400" })).toBe(1)
    expect(count({ method: "POST", route: "/api/search/webSearch", status: "401" })).toBe(1)
    expect(count({ method: "POST", route: "/api/search/webSearch", status: "429" })).toBe(1)
    expect(count({ method: "GET", route: "unmatched", status: "404" })).toBe(1)
    expect(count({ method: "POST", route: "/v1/chat/completions", status: "200" })).toBe(2)

    const latency = family(families, "periscope_http_request_duration_seconds")
    expect(latency.type).toBe("HISTOGRAM")
    const searchLatency = histogramSeries(lastText, "periscope_http_request_duration_seconds", { method: "POST", route: "/api/search/webSearch" })
    expect(Number(searchLatency.count)).toBe(9)
    expect(Number(searchLatency.sum)).toBeGreaterThan(0)
    expect(searchLatency.buckets!["+Inf"]).toBe("9")

    expect(sample(family(families, "periscope_rate_limit_rejections_total"), { reason: "rate_limited" })?.value).toBe("1")
    const lookups = family(families, "periscope_cache_lookups_total")
    // with a provider configured every search goes through the cache: "rivers" once computed and three times
    // served (two keys, one of them refused before search), "cached rivers" computed then served
    expect(sample(lookups, { cache: "result", outcome: "miss" })?.value).toBe("2")
    expect(sample(lookups, { cache: "result", outcome: "hit" })?.value).toBe("4")

    const tokens = family(families, "periscope_tokens_total")
    expect(sample(tokens, { model: MODEL, kind: "prompt" })?.value).toBe("14")
    expect(sample(tokens, { model: MODEL, kind: "completion" })?.value).toBe("6")
    expect(family(families, "periscope_upstream_ttft_seconds").type).toBe("HISTOGRAM")
    expect(Number(histogramSeries(lastText, "periscope_upstream_ttft_seconds", { model: MODEL }).count)).toBe(1)
    expect(family(families, "periscope_upstream_duration_seconds").type).toBe("HISTOGRAM")
    expect(Number(histogramSeries(lastText, "periscope_upstream_duration_seconds", { model: MODEL, mode: "complete", outcome: "ok" }).count)).toBe(1)
    expect(Number(histogramSeries(lastText, "periscope_upstream_duration_seconds", { model: MODEL, mode: "stream", outcome: "ok" }).count)).toBe(1)

    expect(family(families, "periscope_index_documents").metrics[0]!.value).toBe("5")
    expect(sample(family(families, "periscope_index_reloads_total"), { outcome: "ok" })?.value).toBe("1")
  })

  it("wants an API key unless metrics are public", async () => {
    const refused = await fetch(`${server.url}/metrics`)
    expect(refused.status).toBe(401)
    expect((await refused.json() as any).code).toBe("90402")
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer wrong-key-000000" } })).status).toBe(401)
    const publicScrape = await fetch(`${open.url}/metrics`)
    expect(publicScrape.status).toBe(200)
    expect(parse(await publicScrape.text()).length).toBeGreaterThan(0)
  })
})

describe("access log", () => {
  it("one JSON line per request: method, route, status, ms, key name (never the key), request id", async () => {
    logged.length = 0
    const response = await fetch(`${server.url}/api/search/webSearch`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": "req-abc-123" },
      body: JSON.stringify({ keywords: "rivers" })
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("x-request-id")).toBe("req-abc-123")
    const lines = logged.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    const line = lines.find((l) => l.requestId === "req-abc-123")
    expect(line).toMatchObject({ method: "POST", route: "/api/search/webSearch", status: 200, key: "main", requestId: "req-abc-123" })
    expect(typeof line.ms).toBe("number")
    expect(Number.isNaN(Date.parse(line.time))).toBe(false)
    expect(logged.join("\n")).not.toContain(KEY)
  })
})

describe("/readyz and /version", () => {
  it("ready with the index loaded and the store in memory", async () => {
    const response = await fetch(`${server.url}/readyz`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      status: "ready",
      checks: { index: { ok: true, detail: "5 documents, 0 images" }, store: { ok: true, detail: "memory (this instance only)" } }
    })
  })

  it("names the build", async () => {
    const body = await (await fetch(`${server.url}/version`)).json() as any
    expect(body).toMatchObject({ name: "periscope", version: expect.stringMatching(/^\d+\.\d+\.\d+/) })
    expect("commit" in body).toBe(true)
  })
})
