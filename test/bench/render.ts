/**
 * Rendering throughput and memory: POST /api/search/webFetch with render "always" (fresh, so
 * every page is read and rendered) on Periscope's own composition over the Node platform and
 * Debian's Chromium, against app-shell pages on loopback (each page's script fetches its article,
 * about 3 kB of text, and writes it into the root). Clients send `--pages` distinct pages at
 * 1, 2, 4 and 8 at once while the browser renders `--pool` pages at a time (fetch.renderPages);
 * beside them the same pages read as sent (render "never"). Per row: pages/s, p50 and p95 of a
 * page, and the peak memory of the browser's processes (PSS, so pages shared between them count
 * once) and of this process (RSS), sampled every 50 ms, and the CPU time each page cost the
 * browser's processes and this process (the server and its reading threads): on a machine busy
 * with other work the CPU per page moves far less than the pages per second.
 *
 *   node test/bench/render.ts [--pages 40] [--pool 2]
 *
 * Two cores shared by the clients, the server, the site and Chromium: compare rows, not machines.
 */
import { readdirSync, readFileSync } from "node:fs"
import { spawn } from "node:child_process"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { parseArgs } from "node:util"
import { APP_HOST, CHROMIUM, startRenderServer } from "../fetch/renderSite.ts"
import { postFetch, send } from "../fetch/support.ts"
import { percentile } from "./support/stats.ts"

const { values } = parseArgs({ options: { pages: { type: "string", default: "40" }, pool: { type: "string", default: "2" } } })
const PAGES = Number(values.pages)
const POOL = Number(values.pool)

try {
  readFileSync(CHROMIUM)
} catch {
  console.error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH): nothing to measure`)
  process.exit(process.env.CI === "true" ? 1 : 0)
}

const words = "widget pipeline stage transform configure parallel failure report queue batch schedule retry buffer".split(" ")
const articleOf = (n: number) => ({
  title: `Widget guide, part ${n}`,
  paragraphs: Array.from({ length: 20 }, (_, i) =>
    Array.from({ length: 24 }, (_, w) => words[(n * 7 + i * 3 + w) % words.length]).join(" ").replace(/^./, (c) => c.toUpperCase()) + ".")
})
const shell = `<!doctype html><html><head><meta charset="utf-8"><title>Widget docs</title><script src="/app.js" defer></script></head><body><div id="root"></div></body></html>`
const script = `fetch("/api" + location.pathname).then((r) => r.json()).then((a) => {
  document.getElementById("root").innerHTML = "<main><article><h1>" + a.title + "</h1>" + a.paragraphs.map((p) => "<p>" + p + "</p>").join("") + "</article></main>"
})`

// /page/N is a shell, /api/page/N its article.
const pagesSite = createServer((request: IncomingMessage, response: ServerResponse) => {
  const path = new URL(request.url ?? "/", "http://x").pathname
  const api = /^\/api\/page\/(\d+)$/.exec(path)
  if (api !== null) return send(JSON.stringify(articleOf(Number(api[1]))), "application/json")(request, response)
  if (/^\/page\/\d+$/.test(path)) return send(shell, "text/html; charset=utf-8")(request, response)
  if (path === "/app.js") return send(script, "text/javascript")(request, response)
  response.writeHead(404).end()
})
await new Promise<void>((resolve) => pagesSite.listen(0, "127.0.0.1", resolve))
const port = (pagesSite.address() as { port: number }).port
const host = `${APP_HOST}:${port}`

const server = await startRenderServer({ allowHosts: [host], renderPages: POOL, cacheMaxEntries: 0 })

/** Every process this one started, and theirs (the browser and its helpers). */
const descendants = (): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)])
    } catch {
      // Gone meanwhile.
    }
  }
  const out: Array<number> = []
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      out.push(child)
      walk(child)
    }
  }
  walk(process.pid)
  return out
}

/** CPU seconds of the browser's processes so far: the live ones, and the ended ones their parents collected. */
const browserCpuSeconds = (): number =>
  descendants().reduce((sum, pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      // utime, stime, cutime, cstime: fields 14-17 of the line, 11-14 after the command name.
      return sum + (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100
    } catch {
      return sum
    }
  }, 0)

const serverCpuSeconds = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

/**
 * Peak memory, sampled by a process of its own so that the sampling costs this one no CPU: the
 * PSS of the browser's processes and the RSS of this one, every 50 ms until it is told to stop.
 */
const SAMPLER = `
const { readdirSync, readFileSync } = require("node:fs")
const root = Number(process.argv[1])
const read = (path) => { try { return readFileSync(path, "utf8") } catch { return "" } }
let browserPeak = 0, serverPeak = 0
const sample = () => {
  const children = new Map()
  for (const name of readdirSync("/proc")) {
    if (!/^\\d+$/.test(name)) continue
    const stat = read("/proc/" + name + "/stat")
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)])
  }
  let pss = 0
  const walk = (pid) => { for (const child of children.get(pid) ?? []) { if (child !== process.pid) { pss += Number(/^Pss:\\s+(\\d+)/m.exec(read("/proc/" + child + "/smaps_rollup"))?.[1] ?? 0) * 1024; walk(child) } } }
  walk(root)
  browserPeak = Math.max(browserPeak, pss)
  serverPeak = Math.max(serverPeak, Number(/^VmRSS:\\s+(\\d+)/m.exec(read("/proc/" + root + "/status"))?.[1] ?? 0) * 1024)
}
sample()
const timer = setInterval(sample, 50)
process.on("SIGTERM", () => { clearInterval(timer); sample(); process.stdout.write(JSON.stringify({ browserPeak, serverPeak })); process.exit(0) })
`

const watchMemory = () => {
  const sampler = spawn(process.execPath, ["-e", SAMPLER, String(process.pid)], { stdio: ["ignore", "pipe", "inherit"] })
  let out = ""
  sampler.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
  const ended = new Promise((resolve) => sampler.on("exit", resolve))
  return async (): Promise<{ readonly browserPeak: number; readonly nodePeak: number }> => {
    sampler.kill("SIGTERM")
    await ended
    const peaks = JSON.parse(out) as { browserPeak: number; serverPeak: number }
    return { browserPeak: peaks.browserPeak, nodePeak: peaks.serverPeak }
  }
}

let next = 0
const readPages = async (clients: number, render: "always" | "never") => {
  const latencies: Array<number> = []
  let failures = 0
  const stop = watchMemory()
  const browserCpu = browserCpuSeconds()
  const serverCpu = serverCpuSeconds()
  const started = performance.now()
  let left = PAGES
  await Promise.all(Array.from({ length: clients }, async () => {
    while (left > 0) {
      left--
      const n = next++
      const t0 = performance.now()
      const answer = await postFetch(server.url, { url: `http://${host}/page/${n}`, render, fresh: true })
      latencies.push(performance.now() - t0)
      const whole = answer.status === 200 && String(answer.body.data.content).includes(articleOf(n).paragraphs[19]!)
      if (render === "always" ? !whole : answer.status !== 200) failures++
    }
  }))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    pagesPerSecond: PAGES / seconds,
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    failures,
    browserCpuMs: ((browserCpuSeconds() - browserCpu) / PAGES) * 1000,
    serverCpuMs: ((serverCpuSeconds() - serverCpu) / PAGES) * 1000,
    ...(await stop())
  }
}

// The browser's start, and a warm page.
const t0 = performance.now()
const first = await postFetch(server.url, { url: `http://${host}/page/${next++}`, render: "always", fresh: true })
const coldMs = performance.now() - t0
if (first.status !== 200) throw new Error(`the first render failed: ${JSON.stringify(first.body)}`)
await postFetch(server.url, { url: `http://${host}/page/${next++}`, render: "always", fresh: true })

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0)
console.log(`${PAGES} app-shell pages per row, the browser rendering ${POOL} at a time; first render with the browser's start: ${coldMs.toFixed(0)} ms\n`)
console.log("| render | clients | pages/s | p50 ms | p95 ms | CPU ms per page, browser / server | browser peak PSS MB | server peak RSS MB | pages not whole |")
console.log("|---|---|---|---|---|---|---|---|---|")
for (const [render, clients] of [["never", 4], ["always", 1], ["always", 2], ["always", 4], ["always", 8]] as const) {
  const row = await readPages(clients, render)
  console.log(
    `| ${render} | ${clients} | ${row.pagesPerSecond.toFixed(1)} | ${row.p50.toFixed(0)} | ${row.p95.toFixed(0)} | ` +
      `${row.browserCpuMs.toFixed(0)} / ${row.serverCpuMs.toFixed(0)} | ${mb(row.browserPeak)} | ${mb(row.nodePeak)} | ${row.failures} |`
  )
}

await server.close()
await new Promise((resolve) => pagesSite.close(resolve))
