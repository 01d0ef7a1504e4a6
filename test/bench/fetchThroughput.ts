/**
 * webFetch throughput on ordinary pages: Debian documentation pages served from a loopback site,
 * read through the real Node server (a child process, its page cache off) by clients that ask
 * for one page after another; pages per second and latency, at 1 client and at 4. Given other
 * checkouts (`--tree DIR`, each with its own node_modules), each is run the same way, in
 * alternating rounds, so that a slow stretch of a shared machine lands on every side; the ratio
 * to the first tree is the median of the rounds'.
 *
 * Then the cost of the hop to a job worker, in this checkout, in one process: the same pages
 * read by ReadablePage on this thread, through the Node server's job runner (a job process) and
 * through the same pool on a worker thread, one at a time; the difference per page is what the
 * hop costs a request.
 *
 *   node test/bench/fetchThroughput.ts                          this checkout
 *   node test/bench/fetchThroughput.ts --tree /work/baseline    this checkout and another
 *   options: --pages N (200), --seconds S per round (20), --rounds R (3), --no-hop, --hop-only
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { nodeJobWorkers, nodeWorkerPool } from "../../adapters/node/jobThreads.ts"
import { pooledRunner } from "../../core/jobs/JobRunner.ts"
import { DEFAULT_PAGE_LIMITS } from "../../core/ingest/PageLimits.ts"
import { readablePage, readPageJob } from "../../core/ingest/ReadablePage.ts"
import { type DocPage, loadDebianDocs } from "../support/debianDocs.ts"
import { freePort } from "../support/servers.ts"
import { median, percentile } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? wholeNumberOption(name, process.argv[at + 1]) : fallback
}
const here = resolve(import.meta.dirname, "../..")
const trees = [here, ...process.argv.flatMap((arg, i) => (arg === "--tree" ? [resolve(process.argv[i + 1]!)] : []))]
const pageCount = option("--pages", 200)
const seconds = option("--seconds", 20)
const rounds = option("--rounds", 3)
const KEY = "bench-key-0123456789"

const corpus = loadDebianDocs()
if (corpus._tag === "Missing") {
  console.error(`Debian documentation corpus unavailable: ${corpus.reason}`)
  process.exit(process.env.CI === "true" ? 1 : 0)
}
const stride = corpus.pages.length / pageCount
const pages: Array<DocPage> = Array.from({ length: pageCount }, (_, i) => corpus.pages[Math.floor(i * stride)]!)
const bodies = pages.map((page) => readFileSync(page.file))

// The site: page i at /p/i.html.
const site = createServer((request, response) => {
  const i = Number(/^\/p\/(\d+)\.html$/.exec(request.url ?? "")?.[1] ?? -1)
  const body = bodies[i]
  if (body === undefined) {
    response.writeHead(404).end()
    return
  }
  response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
  response.end(body)
})
await new Promise<void>((done) => site.listen(0, "127.0.0.1", done))
const sitePort = (site.address() as AddressInfo).port

interface Server {
  readonly tree: string
  readonly url: string
  readonly pid: number
  stop(): Promise<void>
}

/** A tree's Node server (`adapters/node/main.ts` run in that tree) with webFetch open to the site and its cache off. */
const startServer = async (tree: string): Promise<Server> => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-fetch-bench-"))
  writeFileSync(join(dir, "docs.jsonl"), `${JSON.stringify({ url: "https://example.com/", title: "Example", text: "An example page." })}\n`)
  writeFileSync(join(dir, "config.json"), JSON.stringify({
    rateLimitPerMinute: 100_000_000,
    search: { backend: "fixture", documents: join(dir, "docs.jsonl") },
    fetch: { allowHosts: [`127.0.0.1:${sitePort}`], cacheTtlSeconds: 0 }
  }))
  const port = await freePort()
  const child = spawn(process.execPath, ["adapters/node/main.ts"], {
    cwd: tree,
    env: { ...process.env, PORT: String(port), PERISCOPE_API_KEYS: KEY, PERISCOPE_CONFIG: join(dir, "config.json"), PERISCOPE_DATA_DIR: join(dir, "data"), NO_COLOR: "1" },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let errors = ""
  child.stderr!.on("data", (chunk) => void (errors += String(chunk)))
  const url = `http://127.0.0.1:${port}`
  for (const started = Date.now(); ; await new Promise((r) => setTimeout(r, 100))) {
    if (child.exitCode !== null) throw new Error(`the server in ${tree} exited: ${errors}`)
    if (Date.now() - started > 120_000) throw new Error(`the server in ${tree} did not start: ${errors}`)
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break
  }
  return {
    tree,
    url,
    pid: child.pid!,
    stop: async () => {
      const exited = new Promise((done) => child.once("exit", done))
      child.kill("SIGTERM")
      await exited
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

const fetchPage = async (server: Server, i: number): Promise<boolean> => {
  const response = await fetch(`${server.url}/api/search/webFetch`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ url: `http://127.0.0.1:${sitePort}/p/${i % pageCount}.html` })
  })
  const body = await response.json() as { success?: boolean }
  return response.status === 200 && body.success === true
}

interface Round {
  readonly pagesPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly failed: number
}

/** `clients` clients, each asking for the next page as soon as the last one is answered, for `seconds`. */
const round = async (server: Server, clients: number): Promise<Round> => {
  const latencies: Array<number> = []
  let failed = 0
  let next = 0
  const until = performance.now() + seconds * 1000
  const started = performance.now()
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < until) {
      const sent = performance.now()
      const ok = await fetchPage(server, next++)
      latencies.push(performance.now() - sent)
      if (!ok) failed++
    }
  }))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return { pagesPerSecond: (latencies.length - failed) / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), failed }
}

const pad = (s: string, n: number) => s.padEnd(n)
console.log(`webFetch throughput: ${pageCount} Debian documentation pages (${(bodies.reduce((n, b) => n + b.length, 0) / 1e6).toFixed(1)} MB), ` +
  `the server as a child process, page cache off, ${seconds} s per round, ${rounds} rounds`)
console.log(`Node ${process.version}, ${availableParallelism()} cores, load average ${loadavg().map((n) => n.toFixed(2)).join(" ")}\n`)

const servers: Array<Server> = []
if (!process.argv.includes("--hop-only")) try {
  for (const tree of trees) servers.push(await startServer(tree))
  // Warm: every page once through every server (its reader compiled, its workers started).
  for (const server of servers) for (let i = 0; i < pageCount; i++) await fetchPage(server, i)
  for (const clients of [1, 4]) {
    const results = new Map<string, Array<Round>>(trees.map((tree) => [tree, []]))
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? servers : [...servers].reverse()
      for (const server of order) results.get(server.tree)!.push(await round(server, clients))
    }
    console.log(`${clients} client${clients === 1 ? "" : "s"}:`)
    console.log(`${pad("tree", 40)}${pad("pages/s (rounds)", 34)}${pad("p50 ms", 9)}${pad("p99 ms", 9)}${pad("failed", 8)}vs first`)
    const first = results.get(trees[0]!)!
    for (const tree of trees) {
      const runs = results.get(tree)!
      const ratios = runs.map((run, i) => run.pagesPerSecond / first[i]!.pagesPerSecond)
      console.log(pad(tree, 40) + pad(`${median(runs.map((x) => x.pagesPerSecond)).toFixed(1)} (${runs.map((x) => x.pagesPerSecond.toFixed(1)).join(", ")})`, 34) +
        pad(median(runs.map((x) => x.p50)).toFixed(1), 9) + pad(median(runs.map((x) => x.p99)).toFixed(1), 9) +
        pad(String(runs.reduce((n, x) => n + x.failed, 0)), 8) + `${median(ratios).toFixed(2)}x (${ratios.map((x) => x.toFixed(2)).join(", ")})`)
    }
    console.log("")
  }
} finally {
  for (const server of servers) await server.stop()
}

if (!process.argv.includes("--no-hop")) {
  // The hop alone: the same pages read here, in a job process (the server's carrier) and on a
  // worker thread (the indexer's), one at a time.
  const request = (i: number) => ({ bytes: bodies[i]!, contentType: "text/html; charset=utf-8", url: pages[i]!.url, format: "markdown" as const, limits: DEFAULT_PAGE_LIMITS })
  const limits = { workers: 1, memoryMb: 512, queue: 4, deadlineMs: 60_000, nice: 0 }
  const hop = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const viaProcess = yield* nodeJobWorkers.start(limits)
    const viaThread = pooledRunner(yield* nodeWorkerPool({ name: "bench-jobs", size: 1, memoryMb: 512 }), limits)
    for (let i = 0; i < pageCount; i++) {
      yield* viaProcess.run(readPageJob, request(i))
      yield* viaThread.run(readPageJob, request(i))
    }
    const times = { here: [] as Array<number>, process: [] as Array<number>, thread: [] as Array<number> }
    const perPage = (read: (i: number) => Effect.Effect<unknown, unknown>) =>
      Effect.gen(function*() {
        const started = performance.now()
        for (let i = 0; i < pageCount; i++) yield* read(i)
        return (performance.now() - started) / pageCount
      })
    for (let r = 0; r < rounds; r++) {
      times.here.push(yield* perPage((i) => Effect.promise(() => readablePage(bodies[i]!, "text/html; charset=utf-8", pages[i]!.url, "markdown"))))
      times.process.push(yield* perPage((i) => viaProcess.run(readPageJob, request(i))))
      times.thread.push(yield* perPage((i) => viaThread.run(readPageJob, request(i))))
    }
    return { here: median(times.here), process: median(times.process), thread: median(times.thread) }
  })))
  const more = (ms: number) => `${(ms - hop.here).toFixed(2)} ms more (${(((ms - hop.here) / hop.here) * 100).toFixed(0)}%)`
  console.log(`The hop, one page at a time in one process (median of ${rounds} rounds): ${hop.here.toFixed(2)} ms a page read on this thread; ` +
    `${hop.process.toFixed(2)} ms through a job process, ${more(hop.process)}; ${hop.thread.toFixed(2)} ms through a worker thread, ${more(hop.thread)} ` +
    `(the page copied there, its Markdown and text copied back, the other side woken).`)
}
console.log(`Load average now ${loadavg().map((n) => n.toFixed(2)).join(" ")}.`)
site.close()
