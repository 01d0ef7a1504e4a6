/**
 * Where a request's CPU goes under load: the Node adapter's server answering chat and webSearch
 * after the work up to each stage (support/stageServer.ts: fixed answer, body parsed, decoded,
 * backend called, real answer, the express lane as served), beside the bare node:http server of
 * test/bench/http.ts doing the same backend work. Each server in its own process, driven by
 * autocannon from this one; the figure is the CPU time of the server's process per answered
 * request (Linux /proc), each round in fresh processes: the least of the rounds (some processes
 * run a third slower for their whole life; noise only adds) and their median. What each stage
 * adds is the difference of the least to the row above; a few µs either way is noise. In a loop
 * in one process the same requests cost a fraction of this (caches stay warm there), which is why
 * this is measured over HTTP.
 *
 *   node test/bench/requestStages.ts [--seconds 3] [--rounds 5] [--connections 32]
 */
import { parseArgs } from "node:util"
import { alignedTable } from "./support/alignedTable.ts"
import { benchRequests, loadWith } from "./support/benchRequests.ts"
import { startBenchServer } from "./support/benchServerProcess.ts"
import { cpuTimeUs } from "./support/processCpu.ts"
import { stages } from "./support/stageNames.ts"
import { median } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values } = parseArgs({ options: { seconds: { type: "string", default: "3" }, rounds: { type: "string", default: "5" }, connections: { type: "string", default: "32" } } })
const seconds = wholeNumberOption("--seconds", values.seconds)
const rounds = wholeNumberOption("--rounds", values.rounds)
const connections = wholeNumberOption("--connections", values.connections)
const endpoints = [{ name: "chat" as const, ...benchRequests.chat }, { name: "webSearch" as const, ...benchRequests.webSearch }]

console.log(`Request stages: ${connections} connections, ${rounds} rounds of ${seconds} s, a fresh process per server and round, ${process.version}\n`)
for (const endpoint of endpoints) {
  const servers = [
    ...stages.map((stage) => ({ name: stage as string, args: ["test/bench/support/stageServer.ts", "$PORT", endpoint.name, stage] })),
    { name: "bare node:http", args: ["test/bench/support/bareHttpServer.ts", "$PORT"] }
  ]
  const cpu = servers.map((): Array<number> => [])
  const rps = servers.map((): Array<number> => [])
  for (let round = 0; round < rounds; round++) {
    // A process keeps its JIT's and heap's luck for its life (the same code differed by up to 25%
    // between processes): every round starts fresh ones, in a rotating order.
    for (let k = 0; k < servers.length; k++) {
      const i = (k + round) % servers.length
      // Ready once it answers its endpoint 200: every stage serves it.
      const running = await startBenchServer(servers[i]!.name, servers[i]!.args, endpoint, { ready: (response) => response.ok })
      try {
        await loadWith(running.url, endpoint, connections, 2) // warm-up
        const cpuBefore = cpuTimeUs(running.pid)
        const result = await loadWith(running.url, endpoint, connections, seconds)
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${endpoint.name} ${servers[i]!.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        cpu[i]!.push((cpuTimeUs(running.pid) - cpuBefore) / result.requests.total)
        rps[i]!.push(result.requests.average)
      } finally {
        running.stop()
      }
    }
  }
  // Noise only adds, and some processes run a third slower for their whole life: the least of
  // the rounds is what a stage costs; what it adds is the difference of the least to the row above.
  const least = cpu.map((figures) => Math.min(...figures))
  const rows = servers.map((server, i) => {
    const added = i === 0 || server.name === "bare node:http" ? "-" : (least[i]! - least[i - 1]!).toFixed(1)
    return [server.name, median(rps[i]!).toFixed(0), least[i]!.toFixed(1), median(cpu[i]!).toFixed(1), added, cpu[i]!.map((x) => x.toFixed(0)).join(" ")]
  })
  console.log(endpoint.name)
  console.log(alignedTable(["stage", "req/s (median)", "CPU µs/request (least)", "(median)", "added µs (least)", "each round"], rows, { rule: true }))
  console.log("")
}
process.exit(0)
