/**
 * HTTP throughput and latency of the Node adapter against a bare node:http
 * server doing the same work, in one run: webSearch on the fixture backend
 * and non-streaming chat on the scripted backend.
 *
 *   node test/bench/http.ts [--seconds 10] [--connections 32]
 *
 * Periscope runs the Node adapter's server (the full route stack) over the
 * fixture and scripted backends; the bare server does the same backend work.
 * Each server runs in its own process; autocannon drives it from this one.
 * Two cores: compare the ratio column, not absolute numbers.
 *
 * Then two side-by-side runs on webSearch (test/bench/support/stateBenchServer.ts):
 * metrics and tracing off, then on (Prometheus metrics, access-log-free, OTLP
 * traces to a loopback collector stand-in); and the rate limiter in memory, then
 * in Redis (a redis-server started here; skipped with a note when it is absent).
 */
import { spawn } from "node:child_process"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import autocannon from "autocannon"
import { startCollector } from "../observability/collector.ts"
import { redisServerPath, startRedis } from "../store/redisServer.ts"
import { freePort } from "../support/servers.ts"

const { values } = parseArgs({ options: { seconds: { type: "string", default: "10" }, connections: { type: "string", default: "32" } } })
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const root = resolve(import.meta.dirname, "../..")
const KEY = "bench-key"

const start = async (name: string, args: Array<string>, env: Record<string, string>) => {
  const port = await freePort()
  const child = spawn(process.execPath, args.map((a) => a.replace("$PORT", String(port))), {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (d) => { output += d })
  child.stderr.on("data", (d) => { output += d })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url + "/api/search/webSearch", { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: "{\"keywords\":\"x\"}" })
      return { name, url, stop: () => child.kill("SIGTERM") }
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  throw new Error(`${name} did not start:\n${output}`)
}

const endpoints = [
  { name: "webSearch", path: "/api/search/webSearch", body: JSON.stringify({ keywords: "search results with snippets", num: 10 }) },
  {
    name: "chat (non-streaming)",
    path: "/v1/chat/completions",
    body: JSON.stringify({ model: "periscope-scripted", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "What does Periscope do?" }] })
  }
]

const load = (url: string, path: string, body: string, duration: number) =>
  new Promise<autocannon.Result>((done, fail) =>
    autocannon({
      url: url + path,
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body,
      connections,
      duration
    }, (error, result) => (error ? fail(error) : done(result))))

const servers = [
  await start("bare node:http", ["test/bench/support/bareHttpServer.ts", "$PORT"], {}),
  await start("Periscope (Node)", ["test/bench/support/periscopeBenchServer.ts", "$PORT", KEY], {})
]

console.log(`HTTP bench: ${connections} connections, ${seconds} s per run, ${process.version}, ${(await import("node:os")).cpus().length} cores\n`)
const rows: Array<Array<string>> = []
for (const endpoint of endpoints) {
  let bareRps = 0
  for (const server of servers) {
    await load(server.url, endpoint.path, endpoint.body, 2) // warm-up
    const result = await load(server.url, endpoint.path, endpoint.body, seconds)
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name} ${endpoint.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
    const rps = result.requests.average
    if (server === servers[0]) bareRps = rps
    rows.push([endpoint.name, server.name, rps.toFixed(0), result.latency.p50.toFixed(2), result.latency.p99.toFixed(2), (rps / bareRps).toFixed(2)])
  }
}
for (const server of servers) server.stop()

const header = ["endpoint", "server", "req/s", "p50 ms", "p99 ms", "vs bare"]
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
const line = (cells: Array<string>) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
console.log(line(header))
console.log(widths.map((w) => "-".repeat(w)).join("  "))
for (const row of rows) console.log(line(row))

// --- shared state and observability, side by side ---------------------------------------

const search = endpoints[0]!
const measure = async (name: string, config: unknown) => {
  const server = await start(name, ["test/bench/support/stateBenchServer.ts", "$PORT", KEY], { BENCH_CONFIG: JSON.stringify(config) })
  try {
    await load(server.url, search.path, search.body, 2) // warm-up
    const result = await load(server.url, search.path, search.body, seconds)
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
    return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
  } finally {
    server.stop()
  }
}

const pairs: Array<Array<string>> = []
const side = (a: Awaited<ReturnType<typeof measure>>, b: Awaited<ReturnType<typeof measure>>) => {
  pairs.push([a.name, a.rps.toFixed(0), a.p50.toFixed(2), a.p99.toFixed(2), "1.00"])
  pairs.push([b.name, b.rps.toFixed(0), b.p50.toFixed(2), b.p99.toFixed(2), (b.rps / a.rps).toFixed(3)])
}

const collector = await startCollector()
const off = await measure("metrics + tracing off", { observability: { metrics: { enabled: false } } })
const on = await measure("metrics + tracing on", { observability: { otlpEndpoint: collector.url } })
side(off, on)
const spansReceived = collector.spans.length
await collector.close()

let redisNote = ""
if (redisServerPath() === undefined) {
  redisNote = "redis-server is not installed: the Redis limiter run was skipped"
} else {
  const redis = await startRedis()
  try {
    const memory = await measure("limiter in memory (metrics on)", {})
    const shared = await measure("limiter in Redis", { store: { redisUrl: redis.url } })
    side(memory, shared)
  } finally {
    await redis.stop()
  }
}

console.log(`\nwebSearch, side by side (ratio: req/s against the first row of each pair)`)
const header2 = ["run", "req/s", "p50 ms", "p99 ms", "ratio"]
const widths2 = header2.map((h, i) => Math.max(h.length, ...pairs.map((r) => r[i]!.length)))
const line2 = (cells: Array<string>) => cells.map((c, i) => (i === 0 ? c.padEnd(widths2[i]!) : c.padStart(widths2[i]!))).join("  ")
console.log(line2(header2))
console.log(widths2.map((w) => "-".repeat(w)).join("  "))
for (const row of pairs) console.log(line2(row))
console.log(`(the collector received ${spansReceived} spans during the tracing run)`)
if (redisNote !== "") console.log(redisNote)
