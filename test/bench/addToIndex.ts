/**
 * Searches while pages are added to a large index (webFetch's addToIndex): a Periscope server
 * process over a snapshot of generated pages (300,000 by default, built once and kept in
 * .cache/bench/addToIndex), a loopback site of pages to add, and searches sent at a fixed rate
 * whether or not the earlier ones were answered (so a stall shows as the latency it causes).
 * Prints the searches' p50, p99 and worst when idle and from the first addToIndex until every
 * added page is found (plus a second), how long the adds took to answer and to become
 * searchable, and the server's resident memory before, at its peak and after.
 *
 *   node test/bench/addToIndex.ts [--pages 300000] [--add 30] [--rate 100] [--idle-seconds 15] [--root <checkout>] [--timeline] [--node-flags="--cpu-prof ..."]
 *
 * `--timeline`: the worst search of each half second from the first add on. `--node-flags`: for the
 * server process (a CPU profile of its threads, say).
 * `--root`: run the server of another checkout (e.g. `git archive <rev> | tar -x -C /tmp/old`,
 * node_modules linked), to compare with the code before the segment.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { freePort } from "../support/servers.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const here = resolve(import.meta.dirname, "../..")
const { values } = parseArgs({
  options: {
    pages: { type: "string", default: "300000" },
    add: { type: "string", default: "30" },
    rate: { type: "string", default: "100" },
    "idle-seconds": { type: "string", default: "15" },
    root: { type: "string" },
    timeline: { type: "boolean", default: false },
    "max-wait-seconds": { type: "string", default: "600" },
    "node-flags": { type: "string", default: "" }
  }
})
const pages = wholeNumberOption("--pages", values.pages)
const adds = wholeNumberOption("--add", values.add)
const rate = wholeNumberOption("--rate", values.rate)
const idleMs = wholeNumberOption("--idle-seconds", values["idle-seconds"]) * 1000
const maxWaitMs = wholeNumberOption("--max-wait-seconds", values["max-wait-seconds"]) * 1000
const serverRoot = resolve(values.root ?? here)
const KEY = "bench-add-to-index-0123456789"

// ---- the snapshot: generated pages, a Zipf-like vocabulary, built once -------------------------
const vocabulary = Array.from({ length: 30_000 }, (_, i) => `w${i.toString(36)}`)
let seed = 11
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
const word = () => vocabulary[Math.floor(random() ** 3 * vocabulary.length)]!
const cacheDir = join(here, ".cache/bench/addToIndex")
const snapshotPath = join(cacheDir, `generated-${pages}.snapshot`)
if (!existsSync(snapshotPath)) {
  mkdirSync(cacheDir, { recursive: true })
  console.log(`building a snapshot of ${pages} generated pages (once) ...`)
  const started = performance.now()
  const builder = new IndexBuilder()
  for (let from = 0; from < pages; from += 10_000) {
    builder.add(Array.from({ length: Math.min(10_000, pages - from) }, (_, i) => ({
      url: `https://docs${(from + i) % 97}.example/page/${from + i}`,
      title: Array.from({ length: 3 }, word).join(" "),
      text: Array.from({ length: 30 + Math.floor(random() * 60) }, word).join(" ")
    })))
  }
  writeFileSync(snapshotPath, encodeSnapshot(builder.build()))
  console.log(`built in ${((performance.now() - started) / 1000).toFixed(0)} s`)
}

// ---- the pages to add, on a loopback site -----------------------------------------------------
const pageHtml = (n: number) =>
  `<html><head><title>Added ${n}</title></head><body><main><p>zqbench${n} ${Array.from({ length: 4000 }, word).join(" ")}</p></main></body></html>`
const site = createServer((request, response) => {
  const n = Number(/^\/p(\d+)$/.exec(request.url ?? "")?.[1] ?? -1)
  response.writeHead(n >= 0 ? 200 : 404, { "content-type": "text/html" })
  response.end(n >= 0 ? pageHtml(n) : "")
})
await new Promise<void>((done) => site.listen(0, "127.0.0.1", done))
const siteHost = `127.0.0.1:${(site.address() as { port: number }).port}`

// ---- the server ---------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), "periscope-bench-add-"))
const config = join(dir, "config.json")
// The key may add as many pages as the bench asks (a checkout from before the setting has no such bound).
const perMinute = readFileSync(join(serverRoot, "core/config/FetchConfig.ts"), "utf8").includes("addToIndexPerMinute") ? { addToIndexPerMinute: 100_000 } : {}
writeFileSync(config, JSON.stringify({ search: { snapshot: snapshotPath }, rateLimitPerMinute: 10_000_000, fetch: { allowHosts: [siteHost], ...perMinute } }))
const port = await freePort()
const url = `http://127.0.0.1:${port}`
const child: ChildProcess = spawn(process.execPath, [...(values["node-flags"] ?? "").split(" ").filter((f) => f !== ""), "adapters/node/main.ts"], {
  cwd: serverRoot,
  env: { ...process.env, PORT: String(port), PERISCOPE_API_KEYS: KEY, PERISCOPE_DATA_DIR: join(dir, "data"), PERISCOPE_CONFIG: config, NO_COLOR: "1" },
  stdio: ["ignore", "pipe", "pipe"]
})
let output = ""
child.stdout!.on("data", (d) => { output += d })
child.stderr!.on("data", (d) => { output += d })
const cleanUp = () => {
  child.kill("SIGTERM")
  site.close()
  rmSync(dir, { recursive: true, force: true })
  // The added pages' journal beside the cached snapshot: the next run starts from the snapshot alone.
  rmSync(`${snapshotPath}.added.jsonl`, { force: true })
}
process.on("exit", cleanUp)

const rssMb = (): number => {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

const post = (path: string, body: unknown) =>
  fetch(`${url}/api/search/${path}`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) })

for (let ready = false; !ready;) {
  if (child.exitCode !== null) throw new Error(`the server exited:\n${output}`)
  ready = await fetch(`${url}/readyz`).then((r) => r.ok, () => false)
  if (!ready) await new Promise((r) => setTimeout(r, 200))
}
// Warm the query path as users would.
for (let i = 0; i < 300; i++) await post("webSearch", { keywords: `${word()} ${word()}` })

// ---- fixed-rate searches ------------------------------------------------------------------------
interface Sample { readonly sentAt: number; readonly ms: number; readonly ok: boolean }
const samples: Array<Sample> = []
let sending = true
const sender = (async () => {
  const started = performance.now()
  for (let i = 0; sending; i++) {
    const due = started + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    const sentAt = performance.now()
    void post("webSearch", { keywords: `${word()} ${word()} ${word()}` }).then(
      async (r) => samples.push({ sentAt, ms: performance.now() - sentAt, ok: r.ok && (await r.json() as { success?: boolean }).success === true }),
      () => samples.push({ sentAt, ms: performance.now() - sentAt, ok: false })
    )
  }
})()
let peakRss = 0
const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, rssMb())), 100)

const summary = (label: string, from: number, to: number) => {
  const chosen = samples.filter((s) => s.sentAt >= from && s.sentAt < to)
  const ms = chosen.map((s) => s.ms).sort((a, b) => a - b)
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? Number.NaN
  console.log(`${label}: ${chosen.length} searches, p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, worst ${(ms.at(-1) ?? Number.NaN).toFixed(1)} ms, failed ${chosen.filter((s) => !s.ok).length}`)
}

const idleFrom = performance.now()
await new Promise((r) => setTimeout(r, idleMs))
const rssBefore = rssMb()
peakRss = rssBefore
const addFrom = performance.now()
const answers = await Promise.all(Array.from({ length: adds }, (_, n) => post("webFetch", { url: `http://${siteHost}/p${n}`, addToIndex: true }).then((r) => r.json() as Promise<any>)))
const answeredMs = performance.now() - addFrom
const refused = answers.filter((a) => a.extra?.index?.added !== true && a.extra !== null)
const found = async (n: number) => ((await (await post("webSearch", { keywords: `zqbench${n}` })).json() as any).data?.organic ?? []).length > 0
let searchable = true
for (let n = 0; n < adds && searchable; n++) {
  while (!(await found(n))) {
    if (performance.now() - addFrom > maxWaitMs) {
      searchable = false
      break
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}
const searchableMs = performance.now() - addFrom
await new Promise((r) => setTimeout(r, 1000))
const addTo = performance.now()
sending = false
await sender
await new Promise((r) => setTimeout(r, 2000))
clearInterval(rssTimer)
// The segment's build and the requests' garbage gone: what the server holds now.
await new Promise((r) => setTimeout(r, 5000))
const rssAfter = rssMb()

console.log(`${pages} pages, ${adds} pages added (${Math.round(answers.reduce((n, a) => n + (a.data?.content?.length ?? 0), 0) / adds / 1000)} KB of content each), searches at ${rate}/s, server from ${serverRoot === here ? "this checkout" : serverRoot}`)
summary("idle", idleFrom, addFrom)
summary("during addToIndex", addFrom, addTo)
console.log(`the ${adds} addToIndex requests answered in ${answeredMs.toFixed(0)} ms${refused.length > 0 ? ` (${refused.length} not added)` : ""}; ` +
  (searchable ? `all pages searchable after ${searchableMs.toFixed(0)} ms` : `not all searchable after ${(maxWaitMs / 1000).toFixed(0)} s`))
for (const line of output.split("\n").filter((l) => /added|local index|segment/i.test(l))) console.log(`  server: ${line.slice(0, 200)}`)
if (values.timeline === true) {
  for (let t = addFrom; t < addTo; t += 500) {
    const chosen = samples.filter((x) => x.sentAt >= t && x.sentAt < t + 500)
    console.log(`  +${((t - addFrom) / 1000).toFixed(1)} s: ${chosen.length} sent, worst ${Math.max(0, ...chosen.map((x) => x.ms)).toFixed(0)} ms`)
  }
}
console.log(`server resident memory: ${rssBefore.toFixed(0)} MB before, ${peakRss.toFixed(0)} MB at the peak, ${rssAfter.toFixed(0)} MB after`)
process.exit(0)
