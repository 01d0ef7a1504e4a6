/**
 * What the grounded chat tests run against, all real and on loopback: our Node HTTP server
 * built by the application's own composition from a config (chat upstream, search providers,
 * fetch policy), the OpenAI model stand-in (test/support/mockUpstream.ts), a SearXNG stand-in
 * (test/support/searchProviders.ts) and a small site whose pages webFetch reads (one of them
 * never answers, to watch a client going away cancel the read).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { Layer } from "effect"
import { nodePlatform } from "../../adapters/node/platform.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import type { ConfigFile } from "../../core/config/ConfigFile.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { type MockUpstream, type Scenario, startMockUpstream } from "../support/mockUpstream.ts"
import { type StandIn, type StandInPage, startStandIn } from "../support/searchProviders.ts"
import { serveInProcess, type RunningServer, TEST_KEY } from "../support/servers.ts"

/** Our server from a config file's content, in this process, on an ephemeral port. */
export const startConfigured = async (file: ConfigFile): Promise<RunningServer> => {
  const local = FixtureSearch.layer([
    { url: "https://local.example/gardening", title: "Gardening notes", text: "Tomatoes need sun and water; prune the side shoots." }
  ])
  const services = appLayer(settingsOf(file), recordsFromPlainKeys([TEST_KEY]), { search: { _tag: "Layer", layer: local } }).pipe(
    Layer.provide(nodePlatform),
    Layer.orDie
  )
  return serveInProcess(services)
}

export interface Site {
  readonly url: string
  /** Paths requested, in order. */
  readonly requested: Array<string>
  /** Requests whose client went away before the answer. */
  aborted(): number
  waitRequested(path: string, ms?: number): Promise<void>
  waitAborted(n: number, ms?: number): Promise<void>
  close(): Promise<void>
}

const page = (title: string, body: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title><meta charset="utf-8"></head><body>` +
  `<nav><a href="/">Home</a> | <a href="/about">About</a></nav><main><article><h1>${title}</h1>${body}</article></main>` +
  `<footer>Copyright the docs team</footer></body></html>`

/** A site of pages: path -> HTML, or "hang" for a page that never answers. */
export const startSite = async (pages: Readonly<Record<string, string | "hang">>): Promise<Site> => {
  const requested: Array<string> = []
  let aborted = 0
  const waiters = new Set<() => void>()
  const sockets = new Set<Socket>()
  const notify = () => { for (const w of [...waiters]) w() }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0]!
    requested.push(path)
    res.on("close", () => {
      if (!res.writableFinished) aborted++
      notify()
    })
    notify()
    const content = pages[path]
    if (content === "hang") return
    if (content === undefined) {
      res.writeHead(404, { "content-type": "text/plain" })
      res.end("not found")
      return
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    res.end(content)
  })
  server.on("connection", (s) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const waitFor = (check: () => boolean, ms: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (check()) return resolve()
      const timer = setTimeout(() => {
        waiters.delete(waiter)
        reject(new Error(`site: ${what} within ${ms} ms`))
      }, ms)
      const waiter = () => {
        if (!check()) return
        waiters.delete(waiter)
        clearTimeout(timer)
        resolve()
      }
      waiters.add(waiter)
    })
  return {
    url,
    requested,
    aborted: () => aborted,
    waitRequested: (path, ms = 5000) => waitFor(() => requested.includes(path), ms, `no request for ${path}`),
    waitAborted: (n, ms = 5000) => waitFor(() => aborted >= n, ms, `fewer than ${n} aborted requests`),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}

export const htmlPage = page

/** The model stand-in, the site, a SearXNG stand-in listing `pagesOf(site)` and our server over them. */
export interface GroundedWorld {
  readonly upstream: MockUpstream
  readonly site: Site
  readonly searx: StandIn
  readonly server: RunningServer
  readonly close: () => Promise<void>
}

/** The grounded chat tests' common world: model "gpt-test" on the stand-in, SearXNG as the one provider, no caches. */
export const startGroundedWorld = async (
  pages: Readonly<Record<string, string | "hang">>,
  pagesOf: (siteUrl: string) => ReadonlyArray<StandInPage>,
  respond: () => Scenario
): Promise<GroundedWorld> => {
  const upstream = await startMockUpstream({ respond })
  const site = await startSite(pages)
  const searx = await startStandIn("searxng", pagesOf(site.url))
  const server = await startConfigured({
    chat: {
      upstreams: { mock: { baseUrl: upstream.url, retries: { max: 0 } } },
      models: [{ name: "gpt-test", targets: [{ upstream: "mock", model: "mock-model" }] }],
      grounding: { maxToolRounds: 2, deadlineMs: 5000 }
    },
    search: { providers: [{ name: "searx", kind: "searxng", baseUrl: searx.url }], cache: { maxEntries: 0 } },
    fetch: { allowPrivateAddresses: true, cacheTtlSeconds: 0 }
  })
  return {
    upstream,
    site,
    searx,
    server,
    close: async () => {
      await server.close()
      await upstream.close()
      await searx.close()
      await site.close()
    }
  }
}
