/**
 * Slowloris on the real server process: 100 connections that each send a
 * request line and then one header byte a second. Meanwhile normal webSearch
 * requests keep being answered, all of them, with their latency bounded
 * (generously: p99 under 1 s; the figures before and during the attack are
 * printed). The server's headers timeout (15 s) then closes the slow ones
 * with a 408, each within a few seconds of that bound.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { authHeaders, type ChildServer, spawnNodeServer, TEST_KEY } from "../support/servers.ts"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const SLOW = 100
const HEADERS_TIMEOUT_MS = 15_000

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** Sends webSearch requests, four at a time, for `ms`; every latency and status. */
const normalTraffic = async (url: string, ms: number) => {
  const latencies: Array<number> = []
  const statuses: Record<string, number> = {}
  const until = performance.now() + ms
  await Promise.all(Array.from({ length: 4 }, async (_, worker) => {
    let n = 0
    while (performance.now() < until) {
      const started = performance.now()
      try {
        const response = await fetch(`${url}/api/search/webSearch`, {
          method: "POST",
          headers: authHeaders(),
          body: JSON.stringify({ keywords: `search results ${worker} ${n++}` }),
          signal: AbortSignal.timeout(10_000)
        })
        await response.arrayBuffer()
        statuses[response.status] = (statuses[response.status] ?? 0) + 1
      } catch (error) {
        const key = `error ${(error as Error).name}`
        statuses[key] = (statuses[key] ?? 0) + 1
      }
      latencies.push(performance.now() - started)
      await sleep(10)
    }
  }))
  return { latencies, statuses, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies) }
}

interface Slow {
  readonly socket: Socket
  closedAt: number | undefined
  answer: string
}

describe("slowloris on 100 connections", () => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-slowloris-"))
  let server: ChildServer
  const slow: Array<Slow> = []
  let timer: ReturnType<typeof setInterval> | undefined

  beforeAll(async () => {
    const config = join(dir, "config.json")
    writeFileSync(config, JSON.stringify({ rateLimitPerMinute: 10_000_000 }))
    server = await spawnNodeServer({ PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_DATA_DIR: join(dir, "data"), PERISCOPE_CONFIG: config })
  }, 60_000)

  afterAll(async () => {
    if (timer !== undefined) clearInterval(timer)
    for (const s of slow) s.socket.destroy()
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("normal requests keep their latency; the slow connections are closed by the headers timeout", async () => {
    const before = await normalTraffic(server.url, 2_000)
    const { port } = new URL(server.url)
    const startedAt = performance.now()
    for (let i = 0; i < SLOW; i++) {
      const socket = connect(Number(port), "127.0.0.1")
      const entry: Slow = { socket, closedAt: undefined, answer: "" }
      socket.on("data", (d) => void (entry.answer += d.toString("latin1")))
      socket.on("error", () => {})
      socket.on("close", () => void (entry.closedAt = performance.now()))
      socket.write(`POST /api/search/webSearch HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-${i}: `)
      slow.push(entry)
    }
    // One more header byte a second on each slow connection, never the blank line that ends the headers.
    timer = setInterval(() => {
      for (const s of slow) if (s.closedAt === undefined && !s.socket.destroyed) s.socket.write("a")
    }, 1_000)
    await sleep(500)
    expect(slow.filter((s) => s.closedAt !== undefined)).toHaveLength(0)

    const during = await normalTraffic(server.url, 6_000)
    const openDuring = slow.filter((s) => s.closedAt === undefined).length
    console.log(`normal webSearch before: ${before.latencies.length} requests, p50 ${before.p50.toFixed(1)} ms, p99 ${before.p99.toFixed(1)} ms`)
    console.log(`normal webSearch with ${openDuring} slowloris connections open: ${during.latencies.length} requests, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, max ${during.max.toFixed(1)} ms`, during.statuses)
    expect(openDuring).toBe(SLOW)
    expect(Object.keys(during.statuses)).toEqual(["200"])
    expect(during.latencies.length).toBeGreaterThan(50)
    expect(during.p99).toBeLessThan(1_000)

    // The headers timeout closes every slow connection (Node checks it every connectionsCheckingInterval).
    const deadline = startedAt + HEADERS_TIMEOUT_MS + 10_000
    while (slow.some((s) => s.closedAt === undefined) && performance.now() < deadline) await sleep(200)
    const closed = slow.filter((s) => s.closedAt !== undefined)
    const after = closed.map((s) => s.closedAt! - startedAt)
    const answered408 = closed.filter((s) => s.answer.startsWith("HTTP/1.1 408")).length
    console.log(`slow connections closed: ${closed.length} of ${SLOW}, ${answered408} with a 408, between ${Math.round(Math.min(...after))} and ${Math.round(Math.max(...after))} ms after they opened (headers timeout ${HEADERS_TIMEOUT_MS} ms)`)
    expect(closed).toHaveLength(SLOW)
    expect(Math.min(...after)).toBeGreaterThan(HEADERS_TIMEOUT_MS - 1_000)
    // Node checks the timeouts every connectionsCheckingInterval (30 s by default; the server sets 1 s).
    expect(Math.max(...after)).toBeLessThan(HEADERS_TIMEOUT_MS + 3_000)
    // And the server still answers.
    const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) })
    expect(response.status).toBe(200)
  }, 60_000)
})
