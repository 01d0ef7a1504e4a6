/**
 * For the rendering tests: whether Debian's Chromium is here (a printed skip without it, a
 * failure under CI=true), the test names and the resolver that maps them to loopback (the
 * address guard then judges 127.0.0.1, as DNS would have it), pages that build their text with
 * scripts, a stand-in that counts every connection made to it, and the browser process to kill.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { NodeFileSystem } from "@effect/platform-node"
import { Layer } from "effect"
import { BrowserRenderer } from "../../adapters/node/browserRenderer.ts"
import { nodeJobWorkersLayer } from "../../adapters/node/jobThreads.ts"
import type { Resolver } from "../../adapters/node/sources/crawl/AddressGuard.ts"
import { systemResolver } from "../../adapters/node/sources/crawl/AddressGuard.ts"
import { NodePageFetcher } from "../../adapters/node/sources/crawl/NodePageFetcher.ts"
import * as UndiciHttpClient from "../../adapters/node/undiciHttpClient.ts"
import { appLayer } from "../../core/app/Application.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import { browserSettingsOf, type FetchConfig } from "../../core/config/FetchConfig.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { serveInProcess } from "../support/servers.ts"
import { FETCH_KEY, type FetchServer } from "./support.ts"

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/** Whether the rendering tests run; prints why not, and throws under CI where they must. */
export const haveChromium = (suite: string): boolean => {
  if (existsSync(CHROMIUM)) return true
  if (process.env.CI === "true") throw new Error(`Chromium is missing at ${CHROMIUM}: ${suite} need it under CI (apt-get install chromium)`)
  console.warn(`skipping ${suite}: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
  return false
}

/** The site's name: allowed by host:port in the tests' fetch config. */
export const APP_HOST = "app.test"
/** A name that resolves to loopback and is allowed nowhere. */
export const EVIL_HOST = "evil.test"

/** `.test` names resolve to 127.0.0.1 here, as a DNS answer pointing at this machine would. */
export const testResolver: Resolver = async (hostname) =>
  hostname.endsWith(".test") ? [{ address: "127.0.0.1", family: 4 }] : systemResolver(hostname)

export const ARTICLE = {
  title: "Configuring the widget pipeline",
  paragraphs: [
    "The widget pipeline reads its stages from a single file, so that every stage can be replaced without touching the others.",
    "Each stage receives the widgets of the stage before it, transforms them, and hands them on; a stage that fails stops the run and names itself.",
    "Stages run one after another by default; mark a stage parallel to let it take several widgets at once when its work allows."
  ]
}

/** An app shell: one root element, and a script that fetches the article and writes it into the root. */
export const SHELL_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Widget docs</title></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>
<script src="/app.js"></script></body></html>`

export const APP_SCRIPT = `fetch("/api/article").then((r) => r.json()).then((a) => {
  const main = document.createElement("main")
  main.innerHTML = "<article><h1>" + a.title + "</h1>" + a.paragraphs.map((p) => "<p>" + p + "</p>").join("") + "</article>"
  document.getElementById("root").appendChild(main)
  const done = document.createElement("span"); done.id = "built"; document.body.appendChild(done)
})`

/**
 * Periscope over the Node platform with `fetch` as its config file's section, names resolved by
 * the test resolver; with the Node renderer (as the server runs) unless `renderer` is false (as
 * Deno and the embedded library run, with no browser).
 */
export const startRenderServer = (fetch: FetchConfig, options: { readonly renderer?: boolean } = {}): Promise<FetchServer> => {
  const browser = browserSettingsOf(fetch)
  const platform = Layer.mergeAll(
    NodeFileSystem.layer,
    UndiciHttpClient.layer,
    NodePageFetcher.layer({ allow: false, resolve: testResolver }),
    nodeJobWorkersLayer,
    options.renderer === false ? Layer.empty : BrowserRenderer.layer({ executablePath: browser.chromiumPath, pages: browser.pages, resolve: testResolver })
  )
  const services = appLayer(settingsOf({ fetch }), recordsFromPlainKeys([FETCH_KEY], 1_000_000), {
    search: { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) },
    chatModel: ScriptedChat.layer(unconfiguredChat)
  }).pipe(Layer.provide(platform), Layer.orDie)
  return serveInProcess(services)
}

/** A TCP listener that counts connections and answers none of them. */
export interface StandIn {
  readonly port: number
  connections(): number
  close(): Promise<void>
}

export const standIn = (): Promise<StandIn> =>
  new Promise((resolve) => {
    let count = 0
    const server: Server = createServer((socket) => {
      count++
      socket.destroy()
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as { port: number }).port,
        connections: () => count,
        close: () => new Promise((done) => server.close(() => done()))
      }))
  })

/** Chromium browser processes (not its helpers) that this process started. */
export const ownBrowserPids = (): Array<number> =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (ppid !== process.pid) return false
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      return /chrom/.test(cmdline[0] ?? "") && !cmdline.some((arg) => arg.startsWith("--type="))
    } catch {
      return false
    }
  })
