/**
 * The Tavily and SearXNG wires against the search API on the same server and index:
 * `POST /api/search/webSearch`, `POST /tavily/search` (no page, answer or image option),
 * `GET /searxng/search?format=json` and the same as a POST form, each asking for the same
 * ten results, at the same concurrency, in rotating rounds on one server process (the Node
 * adapter as `npm start` runs it, fixture search).
 *
 *   node test/bench/wires.ts [--seconds 10] [--connections 32] [--rounds 3]
 *
 * Prints requests/s, server CPU per request and p50/p99 of each, and each wire's throughput as a
 * share of webSearch's (the median of the ratios paired within a round; target >= 0.90x).
 */
import { parseArgs } from "node:util"
import autocannon from "autocannon"
import { BENCH_KEY, benchHeaders, benchRequests } from "./support/benchRequests.ts"
import { startBenchServer } from "./support/benchServerProcess.ts"
import { cpuTimeUs } from "./support/processCpu.ts"
import { median } from "./support/stats.ts"

const { values } = parseArgs({ options: { seconds: { type: "string", default: "10" }, connections: { type: "string", default: "32" }, rounds: { type: "string", default: "3" } } })
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const rounds = Number(values.rounds)

const search = JSON.parse(benchRequests.webSearch.body) as { keywords: string; num: number }
const searxngQuery = new URLSearchParams({ q: search.keywords, format: "json" }).toString()
const bearer = { authorization: `Bearer ${BENCH_KEY}` }

interface Face {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
  /** The result links of an answer, to check that every face answers the same pages. */
  readonly links: (answer: any) => Array<string>
}

const faces = {
  webSearch: { method: "POST", path: benchRequests.webSearch.path, headers: benchHeaders, body: benchRequests.webSearch.body, links: (a) => a.data.organic.map((r: any) => r.link) },
  "tavily search": {
    method: "POST",
    path: "/tavily/search",
    headers: benchHeaders,
    body: JSON.stringify({ query: search.keywords, max_results: search.num }),
    links: (a) => a.results.map((r: any) => r.url)
  },
  "searxng GET": { method: "GET", path: `/searxng/search?${searxngQuery}`, headers: bearer, links: (a) => a.results.map((r: any) => r.url) },
  "searxng POST": {
    method: "POST",
    path: "/searxng/search",
    headers: { ...bearer, "content-type": "application/x-www-form-urlencoded" },
    body: searxngQuery,
    links: (a) => a.results.map((r: any) => r.url)
  }
} as const satisfies Record<string, Face>
type Name = keyof typeof faces
const names = Object.keys(faces) as Array<Name>

const load = (url: string, name: Name, conns: number, duration: number) =>
  new Promise<autocannon.Result>((done, fail) => {
    const face: Face = faces[name]
    autocannon({
      url: url + face.path,
      method: face.method,
      headers: face.headers,
      ...(face.body === undefined ? {} : { body: face.body }),
      connections: conns,
      duration
    }, (error, result) => error ? fail(error) : done(result))
  })

const server = await startBenchServer("Periscope (Node)", ["test/bench/support/periscopeBenchServer.ts", "$PORT", BENCH_KEY], {
  path: benchRequests.webSearch.path,
  body: "{\"keywords\":\"x\"}"
})
try {
  // Every face must answer the same pages before anything is timed.
  const links: Partial<Record<Name, Array<string>>> = {}
  for (const name of names) {
    const face: Face = faces[name]
    const response = await fetch(server.url + face.path, { method: face.method, headers: face.headers, ...(face.body === undefined ? {} : { body: face.body }) })
    if (response.status !== 200) throw new Error(`${name}: ${response.status} ${await response.text()}`)
    links[name] = face.links(await response.json())
  }
  const expected = JSON.stringify(links.webSearch)
  if (links.webSearch!.length === 0 || names.some((name) => JSON.stringify(links[name]) !== expected)) {
    throw new Error(`the faces answered differently: ${JSON.stringify(links)}`)
  }
  console.log(`Wires bench: the same search on one server, ${connections} connections, ${seconds} s per run, ${rounds} rounds, ${process.version}\n`)
  for (const name of names) await load(server.url, name, connections, 2)

  const results = Object.fromEntries(names.map((n) => [n, [] as Array<autocannon.Result>])) as Record<Name, Array<autocannon.Result>>
  const cpu = Object.fromEntries(names.map((n) => [n, [] as Array<number>])) as Record<Name, Array<number>>
  for (let round = 0; round < rounds; round++) {
    // Each round starts one face later, so no face always runs first or last.
    const order = names.map((_, i) => names[(i + round) % names.length]!)
    for (const name of order) {
      const before = cpuTimeUs(server.pid)
      const result = await load(server.url, name, connections, seconds)
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      results[name].push(result)
      cpu[name].push((cpuTimeUs(server.pid) - before) / result.requests.total)
    }
  }

  console.log("| face | requests/s | server CPU µs/request | p50 ms | p99 ms | / webSearch |")
  console.log("|---|---|---|---|---|---|")
  for (const name of names) {
    const rps = median(results[name].map((r) => r.requests.average))
    const ratio = median(results[name].map((r, i) => r.requests.average / results.webSearch[i]!.requests.average))
    const p50 = median(results[name].map((r) => r.latency.p50))
    const p99 = median(results[name].map((r) => r.latency.p99))
    console.log(`| ${name} | ${Math.round(rps)} | ${Math.round(median(cpu[name]))} | ${p50.toFixed(0)} | ${p99.toFixed(0)} | ${ratio.toFixed(2)}x |`)
  }
  console.log("\nTarget: each wire >= 0.90x webSearch's throughput.")
} finally {
  server.stop()
}
