/**
 * Gateway overhead, in one run against the same local OpenAI-compatible
 * upstream (test/support/mockUpstream.ts in its own process): the upstream
 * called directly, through Periscope, through a bare node:http proxy (the
 * floor of any gateway on Node's HTTP server and client:
 * test/bench/support/bareProxy.ts), through a TCP pipe that reads no HTTP (the
 * floor under it: support/tcpPipe.ts) and through the Portkey gateway (npm
 * @portkey-ai/gateway, on loopback).
 *
 *   node test/bench/gateway.ts [--seconds 8] [--connections 32] [--samples 2000]
 *
 * - throughput: non-streaming requests per second at `connections` in flight (autocannon), and
 *   the CPU time the gateway's process and the upstream's spent per request in that run (Linux);
 *   then the same for streamed requests (each answer read to its [DONE]);
 * - added latency: p50/p99 of one request at a time, minus the direct path's (2,000 requests a
 *   path: the p99 of 400 was their 4th-worst, and two runs of the same code gave -0.79 and 4.58 ms),
 *   timed by a lean client (support/leanHttpClient.ts) instead of fetch, whose own collections
 *   and compile jobs slowed every path's tail;
 * - added time to first chunk: streaming, one at a time, first SSE data event (p50 and p99,
 *   minus the direct path's: the streaming half of the added-p99 target);
 * - streams at a model server's pace: a second upstream process writes each event alone, 1 ms
 *   apart, as model servers send tokens (the first upstream sends a whole answer in one write,
 *   which puts every chunk of a stream in one array and hides what each chunk costs): streams
 *   per second and CPU per stream, direct, through Periscope and through the bare proxy.
 * Each server is its own process; two cores: compare ratios and differences.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import autocannon from "autocannon"
import { hashKey } from "../../core/auth/KeyRecord.ts"
import { freePort } from "../support/servers.ts"
import { alignedTable } from "./support/alignedTable.ts"
import { type LeanConnection, leanConnection } from "./support/leanHttpClient.ts"
import { cpuTimeUs } from "./support/processCpu.ts"
import { startUpstreamProcess } from "./support/upstreamProcess.ts"
import { percentile } from "./support/stats.ts"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "32" },
    samples: { type: "string", default: "2000" }
  }
})
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const samples = Number(values.samples)
const root = resolve(import.meta.dirname, "../..")
const KEY = "bench-key"

const children: Array<ChildProcess> = []
// Stopped however the run ends: a failed check or an uncaught error must not leave servers behind.
process.on("exit", () => {
  for (const child of children) child.kill("SIGTERM")
})
/** A measured request that gets no answer fails the run instead of hanging it. */
const REQUEST_TIMEOUT_MS = 30_000
const spawnNode = (args: Array<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  let output = ""
  child.stdout!.on("data", (d) => { output += d })
  child.stderr!.on("data", (d) => { output += d })
  return { child, output: () => output }
}
/** Polls `check` (each try bounded: a request sent while a server starts may never be answered). */
const until = async (what: string, check: (signal: AbortSignal) => Promise<boolean>, output: () => string) => {
  for (let i = 0; i < 300; i++) {
    if (await check(AbortSignal.timeout(2000)).catch(() => false)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${what} did not start:\n${output()}`)
}

// The upstream: 64-word answers, no delays, recording off; and one that paces its events.
const PACE_MS = 1
const [upstream, pacedUpstream] = await Promise.all([startUpstreamProcess(64), startUpstreamProcess(64, { chunkDelayMs: PACE_MS })])
const upstreamUrl = upstream.url

// Periscope: one model routed to the upstream; a key whose limit the run cannot reach.
const dataDir = mkdtempSync(join(tmpdir(), "periscope-gateway-bench-"))
process.on("exit", () => rmSync(dataDir, { recursive: true, force: true }))
writeFileSync(join(dataDir, "keys.json"), JSON.stringify({ keys: [{ name: "bench", sha256: hashKey(KEY), requestsPerMinute: 1_000_000_000 }] }))
writeFileSync(join(dataDir, "config.json"), JSON.stringify({
  chat: {
    upstreams: { mock: { baseUrl: upstreamUrl, preset: "passthrough" }, paced: { baseUrl: pacedUpstream.url, preset: "passthrough" } },
    models: [
      { name: "bench-model", targets: [{ upstream: "mock", model: "mock-model" }] },
      { name: "bench-model-paced", targets: [{ upstream: "paced", model: "mock-model" }] }
    ]
  }
}))
const periscopePort = await freePort()
const periscope = spawnNode(["adapters/node/main.ts"], {
  PORT: String(periscopePort),
  PERISCOPE_DATA_DIR: dataDir,
  PERISCOPE_KEYS_FILE: join(dataDir, "keys.json"),
  PERISCOPE_CONFIG: join(dataDir, "config.json")
})
await until("Periscope", async (signal) => (await fetch(`http://127.0.0.1:${periscopePort}/healthz`, { signal })).ok, periscope.output)

// Portkey: the OpenAI provider pointed at the same upstream with a custom host.
const portkeyPort = await freePort()
const portkey = spawnNode([resolve(root, "node_modules/@portkey-ai/gateway/build/start-server.js"), `--port=${portkeyPort}`, "--headless"], { NODE_ENV: "production" })
await until("Portkey", async (signal) => (await fetch(`http://127.0.0.1:${portkeyPort}/`, { signal })).ok, portkey.output)

/** A process between the client and an upstream (`script <port> ...args`), ready once its URL answers. */
const startBetween = async (what: string, script: string, args: Array<string>, path: string) => {
  const port = await freePort()
  const between = spawnNode([script, String(port), ...args], {})
  const url = `http://127.0.0.1:${port}${path}`
  await until(what, async (signal) => (await fetch(url, { method: "POST", body: "{}", signal })).status < 500, between.output)
  return { pid: between.child.pid, url }
}
// The floor: a bare node:http proxy (parse, set the model, forward, pipe back), what any gateway on Node's HTTP stack pays.
const startBareProxy = (what: string, upstreamBase: string) =>
  startBetween(what, "test/bench/support/bareProxy.ts", [upstreamBase, "mock-model"], "/v1/chat/completions")
// Under the floor: a TCP pipe that moves the bytes without reading HTTP (what a second process on the way costs).
const startTcpPipe = (what: string, upstreamBase: string) =>
  startBetween(what, "test/bench/support/tcpPipe.ts", [upstreamBase], `${new URL(upstreamBase).pathname}/chat/completions`)
const bareProxy = await startBareProxy("bare proxy", upstreamUrl)
const pacedProxy = await startBareProxy("bare proxy (paced)", pacedUpstream.url)
const tcpPipe = await startTcpPipe("TCP pipe", upstreamUrl)
const pacedPipe = await startTcpPipe("TCP pipe (paced)", pacedUpstream.url)

interface Path {
  readonly name: string
  /** The gateway's process (none for the direct path). */
  readonly pid: number | undefined
  readonly url: string
  readonly headers: Record<string, string>
  readonly model: string
}
const paths: Array<Path> = [
  { name: "direct", pid: undefined, url: `${upstreamUrl}/chat/completions`, headers: { "content-type": "application/json" }, model: "mock-model" },
  {
    name: "Periscope",
    pid: periscope.child.pid,
    url: `http://127.0.0.1:${periscopePort}/v1/chat/completions`,
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
    model: "bench-model"
  },
  {
    name: "bare node:http proxy",
    pid: bareProxy.pid,
    url: bareProxy.url,
    headers: { "content-type": "application/json" },
    model: "bench-model"
  },
  {
    name: "TCP pipe (no HTTP)",
    pid: tcpPipe.pid,
    url: tcpPipe.url,
    headers: { "content-type": "application/json" },
    model: "mock-model"
  },
  {
    name: "Portkey",
    pid: portkey.child.pid,
    url: `http://127.0.0.1:${portkeyPort}/v1/chat/completions`,
    headers: {
      "content-type": "application/json",
      authorization: "Bearer unused",
      "x-portkey-provider": "openai",
      "x-portkey-custom-host": upstreamUrl
    },
    model: "mock-model"
  }
]
const bodyOf = (path: Path, stream: boolean) =>
  JSON.stringify({ model: path.model, stream, messages: [{ role: "user", content: "Tell me something in about sixty words." }] })

// Every path must answer the same thing before we time it.
for (const path of paths) {
  const response = await fetch(path.url, { method: "POST", headers: path.headers, body: bodyOf(path, false), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  const body = await response.json() as any
  if (!response.ok || !String(body.choices?.[0]?.message?.content).startsWith("word0")) {
    throw new Error(`${path.name} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`)
  }
}

const load = (path: Path, stream = false) =>
  new Promise<autocannon.Result>((done, fail) =>
    autocannon({ url: path.url, method: "POST", headers: path.headers, body: bodyOf(path, stream), connections, duration: seconds }, (error, result) =>
      error ? fail(error) : done(result)))

/** A throughput run, with the CPU time the gateway's process and the upstream's spent per request. */
const throughput = async (path: Path, stream = false, upstreamPid = upstream.pid) => {
  const gatewayBefore = path.pid === undefined ? 0 : cpuTimeUs(path.pid)
  const upstreamBefore = cpuTimeUs(upstreamPid)
  const result = await load(path, stream)
  const requests = Math.max(1, result.requests.total)
  return {
    result,
    gatewayCpuUs: path.pid === undefined ? undefined : (cpuTimeUs(path.pid) - gatewayBefore) / requests,
    upstreamCpuUs: (cpuTimeUs(upstreamPid) - upstreamBefore) / requests
  }
}


/** The first SSE data event's bytes: where the time to the first chunk stops. */
const FIRST_EVENT = Buffer.from("data: {")

/**
 * One request: its whole latency, or the time to its first SSE data event. Timed with a lean
 * client (one keep-alive socket a path, the request's bytes built once): over `fetch`, the
 * bench's own collections and compile jobs ran beside the servers it timed and were the most
 * frequent cause of its slowest requests (docs/performance.md, where the gateway's sequential p99 goes).
 */
const once = async (connection: LeanConnection, path: Path, stream: boolean): Promise<number> => {
  const answer = await connection.send(stream ? FIRST_EVENT : undefined, REQUEST_TIMEOUT_MS)
  if (answer.status !== 200) throw new Error(`${path.name} answered ${answer.status}: ${answer.body.slice(0, 120)}`)
  if (!stream) return answer.total
  if (!answer.body.includes("data: [DONE]")) throw new Error(`stream without [DONE]: ${answer.body.slice(0, 120)}`)
  return answer.first!
}

/**
 * One request at a time, the paths taking turns, so that every path sees the
 * same machine: p50 and p99 per path. A path whose streaming fails is dropped
 * from the turns and reported.
 */
const sequential = async (stream: boolean) => {
  const times = new Map<string, Array<number>>(paths.map((p) => [p.name, []]))
  const failures = new Map<string, string>()
  const sockets = paths.map((path) => leanConnection({ url: path.url, headers: path.headers, body: bodyOf(path, stream) }))
  for (let i = 0; i < samples + 20; i++) {
    for (const [k, path] of paths.entries()) {
      if (failures.has(path.name)) continue
      try {
        const t = await once(sockets[k]!, path, stream)
        if (i >= 20) times.get(path.name)!.push(t)
      } catch (error) {
        failures.set(path.name, (error as Error).message)
      }
    }
  }
  for (const socket of sockets) socket.close()
  const result = new Map<string, { p50: number; p99: number } | string>()
  for (const path of paths) {
    const sorted = times.get(path.name)!.sort((a, b) => a - b)
    result.set(path.name, failures.get(path.name) ?? { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) })
  }
  return result
}

interface Row {
  name: string
  rps: number
  /** Streamed requests per second; undefined when the path's streaming fails. */
  streamRps: number | undefined
  streamCpuUs: number | undefined
  gatewayCpuUs: number | undefined
  upstreamCpuUs: number
  p50: number
  p99: number
  ttfc50: number | undefined
  ttfc99: number | undefined
  errors: number
}
const rows: Array<Row> = []
const streamFailures: Array<string> = []
const runs = new Map<string, Awaited<ReturnType<typeof throughput>>>()
const streamRuns = new Map<string, Awaited<ReturnType<typeof throughput>>>()
for (const path of paths) {
  await load(path).catch(() => undefined) // warm-up
  runs.set(path.name, await throughput(path))
}
for (const path of paths) {
  await load(path, true).catch(() => undefined) // warm-up
  streamRuns.set(path.name, await throughput(path, true))
}
const latency = await sequential(false)
const firstChunk = await sequential(true)

// Streams at a model server's pace: Portkey is left out, its streaming fails (noted below).
const pathNamed = (name: string) => paths.find((path) => path.name === name)!
const pacedPaths: Array<Path> = [
  { ...pathNamed("direct"), url: `${pacedUpstream.url}/chat/completions` },
  { ...pathNamed("Periscope"), model: "bench-model-paced" },
  { ...pathNamed("bare node:http proxy"), pid: pacedProxy.pid, url: pacedProxy.url },
  { ...pathNamed("TCP pipe (no HTTP)"), pid: pacedPipe.pid, url: pacedPipe.url }
]
const pacedRuns: Array<{ readonly path: Path; readonly run: Awaited<ReturnType<typeof throughput>> }> = []
for (const path of pacedPaths) {
  await load(path, true).catch(() => undefined) // warm-up
  const run = await throughput(path, true, pacedUpstream.pid)
  if (run.result.non2xx + run.result.errors > 0) throw new Error(`${path.name}, paced streams: ${run.result.non2xx} non-2xx, ${run.result.errors} errors`)
  pacedRuns.push({ path, run })
}
for (const path of paths) {
  const run = runs.get(path.name)!
  const whole = latency.get(path.name)!
  if (typeof whole === "string") throw new Error(`${path.name}: ${whole}`)
  const ttfc = firstChunk.get(path.name)!
  // A path whose streaming fails is reported, not hidden (Portkey's, see the note below).
  if (typeof ttfc === "string") streamFailures.push(`${path.name}: streaming failed: ${ttfc}`)
  const streamRun = streamRuns.get(path.name)!
  const streamOk = typeof ttfc !== "string" && streamRun.result.non2xx + streamRun.result.errors === 0
  rows.push({
    name: path.name,
    rps: run.result.requests.average,
    streamRps: streamOk ? streamRun.result.requests.average : undefined,
    streamCpuUs: streamOk ? streamRun.gatewayCpuUs : undefined,
    gatewayCpuUs: run.gatewayCpuUs,
    upstreamCpuUs: run.upstreamCpuUs,
    p50: whole.p50,
    p99: whole.p99,
    ttfc50: typeof ttfc === "string" ? undefined : ttfc.p50,
    ttfc99: typeof ttfc === "string" ? undefined : ttfc.p99,
    errors: run.result.non2xx + run.result.errors
  })
}

const direct = rows[0]!
console.log(`Gateway bench: ${connections} connections for ${seconds} s (throughput); ${samples} sequential requests (latency, first chunk); ${process.version}, ${cpus().length} cores\n`)
const header = ["path", "req/s", "vs direct", "gateway CPU µs/req", "upstream CPU µs/req", "streamed req/s", "vs direct", "gateway CPU µs/stream", "p50 ms", "p99 ms", "added p50", "added p99", "TTFC p50", "added TTFC p50", "added TTFC p99", "errors"]
const table = rows.map((r) => [
  r.name,
  r.rps.toFixed(0),
  (r.rps / direct.rps).toFixed(2),
  r.gatewayCpuUs === undefined ? "-" : r.gatewayCpuUs.toFixed(0),
  r.upstreamCpuUs.toFixed(0),
  r.streamRps === undefined ? "failed" : r.streamRps.toFixed(0),
  r.streamRps === undefined ? "-" : (r.streamRps / direct.streamRps!).toFixed(2),
  r.streamCpuUs === undefined ? "-" : r.streamCpuUs.toFixed(0),
  r.p50.toFixed(3),
  r.p99.toFixed(3),
  r === direct ? "-" : (r.p50 - direct.p50).toFixed(3),
  r === direct ? "-" : (r.p99 - direct.p99).toFixed(3),
  r.ttfc50 === undefined ? "failed" : r.ttfc50.toFixed(3),
  r === direct ? "-" : r.ttfc50 === undefined ? "failed" : (r.ttfc50 - direct.ttfc50!).toFixed(3),
  r === direct ? "-" : r.ttfc99 === undefined ? "failed" : (r.ttfc99 - direct.ttfc99!).toFixed(3),
  String(r.errors)
])
console.log(alignedTable(header, table, { rule: true }))
const periscopeRow = rows.find((r) => r.name === "Periscope")!
const portkeyRow = rows.find((r) => r.name === "Portkey")!
const floorRow = rows.find((r) => r.name === "bare node:http proxy")!
const pipeRow = rows.find((r) => r.name === "TCP pipe (no HTTP)")!
for (const failure of streamFailures) console.log(`\n${failure}`)
if (streamFailures.some((f) => f.startsWith("Portkey"))) {
  console.log("  (Portkey answers {\"status\":\"failure\"} and logs \"TypeError: immutable\" from ResponseService.updateHeaders: Portkey-AI/gateway issues #1389 and #1550.)")
}
console.log(`\nPeriscope vs Portkey throughput: ${(periscopeRow.rps / portkeyRow.rps).toFixed(2)}x; Periscope added p50: ${(periscopeRow.p50 - direct.p50).toFixed(3)} ms`)
console.log(`Periscope vs the bare node:http proxy (the floor of a Node gateway): ${(periscopeRow.rps / floorRow.rps).toFixed(2)}x its throughput; the floor itself ${(floorRow.rps / direct.rps).toFixed(2)}x direct, added p99 ${(floorRow.p99 - direct.p99).toFixed(3)} ms, added TTFC p99 ${floorRow.ttfc99 === undefined ? "failed" : (floorRow.ttfc99 - direct.ttfc99!).toFixed(3)} ms`)
console.log(`Under the floor, a TCP pipe (bytes moved, no HTTP read): ${(pipeRow.rps / direct.rps).toFixed(2)}x direct at ${pipeRow.gatewayCpuUs!.toFixed(0)} µs of CPU a request, against the bare proxy's ${floorRow.gatewayCpuUs!.toFixed(0)}: what Node's HTTP server and client cost`)
const streamedShare = (row: Row) => (row.streamRps === undefined || direct.streamRps === undefined ? "failed" : `${(row.streamRps / direct.streamRps).toFixed(2)}x`)
console.log(`Streamed (the whole answer read): Periscope ${streamedShare(periscopeRow)} direct, the bare proxy ${streamedShare(floorRow)}`)
const pacedRun = (name: string) => pacedRuns.find((r) => r.path.name === name)!.run
const pacedDirectRps = pacedRun("direct").result.requests.average
const pacedProxyCpu = pacedRun("bare node:http proxy").gatewayCpuUs!
console.log(`\nStreams at a model server's pace (64 words, each event written alone ${PACE_MS} ms after the last; ${connections} in flight):\n`)
console.log(alignedTable(["path", "streams/s", "vs direct", "gateway CPU µs/stream", "vs the proxy's", "upstream CPU µs/stream"], pacedRuns.map(({ path, run }) => [
  path.name,
  run.result.requests.average.toFixed(0),
  (run.result.requests.average / pacedDirectRps).toFixed(2),
  run.gatewayCpuUs === undefined ? "-" : run.gatewayCpuUs.toFixed(0),
  run.gatewayCpuUs === undefined ? "-" : `${(run.gatewayCpuUs / pacedProxyCpu).toFixed(2)}x`,
  run.upstreamCpuUs.toFixed(0)
]), { rule: true }))
process.exit(0)
