/**
 * What an upstream request costs the gateway's process in its HTTP client alone: the CPU time
 * of this process per request, and requests/s, with `connections` requests in flight against
 * the mock upstream (test/support/mockUpstream.ts, 64-word whole answers, in its own process).
 * The clients, in rotating rounds (medians shown):
 * - node:http's request over a keep-alive agent, and Undici's `request` and `dispatch` APIs
 *   bare (the floors: no Effect, no error mapping);
 * - Effect's HttpClient over Undici (@effect/platform-node's `layerUndici`, what the Node
 *   server used before) and over node:http;
 * - the Node platform's client (adapters/node/undiciHttpClient.ts: an HttpClient over Undici's
 *   dispatch and a handler of ours; untraced, as here, it skips Effect's HttpClient.make).
 * Each Effect request runs as the upstream client sends it: tracing off, the body read whole.
 *
 *   node test/bench/upstreamClient.ts [--requests 10000] [--connections 32] [--rounds 3]
 */
import { Agent as HttpAgent, request as httpRequest } from "node:http"
import { cpus } from "node:os"
import { parseArgs } from "node:util"
import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Layer, References, Scope, Tracer } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { Agent, Pool } from "undici"
import * as UndiciHttpClient from "../../adapters/node/undiciHttpClient.ts"
import { alignedTable } from "./support/alignedTable.ts"
import { median } from "./support/stats.ts"
import { startUpstreamProcess } from "./support/upstreamProcess.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "10000" },
    connections: { type: "string", default: "32" },
    rounds: { type: "string", default: "3" }
  }
})
const requests = wholeNumberOption("--requests", values.requests)
const connections = wholeNumberOption("--connections", values.connections)
const rounds = wholeNumberOption("--rounds", values.rounds)

const upstream = await startUpstreamProcess(64)
const url = new URL(`${upstream.url}/chat/completions`)
const body = JSON.stringify({ model: "mock-model", stream: false, messages: [{ role: "user", content: "Tell me something in about sixty words." }] })
const headers = { "content-type": "application/json" }

const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 256 })
const undiciAgent = new Agent()
const pool = new Pool(url.origin)

const nodeHttp = () =>
  new Promise<string>((done, fail) => {
    const out = httpRequest(url, { method: "POST", agent: httpAgent, headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
      response.on("error", fail)
    })
    out.on("error", fail)
    out.end(body)
  })

const undiciRequest = async () => {
  const response = await undiciAgent.request({ origin: url.origin, path: url.pathname, method: "POST", headers, body })
  return response.body.text()
}

const undiciDispatch = () =>
  new Promise<string>((done, fail) => {
    const chunks: Array<Buffer> = []
    pool.dispatch({ origin: url.origin, path: url.pathname, method: "POST", headers, body }, {
      onRequestStart() {},
      onResponseStart() {},
      onResponseData(_controller, chunk) {
        chunks.push(chunk)
      },
      onResponseEnd() {
        done(Buffer.concat(chunks).toString("utf8"))
      },
      onResponseError(_controller, error) {
        fail(error)
      }
    })
  })

/** An Effect HttpClient from `layer`, kept open for the run; requests sent as OpenAiUpstream sends them. */
const effectClient = async (layer: Layer.Layer<HttpClient.HttpClient>) => {
  const scope = Effect.runSync(Scope.make())
  const client = Context.get(await Effect.runPromise(Layer.buildWithScope(layer, scope)), HttpClient.HttpClient)
  const request = HttpClientRequest.post(url.href).pipe(HttpClientRequest.bodyText(body, "application/json"))
  return () =>
    Effect.runPromise(client.execute(request).pipe(
      Effect.flatMap((response) => response.text),
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.provideService(Tracer.DisablePropagation, true),
      Effect.provideService(References.TracerEnabled, false)
    ))
}

const clients: ReadonlyArray<readonly [string, () => Promise<string>]> = [
  ["node:http request (bare)", nodeHttp],
  ["Undici request (bare)", undiciRequest],
  ["Undici dispatch (bare)", undiciDispatch],
  ["Effect HttpClient over Undici request (layerUndici)", await effectClient(NodeHttpClient.layerUndici)],
  ["Effect HttpClient over node:http (layerNodeHttp)", await effectClient(NodeHttpClient.layerNodeHttp)],
  ["Periscope's over Undici dispatch (untraced, the server's default)", await effectClient(UndiciHttpClient.layer)]
]

/** A run in which no request was answered for this long fails instead of hanging (one answer takes about a millisecond). */
const STALL_MS = 30_000

/** `count` requests, `connections` at a time: CPU µs of this process per request, and requests/s. */
const measure = async (send: () => Promise<string>, count: number) => {
  let next = 0
  let lastAnswer = performance.now()
  const worker = async () => {
    while (next++ < count) {
      const text = await send()
      lastAnswer = performance.now()
      if (!text.includes("word0")) throw new Error(`unexpected answer: ${text.slice(0, 120)}`)
    }
  }
  let watchdog: ReturnType<typeof setInterval> | undefined
  const stalled = new Promise<never>((_, fail) => {
    watchdog = setInterval(() => {
      if (performance.now() - lastAnswer > STALL_MS) fail(new Error(`no answer for ${STALL_MS} ms`))
    }, 1_000)
  })
  const cpuBefore = process.cpuUsage()
  const start = performance.now()
  try {
    await Promise.race([Promise.all(Array.from({ length: connections }, worker)), stalled])
  } finally {
    clearInterval(watchdog)
  }
  const cpu = process.cpuUsage(cpuBefore)
  return { cpuUs: (cpu.user + cpu.system) / count, perSecond: (count * 1000) / (performance.now() - start) }
}

console.log(`Upstream client cost: ${requests} requests x ${rounds} rotating rounds per client, ${connections} in flight, 64-word answers; ${process.version}, ${cpus().length} cores\n`)
for (const [, send] of clients) await measure(send, 2_000) // warm-up
const runs = clients.map(() => [] as Array<{ cpuUs: number; perSecond: number }>)
for (let round = 0; round < rounds; round++) {
  for (let k = 0; k < clients.length; k++) {
    const i = (k + round) % clients.length
    runs[i]!.push(await measure(clients[i]![1], requests))
  }
}
const rows = clients.map(([name], i) => {
  const cpu = median(runs[i]!.map((r) => r.cpuUs))
  return [name, cpu.toFixed(0), runs[i]!.map((r) => r.cpuUs.toFixed(0)).join(", "), median(runs[i]!.map((r) => r.perSecond)).toFixed(0)]
})
console.log(alignedTable(["client", "CPU µs/request (median)", "rounds", "requests/s"], rows))
const ours = median(runs[5]!.map((r) => r.cpuUs))
const effects = median(runs[3]!.map((r) => r.cpuUs))
console.log(`\nPeriscope's client: ${(effects / ours).toFixed(2)}x less CPU per request than Effect's over Undici's request API; ${(ours - median(runs[2]!.map((r) => r.cpuUs))).toFixed(0)} µs over bare dispatch`)
process.exit(0)
