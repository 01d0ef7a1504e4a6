/**
 * Trace sampling, parent-based, with a loopback OTLP collector stand-in and a
 * search provider stand-in that records the headers it was sent: a caller's
 * traceparent flag decides (sampled: the whole trace is exported; not sampled:
 * nothing is, whatever the ratio); requests without one are traced with the
 * configured probability. Providers never see a traceparent either way.
 */
import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashKey } from "../../core/auth/KeyRecord.ts"
import { ConfigFile } from "../../core/config/ConfigFile.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { decoderFor } from "../../core/schema/Decode.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { startInstance } from "../store/instances.ts"
import { type Collector, startCollector } from "./collector.ts"

const KEY = "sampling-key-0123456789"
const keys = [{ name: "sampling", sha256: hashKey(KEY), requestsPerMinute: 1_000_000 }]
const traceparent = (traceId: string, flags: "00" | "01") => `00-${traceId}-00f067aa0ba902b7-${flags}`
const traceIdOf = (n: number) => n.toString(16).padStart(32, "a")

let collector: Collector
let searx: StandIn

beforeAll(async () => {
  collector = await startCollector()
  searx = await startStandIn("searxng", [{ title: "Sampled rivers", url: "https://searx.example/s", snippet: "rivers" }])
})
afterAll(async () => {
  await searx?.close()
  await collector?.close()
})

/** An instance with this ratio; `run` sends its requests; the spans it exported are returned once it is closed (closing flushes). */
const withInstance = async (traceSampleRatio: number | undefined, run: (url: string) => Promise<void>) => {
  const before = collector.spans.length
  const instance = await startInstance(
    {
      observability: { otlpEndpoint: collector.url, ...(traceSampleRatio === undefined ? {} : { traceSampleRatio }) },
      search: { providers: [{ name: "searx", kind: "searxng", baseUrl: searx.url }] }
    },
    keys
  )
  try {
    await run(instance.url)
  } finally {
    await instance.close()
  }
  return collector.spans.slice(before)
}

const search = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}/api/search/webSearch`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    // A different query each time: the answer cache would otherwise spare the provider.
    body: JSON.stringify({ keywords: `sampled rivers ${Math.random()}` })
  })
  expect(response.status).toBe(200)
  await response.arrayBuffer()
}

const SERVER = "POST /api/search/webSearch"

describe("trace sampling", () => {
  it("ratio 0: requests without a traceparent export nothing; a sampled caller is traced, an unsampled one is not", async () => {
    const upstreamTraceparents: Array<string | undefined> = []
    const spans = await withInstance(0, async (url) => {
      for (let i = 0; i < 20; i++) await search(url)
      upstreamTraceparents.push(searx.last?.headers.traceparent as string | undefined)
      await search(url, { traceparent: traceparent(traceIdOf(1), "00") })
      upstreamTraceparents.push(searx.last?.headers.traceparent as string | undefined)
      await search(url, { traceparent: traceparent(traceIdOf(2), "01") })
      upstreamTraceparents.push(searx.last?.headers.traceparent as string | undefined)
    })
    // Only the sampled caller's trace: its server span with the key, limit, search and upstream spans under it.
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(2)]))
    const server = spans.find((s) => s.name === SERVER)!
    expect(server.parentSpanId).toBe("00f067aa0ba902b7")
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(["ApiKeys.authenticate", "search.web"]))
    expect(spans.some((s) => s.kind === 3)).toBe(true) // the provider's HTTP request, a client span
    // Third-party providers are never sent our trace context, sampled or not (ProviderHttp turns propagation off).
    expect(upstreamTraceparents).toEqual([undefined, undefined, undefined])
  }, 20_000)

  it("ratio 1: every request without a traceparent is traced, a caller's unsampled flag still wins", async () => {
    const spans = await withInstance(1, async (url) => {
      for (let i = 0; i < 10; i++) await search(url)
      for (let i = 0; i < 5; i++) await search(url, { traceparent: traceparent(traceIdOf(100 + i), "00") })
    })
    expect(spans.filter((s) => s.name === SERVER)).toHaveLength(10)
    expect(spans.some((s) => s.traceId.startsWith("aaaa"))).toBe(false)
  }, 20_000)

  it("ratio 0.25: about a quarter of 400 requests traced, each with its whole trace", async () => {
    const spans = await withInstance(0.25, async (url) => {
      for (let i = 0; i < 40; i++) await Promise.all(Array.from({ length: 10 }, () => search(url)))
    })
    const servers = spans.filter((s) => s.name === SERVER)
    console.log(`ratio 0.25: ${servers.length} of 400 requests traced`)
    // Binomial(400, 0.25): mean 100, standard deviation 8.7; the bounds are more than 5 deviations out.
    expect(servers.length).toBeGreaterThan(50)
    expect(servers.length).toBeLessThan(150)
    const traced = new Set(servers.map((s) => s.traceId))
    expect(spans.every((s) => traced.has(s.traceId))).toBe(true)
    expect(spans.filter((s) => s.name === "search.web")).toHaveLength(servers.length)
  }, 30_000)

  it("the default ratio is 0.01", async () => {
    expect(settingsOf({}).observability.traceSampleRatio).toBe(0.01)
    const spans = await withInstance(undefined, async (url) => {
      await search(url, { traceparent: traceparent(traceIdOf(7), "01") })
    })
    expect(spans.filter((s) => s.name === SERVER)).toHaveLength(1)
  }, 20_000)
})

describe("observability.traceSampleRatio in the config file", () => {
  const decode = decoderFor(ConfigFile, "file", { unknownKeys: "error" })
  it("takes 0, 1 and anything between", () => {
    for (const ratio of [0, 0.001, 0.5, 1]) {
      const file = decode({ observability: { traceSampleRatio: ratio } })
      expect(Result.isSuccess(file)).toBe(true)
      expect(settingsOf(Result.getOrThrow(file)).observability.traceSampleRatio).toBe(ratio)
    }
  })
  for (const bad of [-0.1, 1.5, "0.5", null, Number.NaN]) {
    it(`${JSON.stringify(bad)} is named with its path and rule`, () => {
      const result = decode({ observability: { traceSampleRatio: bad } })
      if (!Result.isFailure(result)) throw new Error("expected a failure")
      expect(result.failure.path).toBe("observability.traceSampleRatio")
      expect(result.failure.message).toMatch(/^observability\.traceSampleRatio: must be a number from 0 to 1, got /)
    })
  }
})
