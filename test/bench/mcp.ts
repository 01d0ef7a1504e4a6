/**
 * MCP against REST on the same server and index: `tools/call web_search` over
 * Streamable HTTP (POST /mcp) beside `POST /api/search/webSearch` with the same
 * query and result count, at the same concurrency, in rotating rounds on one
 * server process (the Node adapter as `npm start` runs it, fixture search).
 *
 *   node test/bench/mcp.ts [--seconds 10] [--connections 32] [--rounds 3]
 *
 * Prints requests/s and p50/p99 of each, MCP's throughput as a share of REST's
 * (the median of the ratios paired within a round) and the p50 MCP adds, both
 * under load and one request at a time.
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
const paths = {
  REST: { path: benchRequests.webSearch.path, body: benchRequests.webSearch.body, headers: benchHeaders },
  MCP: {
    path: "/mcp",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "web_search", arguments: { query: search.keywords, num: search.num } } }),
    headers: { ...benchHeaders, accept: "application/json, text/event-stream" }
  }
} as const
type Face = keyof typeof paths

const load = (url: string, face: Face, conns: number, duration: number) =>
  new Promise<autocannon.Result>((done, fail) => {
    const { path, body, headers } = paths[face]
    autocannon({ url: url + path, method: "POST", headers, body, connections: conns, duration }, (error, result) => error ? fail(error) : done(result))
  })

/** p50 in ms of `count` requests sent one after another on one keep-alive connection (autocannon rounds to whole ms). */
const sequentialP50 = async (url: string, face: Face, count: number): Promise<number> => {
  const { path, body, headers } = paths[face]
  const times: Array<number> = []
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    const response = await fetch(url + path, { method: "POST", headers, body })
    await response.arrayBuffer()
    times.push(performance.now() - start)
  }
  return median(times)
}

const server = await startBenchServer("Periscope (Node)", ["test/bench/support/periscopeBenchServer.ts", "$PORT", BENCH_KEY], {
  path: benchRequests.webSearch.path,
  body: "{\"keywords\":\"x\"}"
})
try {
  // Both faces must answer the same pages before anything is timed.
  const rest = await fetch(server.url + paths.REST.path, { method: "POST", headers: paths.REST.headers, body: paths.REST.body }).then((r) => r.json() as Promise<any>)
  const mcp = await fetch(server.url + paths.MCP.path, { method: "POST", headers: paths.MCP.headers, body: paths.MCP.body }).then((r) => r.json() as Promise<any>)
  const restLinks = rest.data.organic.map((r: any) => r.link)
  const mcpLinks = mcp.result.structuredContent.results.map((r: any) => r.url)
  if (mcp.result.isError || JSON.stringify(restLinks) !== JSON.stringify(mcpLinks) || restLinks.length === 0) {
    throw new Error(`MCP and REST answered differently: ${JSON.stringify({ restLinks, mcp })}`)
  }
  console.log(`MCP bench: web_search on the same server, ${connections} connections, ${seconds} s per run, ${rounds} rounds, ${process.version}\n`)
  for (const face of ["REST", "MCP"] as const) await load(server.url, face, connections, 2)

  const results: Record<Face, Array<autocannon.Result>> = { REST: [], MCP: [] }
  const cpu: Record<Face, Array<number>> = { REST: [], MCP: [] }
  const sequential: Record<Face, Array<number>> = { REST: [], MCP: [] }
  for (let round = 0; round < rounds; round++) {
    const order: ReadonlyArray<Face> = round % 2 === 0 ? ["REST", "MCP"] : ["MCP", "REST"]
    for (const face of order) {
      const before = cpuTimeUs(server.pid)
      const result = await load(server.url, face, connections, seconds)
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${face}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      results[face].push(result)
      cpu[face].push((cpuTimeUs(server.pid) - before) / result.requests.total)
    }
    for (const face of order) sequential[face].push(await sequentialP50(server.url, face, 2000))
  }

  const row = (face: Face) => {
    const rps = median(results[face].map((r) => r.requests.average))
    const p50 = median(results[face].map((r) => r.latency.p50))
    const p99 = median(results[face].map((r) => r.latency.p99))
    const one = median(sequential[face])
    return { face, rps, p50, p99, one, cpu: median(cpu[face]) }
  }
  const rows = [row("REST"), row("MCP")]
  const ratio = median(results.MCP.map((r, i) => r.requests.average / results.REST[i]!.requests.average))
  const addedLoaded = median(results.MCP.map((r, i) => r.latency.p50 - results.REST[i]!.latency.p50))
  const addedOne = median(sequential.MCP.map((p50, i) => p50 - sequential.REST[i]!))
  console.log("| face | requests/s | server CPU µs/request | p50 ms | p99 ms | p50 ms, one at a time |")
  console.log("|---|---|---|---|---|---|")
  for (const r of rows) console.log(`| ${r.face} | ${Math.round(r.rps)} | ${Math.round(r.cpu)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ${r.one.toFixed(3)} |`)
  console.log(`\nMCP / REST throughput: ${ratio.toFixed(2)}x (target >= 0.80x)`)
  console.log(`p50 MCP adds: ${addedLoaded.toFixed(0)} ms at ${connections} connections (autocannon's whole ms), ${addedOne.toFixed(3)} ms one at a time (target < 1 ms)`)
} finally {
  server.stop()
}
