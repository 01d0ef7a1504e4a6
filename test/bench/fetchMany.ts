/**
 * webFetch of 20 URLs in one request (`urls`) against the same 20 URLs one request at a time,
 * on Periscope's own composition over the Node platform (pages read on its job threads), from
 * loopback sites that answer each page after a fixed delay (`--delay`, default 100 ms), standing
 * for the network's latency: on loopback a page otherwise arrives in well under a millisecond,
 * and reading many pages at once gains nothing but the waiting it overlaps. Every request is
 * `fresh`, so the cache answers nothing. Three rows:
 * - one host, fetch.perHostConcurrency at its default (4): bounded at about 4x by that limit;
 * - five hosts (127.0.0.1 to 127.0.0.5, four pages each), the default limit: all at once;
 * - one host, fetch.perHostConcurrency 20.
 * Per row: the median over `--rounds` of the 20 pages one at a time, of the one request of 20,
 * and their ratio.
 *
 *   node test/bench/fetchMany.ts [--rounds 5] [--delay 100]
 *
 * Two cores shared by the server, its reading threads and the sites: compare rows, not machines.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { parseArgs } from "node:util"
import { type FetchServer, postFetch, startFetchServer } from "../fetch/support.ts"

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" }, delay: { type: "string", default: "100" } } })
const ROUNDS = Number(values.rounds)
const DELAY_MS = Number(values.delay)
const URLS = 20

const words = "widget pipeline stage transform configure parallel failure report queue batch schedule retry buffer".split(" ")
const pageOf = (path: string) => {
  const n = [...path].reduce((sum, c) => sum + c.charCodeAt(0), 0)
  const paragraphs = Array.from({ length: 12 }, (_, i) =>
    `<p>${Array.from({ length: 24 }, (_, w) => words[(n * 7 + i * 3 + w) % words.length]).join(" ")}.</p>`).join("")
  return `<!doctype html><html><head><title>Widget guide ${path}</title></head><body><main><h1>Widget guide</h1>${paragraphs}</main></body></html>`
}

/** Every path answered with its page after DELAY_MS. */
const answer = (request: IncomingMessage, response: ServerResponse) => {
  const path = new URL(request.url ?? "/", "http://x").pathname
  setTimeout(() => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    response.end(pageOf(path))
  }, DELAY_MS)
}

const listen = (address: string): Promise<{ server: Server; origin: string; host: string }> =>
  new Promise((resolve) => {
    const server = createServer(answer)
    server.listen(0, address, () => {
      const port = (server.address() as { port: number }).port
      resolve({ server, origin: `http://${address}:${port}`, host: `${address}:${port}` })
    })
  })

const sites = await Promise.all(["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"].map(listen))
const allowHosts = sites.map((site) => site.host)

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

let round = 0
/** The 20 pages of a row, new paths each round (and fresh) so nothing is answered from the cache. */
const urlsOf = (spread: number) => {
  round++
  return Array.from({ length: URLS }, (_, i) => `${sites[i % spread]!.origin}/r${round}/page-${i}.html`)
}

const oneAtATime = async (server: FetchServer, urls: ReadonlyArray<string>) => {
  const started = performance.now()
  for (const url of urls) {
    const { status } = await postFetch(server.url, { url, fresh: true })
    if (status !== 200) throw new Error(`${url}: HTTP ${status}`)
  }
  return performance.now() - started
}

const allAtOnce = async (server: FetchServer, urls: ReadonlyArray<string>) => {
  const started = performance.now()
  const { status, body } = await postFetch(server.url, { urls, fresh: true })
  const elapsed = performance.now() - started
  if (status !== 200 || body.data.some((entry: any) => entry.error !== undefined)) throw new Error(`urls: HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`)
  return elapsed
}

const rows: Array<readonly [string, number, number]> = []
const measure = async (label: string, server: FetchServer, spread: number) => {
  // One warm-up of each, so the job threads and the connections are up.
  await oneAtATime(server, urlsOf(spread))
  await allAtOnce(server, urlsOf(spread))
  const single: Array<number> = []
  const many: Array<number> = []
  for (let r = 0; r < ROUNDS; r++) {
    single.push(await oneAtATime(server, urlsOf(spread)))
    many.push(await allAtOnce(server, urlsOf(spread)))
  }
  rows.push([label, median(single), median(many)])
}

const byDefault = await startFetchServer({ allowHosts })
await measure("one host, 4 per host (default)", byDefault, 1)
await measure("five hosts, 4 per host (default)", byDefault, 5)
await byDefault.close()
const wide = await startFetchServer({ allowHosts, perHostConcurrency: 20 })
await measure("one host, 20 per host", wide, 1)
await wide.close()
for (const site of sites) site.server.close()

console.log(`webFetch of ${URLS} URLs, each page answered after ${DELAY_MS} ms; median of ${ROUNDS} rounds`)
console.log("| URLs | one at a time | one request of 20 | speed-up |")
console.log("|---|---|---|---|")
for (const [label, single, many] of rows) {
  console.log(`| ${label} | ${single.toFixed(0)} ms | ${many.toFixed(0)} ms | ${(single / many).toFixed(1)}x |`)
}
process.exit(0)
