/**
 * A change to the request path, measured: the server's CPU time per request
 * and requests per second of a git revision's code and the working tree's,
 * both served by one process (test/bench/support/abHttpServer.ts: one JIT, one
 * heap), driven in turn by autocannon in rotating rounds.
 *
 *   node test/bench/httpAB.ts <revision> [--endpoint chat|webSearch] [--seconds 4] [--rounds 6] [--connections 32]
 *
 * Why not test/bench/http.ts: it starts a process per server, and separate
 * processes running the same code differed by up to 25% in CPU per request
 * on this machine (JIT and heap luck that stays for the process's life),
 * which hides a 10% change. Here the rounds of one tree agree within a few
 * percent. The revision's core/, adapters/ and test/ are extracted under .cache/
 * (its imports find node_modules there) and removed after the run.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { freePort } from "../support/servers.ts"
import { alignedTable } from "./support/alignedTable.ts"
import { BENCH_KEY, type BenchRequest, benchRequests, loadWith } from "./support/benchRequests.ts"
import { cpuTimeUs } from "./support/processCpu.ts"
import { median } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    endpoint: { type: "string", default: "chat" },
    seconds: { type: "string", default: "4" },
    rounds: { type: "string", default: "6" },
    connections: { type: "string", default: "32" }
  }
})
const [revision] = positionals
if (revision === undefined) throw new Error("usage: httpAB.ts <revision> [--endpoint chat|webSearch] [--seconds 4] [--rounds 6] [--connections 32]")
const endpoint: BenchRequest | undefined = benchRequests[values.endpoint as keyof typeof benchRequests]
if (endpoint === undefined) throw new Error(`--endpoint must be chat or webSearch; got ${values.endpoint}`)
const seconds = wholeNumberOption("--seconds", values.seconds)
const rounds = wholeNumberOption("--rounds", values.rounds)
const connections = wholeNumberOption("--connections", values.connections)
const root = resolve(import.meta.dirname, "../..")

mkdirSync(join(root, ".cache"), { recursive: true })
const folder = mkdtempSync(join(root, ".cache", "http-ab-"))
const trees = [{ name: revision, root: folder }, { name: "working tree", root }]
let server: ReturnType<typeof spawn> | undefined
try {
  execFileSync("sh", ["-c", `git -C "${root}" archive "${revision}" core adapters test | tar -x -C "${folder}"`], { timeout: 60_000 })
  const ports = await Promise.all(trees.map(() => freePort()))
  const child = spawn(process.execPath, [join(root, "test/bench/support/abHttpServer.ts"), BENCH_KEY, ...trees.map((t, i) => `${t.root}:${ports[i]}`)], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  server = child
  // Bounded: a server that neither listens nor exits must not hang the bench.
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error("the server did not listen within 60 s")), 60_000)
    child.stdout!.on("data", (data) => {
      if (!String(data).includes("listening")) return
      clearTimeout(timer)
      ready()
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      fail(new Error(`the server exited (${code}) before listening`))
    })
  })
  const load = (url: string, duration: number) => loadWith(url, endpoint, connections, duration)
  const urls = ports.map((port) => `http://127.0.0.1:${port}`)
  for (const url of urls) await load(url, 3) // warm-up
  const runs = trees.map(() => [] as Array<{ rps: number; cpuUs: number }>)
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < trees.length; k++) {
      const i = (k + round) % trees.length
      const before = cpuTimeUs(child.pid!)
      const result = await load(urls[i]!, seconds)
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${trees[i]!.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      runs[i]!.push({ rps: result.requests.average, cpuUs: (cpuTimeUs(child.pid!) - before) / result.requests.total })
    }
  }
  console.log(`${values.endpoint}: ${rounds} rotating rounds of ${seconds} s, ${connections} connections, ${process.version}; medians of the rounds, ratios paired within a round`)
  console.log(alignedTable(
    ["tree", "req/s", "CPU µs/request", "req/s vs revision", "CPU vs revision", "CPU per round"],
    trees.map((tree, i) => [
      tree.name,
      median(runs[i]!.map((r) => r.rps)).toFixed(0),
      median(runs[i]!.map((r) => r.cpuUs)).toFixed(1),
      median(runs[i]!.map((r, round) => r.rps / runs[0]![round]!.rps)).toFixed(3),
      median(runs[i]!.map((r, round) => r.cpuUs / runs[0]![round]!.cpuUs)).toFixed(3),
      runs[i]!.map((r) => r.cpuUs.toFixed(0)).join(" ")
    ])
  ))
} finally {
  server?.kill("SIGTERM")
  rmSync(folder, { recursive: true, force: true })
}
