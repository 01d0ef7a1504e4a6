/**
 * HTTP throughput and latency of the Node adapter against a bare node:http
 * server doing the same work, in one run: webSearch on the fixture backend
 * and non-streaming chat on the scripted backend.
 *
 *   node test/bench/http.ts [--seconds 10] [--connections 32] [--rounds 3] [--only all|http|observability|limiter]
 *
 * Periscope runs the Node adapter's server over the fixture and scripted
 * backends, once as `npm start` runs it (the express lane answering the hot
 * routes) and once with the lane off (every route through HttpApi's full
 * stack); the bare server does the same backend work.
 * Each server runs in its own process; autocannon drives it from this one.
 * Two cores: compare the ratio column, not absolute numbers.
 *
 * Then side-by-side runs on webSearch (test/bench/support/stateBenchServer.ts):
 * metrics and tracing off; metrics on; metrics and OTLP traces to a loopback
 * collector stand-in at the default sample ratio, then with every request traced
 * (access log off throughout); and the rate limiter in memory, then in Redis (a
 * redis-server started here; skipped with a note when it is absent). These run
 * in rotating rounds, all configurations served by one process (one JIT, one
 * heap: separate processes with the same configuration differed by up to 12%).
 * Each configuration's median round is shown with the server's CPU time per
 * request (from /proc); the ratios are the medians of ratios paired within a
 * round, so a slow stretch of the machine lands on both sides of a ratio.
 */
import { parseArgs } from "node:util"
import type autocannon from "autocannon"
import { startCollector } from "../observability/collector.ts"
import { redisServerPath, startRedis } from "../store/redisServer.ts"
import { freePort } from "../support/servers.ts"
import { BENCH_KEY, type BenchRequest, benchRequests, loadWith } from "./support/benchRequests.ts"
import { startBenchServer } from "./support/benchServerProcess.ts"
import { cpuTimeUs } from "./support/processCpu.ts"
import { median, medianBy } from "./support/stats.ts"

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "10" }, connections: { type: "string", default: "32" }, rounds: { type: "string", default: "3" }, only: { type: "string", default: "all" } }
})
const only = values.only
if (!["all", "http", "observability", "limiter"].includes(only)) throw new Error(`--only must be all, http, observability or limiter; got ${only}`)
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const rounds = Number(values.rounds)

const endpoints = [
  { name: "webSearch", ...benchRequests.webSearch },
  { name: "chat (non-streaming)", ...benchRequests.chat }
]

const load = (url: string, request: BenchRequest, duration: number) => loadWith(url, request, connections, duration)
/** A server of the bench, ready once it answers a webSearch at all. */
const start = (name: string, args: Array<string>, options?: { readonly env?: Record<string, string>; readonly port?: number }) =>
  startBenchServer(name, args, { path: benchRequests.webSearch.path, body: "{\"keywords\":\"x\"}" }, options)

console.log(`HTTP bench: ${connections} connections, ${seconds} s per run, ${process.version}, ${(await import("node:os")).cpus().length} cores\n`)
if (only === "all" || only === "http") {
const bare = await start("bare node:http", ["test/bench/support/bareHttpServer.ts", "$PORT"])
const servers = [
  bare,
  ...await Promise.all([
    start("Periscope (Node)", ["test/bench/support/periscopeBenchServer.ts", "$PORT", BENCH_KEY]),
    start("Periscope, lane off", ["test/bench/support/periscopeBenchServer.ts", "$PORT", BENCH_KEY, "full"])
  ]).catch((error) => {
    bare.stop()
    throw error
  })
]

const rows: Array<Array<string>> = []
try {
  for (const endpoint of endpoints) {
    for (const server of servers) await load(server.url, endpoint, 2) // warm-up
    // Rotating rounds; each ratio is the median of the ratios paired within a round (the bare
    // server alone moved by 20% from one run to the next on this machine).
    const runs: Array<Array<autocannon.Result>> = servers.map(() => [])
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < servers.length; k++) {
        const i = (k + round) % servers.length
        const result = await load(servers[i]!.url, endpoint, seconds)
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${servers[i]!.name} ${endpoint.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        runs[i]!.push(result)
      }
    }
    servers.forEach((server, i) => {
      const mine = runs[i]!
      const typical = medianBy(mine, (r) => r.requests.average)
      const ratio = median(mine.map((r, round) => r.requests.average / runs[0]![round]!.requests.average))
      rows.push([endpoint.name, server.name, typical.requests.average.toFixed(0), typical.latency.p50.toFixed(2), typical.latency.p99.toFixed(2), ratio.toFixed(2)])
    })
  }
} finally {
  for (const server of servers) server.stop()
}

const header = ["endpoint", "server", "req/s", "p50 ms", "p99 ms", "vs bare"]
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
const line = (cells: Array<string>) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
console.log(`(${rounds} rotating rounds of ${seconds} s; each server's median round; "vs bare": the median of the ratios paired within a round)`)
console.log(line(header))
console.log(widths.map((w) => "-".repeat(w)).join("  "))
for (const row of rows) console.log(line(row))
}

// --- shared state and observability, side by side ---------------------------------------

const search = endpoints[0]!
interface Measured {
  readonly name: string
  readonly rps: number
  readonly p50: number
  readonly p99: number
  /** CPU time the server process spent per answered request, in microseconds. */
  readonly cpuUs: number
  /** Against the first configuration: the median of the ratios paired within each round. */
  readonly ratio: number
  readonly cpuRatio: number
}

/**
 * All configurations served by one process (stateBenchServer.ts), each on its own port; then
 * `rounds` rounds, each driving every configuration in turn (the order rotating). A tracing
 * configuration waits `settleMs` after its run, so that its span export lands before the next run.
 */
const measureAll = async (runs: ReadonlyArray<{ readonly name: string; readonly config: unknown; readonly settleMs?: number }>, rounds: number): Promise<Array<Measured>> => {
  const ports = await Promise.all(runs.map(() => freePort()))
  const process_ = await start("Periscope (state bench)", ["test/bench/support/stateBenchServer.ts", ports.join(","), BENCH_KEY], {
    env: { BENCH_CONFIGS: JSON.stringify(runs.map((run) => run.config)) },
    port: ports[0]
  })
  const urls = ports.map((port) => `http://127.0.0.1:${port}`)
  try {
    for (const url of urls) await load(url, search, 2) // warm-up
    const results: Array<Array<Omit<Measured, "ratio" | "cpuRatio">>> = runs.map(() => [])
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < runs.length; k++) {
        const i = (k + round) % runs.length
        const cpuBefore = cpuTimeUs(process_.pid)
        const result = await load(urls[i]!, search, seconds)
        const cpuUs = (cpuTimeUs(process_.pid) - cpuBefore) / result.requests.total
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${runs[i]!.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        if (runs[i]!.settleMs !== undefined) await new Promise((r) => setTimeout(r, runs[i]!.settleMs))
        results[i]!.push({ name: runs[i]!.name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuUs })
      }
    }
    const base = results[0]!
    return results.map((rs) => ({
      ...medianBy(rs, (r) => r.rps),
      cpuUs: median(rs.map((r) => r.cpuUs)),
      ratio: median(rs.map((r, round) => r.rps / base[round]!.rps)),
      cpuRatio: median(rs.map((r, round) => base[round]!.cpuUs / r.cpuUs))
    }))
  } finally {
    process_.stop()
  }
}

const pairs: Array<Array<string>> = []
const side = (a: Measured, ...others: Array<Measured>) => {
  pairs.push([a.name, a.rps.toFixed(0), a.p50.toFixed(2), a.p99.toFixed(2), "1.00", a.cpuUs.toFixed(0), "1.00"])
  for (const b of others) {
    pairs.push([b.name, b.rps.toFixed(0), b.p50.toFixed(2), b.p99.toFixed(2), b.ratio.toFixed(3), b.cpuUs.toFixed(0), b.cpuRatio.toFixed(3)])
  }
}

const notes: Array<string> = []
if (only === "all" || only === "observability") {
  // Tracing on at the default sample ratio, then with every request traced (the cost a collector pays for seeing all).
  const collector = await startCollector()
  const [off, metricsOnly, sampled, full] = await measureAll([
    { name: "metrics + tracing off", config: { observability: { metrics: { enabled: false } } } },
    { name: "metrics on, tracing off", config: {} },
    { name: "metrics + tracing on (default ratio)", config: { observability: { otlpEndpoint: collector.url } }, settleMs: 2500 },
    { name: "metrics + tracing on (every request)", config: { observability: { otlpEndpoint: collector.url, traceSampleRatio: 1 } }, settleMs: 2500 }
  ], rounds)
  side(off!, metricsOnly!, sampled!, full!)
  notes.push(`(${rounds} rotating rounds, one server process; the collector received ${collector.spans.length} spans, from the two tracing servers)`)
  await collector.close()
}

if (only === "all" || only === "limiter") {
  if (redisServerPath() === undefined) {
    notes.push("redis-server is not installed: the Redis limiter run was skipped")
  } else {
    const redis = await startRedis()
    try {
      const [memory, shared] = await measureAll([
        { name: "limiter in memory (metrics on)", config: {} },
        { name: "limiter in Redis", config: { store: { redisUrl: redis.url } } }
      ], rounds)
      side(memory!, shared!)
    } finally {
      await redis.stop()
    }
  }
}

if (pairs.length > 0) {
  console.log(`\nwebSearch, side by side (ratios against the first row of each group; CPU ratio: the throughput the server's CPU time per request allows)`)
  const header2 = ["run", "req/s", "p50 ms", "p99 ms", "ratio", "CPU us/req", "CPU ratio"]
  const widths2 = header2.map((h, i) => Math.max(h.length, ...pairs.map((r) => r[i]!.length)))
  const line2 = (cells: Array<string>) => cells.map((c, i) => (i === 0 ? c.padEnd(widths2[i]!) : c.padStart(widths2[i]!))).join("  ")
  console.log(line2(header2))
  console.log(widths2.map((w) => "-".repeat(w)).join("  "))
  for (const row of pairs) console.log(line2(row))
}
for (const note of notes) console.log(note)
