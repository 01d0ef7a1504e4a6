/**
 * The PageRenderer on Node: the system's Chromium, headless, through playwright-core. One browser,
 * started on the first render and again after it dies, closed after a quiet minute; at most
 * `pages` pages render at once and the rest wait their turn within their own deadline. Each page
 * gets a fresh context (no cookies, storage or permissions from another page; no downloads, no
 * service workers), and every request it makes is answered from Node (browserExchange.ts) under
 * the static fetcher's address policy; websockets are refused. Chromium is pointed at a proxy
 * that drops every connection, so nothing it might send on its own reaches the network.
 */
import { accessSync, constants } from "node:fs"
import { createServer, type Server } from "node:net"
import { Effect, Layer, Semaphore } from "effect"
import { type Browser, type BrowserContext, chromium, type Page, type Route } from "playwright-core"
import { browserSettingsOf, type FetchConfig } from "../../core/config/FetchConfig.ts"
import { PageRenderer, type RenderedPage, RenderFailure, type RenderRequest } from "../../core/ingest/crawl/PageRenderer.ts"
import { browserExchange } from "./browserExchange.ts"
import { type Resolver, systemResolver } from "./sources/crawl/AddressGuard.ts"

export interface BrowserRendererOptions {
  /** Debian's chromium package installs it at /usr/bin/chromium. */
  readonly executablePath: string
  /** Pages rendering at once; more requests queue. */
  readonly pages: number
  /** Name resolution for the address check (tests map names without DNS). */
  readonly resolve?: Resolver
  /** The browser is closed after this long without a page (default a minute). */
  readonly idleMs?: number
}


/** The browser's own start is not bounded by one request's deadline: the next requests share it. */
const LAUNCH_TIMEOUT_MS = 30_000
const DEFAULT_IDLE_MS = 60_000
/** Requests one page may make, and its bodies' total against maxBytes: an endless page is cut off. */
const MAX_REQUESTS_PER_PAGE = 300
const PAGE_BYTES_FACTOR = 4
const MAX_NAVIGATION_HOPS = 5
const DISCONNECT_GRACE_MS = 250
/** Nothing in these is text a reader extracts; skipping them spares time and memory. */
const SKIPPED_TYPES = new Set(["image", "media", "font", "stylesheet", "eventsource", "ping", "manifest", "texttrack"])
const HTML_TYPES = /^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i

/** The flags the probe of this machine kind runs Chromium with: no background traffic, a closed network. */
const chromiumArgs = (sinkPort: number): Array<string> => [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // Every request is answered through interception; whatever would still go out goes to a proxy that drops it.
  `--proxy-server=http://127.0.0.1:${sinkPort}`,
  "--proxy-bypass-list=<-loopback>",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"
]

/** A render ended; becomes a RenderFailure. */
class Ended extends Error {
  readonly reason: RenderFailure["reason"]
  readonly status: number | undefined
  constructor(reason: RenderFailure["reason"], message: string, status?: number) {
    super(message)
    this.reason = reason
    this.status = status
  }
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 300)

/** The one browser: started on demand, forgotten when it disconnects, closed when idle. */
class BrowserHost {
  private current: Browser | undefined
  private launching: Promise<Browser> | undefined
  private sink: Promise<{ readonly server: Server; readonly port: number }> | undefined
  private active = 0
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  private closed = false
  private readonly options: BrowserRendererOptions

  constructor(options: BrowserRendererOptions) {
    this.options = options
  }

  /** The running browser, or a new one. */
  browser(): Promise<Browser> {
    if (this.current?.isConnected()) return Promise.resolve(this.current)
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined
    })
    return this.launching
  }

  private async launch(): Promise<Browser> {
    const path = this.options.executablePath
    try {
      accessSync(path, constants.X_OK)
    } catch {
      throw new Ended("unavailable", `rendering needs Chromium, and there is none at ${path}: install it (Debian: apt-get install chromium) or set fetch.chromiumPath to its path`)
    }
    const { port } = await this.sinkServer()
    let browser: Browser
    try {
      browser = await chromium.launch({
        executablePath: path,
        headless: true,
        args: chromiumArgs(port),
        timeout: LAUNCH_TIMEOUT_MS,
        // The server handles its own signals (SIGHUP reloads); the browser closes with the layer.
        handleSIGHUP: false,
        handleSIGINT: false,
        handleSIGTERM: false
      })
    } catch (error) {
      throw new Ended("unavailable", `rendering needs Chromium, and ${path} did not start as one: ${firstLine(error)}`)
    }
    if (this.closed) {
      await browser.close().catch(() => undefined)
      throw new Ended("failed", "the renderer is shutting down")
    }
    browser.on("disconnected", () => {
      if (this.current === browser) this.current = undefined
    })
    this.current = browser
    return browser
  }

  private sinkServer() {
    this.sink ??= new Promise((resolve, reject) => {
      const server = createServer((socket) => socket.destroy())
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }))
    })
    return this.sink
  }

  /** A page starts rendering: the idle close waits. */
  enter(): void {
    this.active++
    clearTimeout(this.idleTimer)
  }

  leave(): void {
    this.active--
    if (this.active > 0 || this.closed) return
    this.idleTimer = setTimeout(() => {
      const browser = this.current
      this.current = undefined
      if (browser !== undefined) void browser.close().catch(() => undefined)
    }, this.options.idleMs ?? DEFAULT_IDLE_MS)
    this.idleTimer.unref()
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.idleTimer)
    const browser = this.current ?? (await this.launching?.catch(() => undefined))
    this.current = undefined
    await browser?.close().catch(() => undefined)
    const sink = await this.sink?.catch(() => undefined)
    await new Promise((resolve) => (sink === undefined ? resolve(undefined) : sink.server.close(resolve)))
  }
}

/** What the interception learnt about the page's own navigation, for when goto fails. */
interface NavigationState {
  redirect: string | undefined
  failure: Ended | undefined
}

/** Answers every request of the context from Node under the policy; the page's navigation is watched. */
const interceptor = (request: RenderRequest, options: BrowserRendererOptions, signal: AbortSignal, isMain: (route: Route) => boolean, navigation: NavigationState) => {
  const policy = { allow: request.allow ?? false, resolve: options.resolve ?? systemResolver }
  let requests = 0
  let bytes = 0
  let documentServed = false
  return async (route: Route): Promise<void> => {
    const asked = route.request()
    const main = isMain(route)
    try {
      if (SKIPPED_TYPES.has(asked.resourceType()) || ++requests > MAX_REQUESTS_PER_PAGE || signal.aborted) {
        return await route.abort("blockedbyclient")
      }
      if (main && !documentServed && request.document !== undefined && asked.url() === request.url) {
        documentServed = true
        return await route.fulfill({ status: 200, contentType: request.document.contentType, body: Buffer.from(request.document.body) })
      }
      const outcome = await browserExchange(
        { url: asked.url(), method: asked.method(), headers: await asked.allHeaders(), body: asked.postDataBuffer() },
        { policy, maxBytes: request.maxBytes, follow: !main, signal }
      )
      switch (outcome._tag) {
        case "Redirect":
          navigation.redirect = outcome.location
          return await route.abort("aborted")
        case "Refused":
          if (main) navigation.failure = new Ended("refused", outcome.reason.replace(/; allow it explicitly to crawl it$/, ""))
          return await route.abort("blockedbyclient")
        case "Failed":
          if (main) {
            navigation.failure = outcome.limit === "size"
              ? new Ended("too_large", `the page is larger than ${request.maxBytes} bytes`)
              : new Ended(outcome.limit === "time" ? "timeout" : "failed", `the page could not be fetched: ${outcome.reason}`)
          }
          return await route.abort(outcome.limit === "time" ? "timedout" : "failed")
        case "Response": {
          bytes += outcome.body.length
          if (bytes > request.maxBytes * PAGE_BYTES_FACTOR) return await route.abort("blockedbyclient")
          const type = outcome.headers["content-type"]
          if (main && type !== undefined && !HTML_TYPES.test(type)) {
            navigation.failure = new Ended("failed", `the page is ${JSON.stringify(type.slice(0, 100))}, not HTML`)
            return await route.abort("blockedbyclient")
          }
          return await route.fulfill({ status: outcome.status, headers: outcome.headers, body: outcome.body })
        }
      }
    } catch {
      // The page or its browser closed while the answer was on its way: nothing is waiting for it.
    }
  }
}

const remaining = (deadline: number) => Math.max(1, deadline - Date.now())

/** One page in a fresh context: load, wait, serialize. */
const renderIn = async (browser: Browser, request: RenderRequest, options: BrowserRendererOptions, deadline: number, signal: AbortSignal): Promise<RenderedPage> => {
  const controller = new AbortController()
  const onAbort = () => controller.abort()
  signal.addEventListener("abort", onAbort)
  const timer = setTimeout(onAbort, remaining(deadline))
  let context: BrowserContext | undefined
  try {
    context = await browser.newContext({
      acceptDownloads: false,
      serviceWorkers: "block",
      permissions: [],
      userAgent: request.userAgent,
      javaScriptEnabled: true
    })
    const ownContext = context
    signal.addEventListener("abort", () => void ownContext.close().catch(() => undefined), { once: true })
    const navigation: NavigationState = { redirect: undefined, failure: undefined }
    let page: Page | undefined
    const isMain = (route: Route) => {
      const asked = route.request()
      if (!asked.isNavigationRequest()) return false
      try {
        return page !== undefined && asked.frame() === page.mainFrame()
      } catch {
        return false
      }
    }
    await context.routeWebSocket(() => true, (socket) => socket.close({ code: 1008, reason: "websockets are not opened while rendering" }))
    await context.route(() => true, interceptor(request, options, controller.signal, isMain, navigation))
    page = await context.newPage()
    const own = page
    // A popup is not the page asked for.
    context.on("page", (other) => void (other === own ? undefined : other.close().catch(() => undefined)))

    let url = request.url
    let status = 0
    for (let hop = 0; ; hop++) {
      navigation.redirect = undefined
      navigation.failure = undefined
      try {
        const response = await page.goto(url, { waitUntil: "domcontentloaded", timeout: remaining(deadline) })
        status = response?.status() ?? 200
        break
      } catch (error) {
        if (navigation.failure !== undefined) throw navigation.failure
        if (navigation.redirect !== undefined && hop < MAX_NAVIGATION_HOPS) {
          const next = new URL(navigation.redirect)
          if (next.protocol !== "http:" && next.protocol !== "https:") throw new Ended("refused", `the site redirected to a ${next.protocol} URL; only http(s) is fetched`)
          url = next.href
          continue
        }
        if (navigation.redirect !== undefined) throw new Ended("failed", `more than ${MAX_NAVIGATION_HOPS} redirects`)
        if (error instanceof Error && error.name === "TimeoutError") throw new Ended("timeout", `the page did not load within ${request.timeoutMs} ms`)
        throw error
      }
    }
    if (status < 200 || status > 299) throw new Ended("http_status", `the site answered HTTP ${status}`, status)

    const wait = request.wait ?? { _tag: "NetworkIdle" }
    if (wait._tag === "Selector") {
      try {
        await page.waitForSelector(wait.selector, { state: "attached", timeout: remaining(deadline) })
      } catch (error) {
        if (error instanceof Error && error.name === "TimeoutError") {
          throw new Ended("timeout", `no element matched ${JSON.stringify(wait.selector)} within ${request.timeoutMs} ms`)
        }
        throw error
      }
    } else {
      // A page that never goes quiet (polling, streaming) is read as it stands when the time is up.
      const margin = Math.min(500, Math.floor(request.timeoutMs / 10))
      await page.waitForLoadState("networkidle", { timeout: Math.max(1, deadline - margin - Date.now()) }).catch((error: unknown) => {
        if (!(error instanceof Error && error.name === "TimeoutError")) throw error
      })
    }
    const html = await page.content()
    if (Buffer.byteLength(html) > request.maxBytes) throw new Ended("too_large", `the rendered page is larger than ${request.maxBytes} bytes`)
    return { url: page.url(), html }
  } finally {
    clearTimeout(timer)
    signal.removeEventListener("abort", onAbort)
    controller.abort()
    await context?.close().catch(() => undefined)
  }
}

/** The failure a thrown error stands for, given whether the browser outlived it. */
const failureOf = (error: unknown, request: RenderRequest, browser: Browser | undefined): RenderFailure => {
  if (error instanceof Ended) {
    return new RenderFailure({ reason: error.reason, url: request.url, message: error.message, ...(error.status === undefined ? {} : { status: error.status }) })
  }
  if (browser !== undefined && !browser.isConnected()) {
    return new RenderFailure({ reason: "failed", url: request.url, message: "the browser exited while rendering the page; it is started again for the next one" })
  }
  return new RenderFailure({ reason: "failed", url: request.url, message: `the page could not be rendered: ${firstLine(error)}` })
}

export const BrowserRenderer = {
  /** The renderer the config file's `fetch` section asks for (fetch.chromiumPath, fetch.renderPages). */
  layerConfig: (fetch: FetchConfig | undefined): Layer.Layer<PageRenderer> => {
    const browser = browserSettingsOf(fetch)
    return BrowserRenderer.layer({ executablePath: browser.chromiumPath, pages: browser.pages })
  },

  /** The PageRenderer over Chromium at `executablePath`; the browser closes with the layer's scope. */
  layer: (options: BrowserRendererOptions): Layer.Layer<PageRenderer> =>
    Layer.effect(
      PageRenderer,
      Effect.gen(function*() {
        const host = yield* Effect.acquireRelease(Effect.sync(() => new BrowserHost(options)), (host) => Effect.promise(() => host.close()))
        const pages = yield* Semaphore.make(Math.max(1, Math.floor(options.pages)))
        const renderOne = (request: RenderRequest, deadline: number) => {
          let browser: Browser | undefined
          return Effect.tryPromise({
            try: async (signal) => {
              if (Date.now() >= deadline) {
                throw new Ended("timeout", `no browser page was free within ${request.timeoutMs} ms (fetch.renderPages pages render at once)`)
              }
              host.enter()
              try {
                browser = await host.browser()
                return await renderIn(browser, request, options, deadline, signal)
              } catch (error) {
                // A browser that dies fails the page before it reports its own end: wait for that word briefly.
                const own = browser
                if (!(error instanceof Ended) && !signal.aborted && own?.isConnected()) {
                  await new Promise<void>((resolve) => {
                    const timer = setTimeout(resolve, DISCONNECT_GRACE_MS)
                    own.once("disconnected", () => {
                      clearTimeout(timer)
                      resolve()
                    })
                  })
                }
                throw error
              } finally {
                host.leave()
              }
            },
            catch: (error) => failureOf(error, request, browser)
          })
        }
        return PageRenderer.of({
          render: (request) => {
            const deadline = Date.now() + request.timeoutMs
            return Semaphore.withPermits(pages, 1)(Effect.suspend(() => renderOne(request, deadline))).pipe(
              // The render keeps its own deadline; this bounds a wait for a page or a browser that hangs.
              Effect.timeoutOrElse({
                duration: request.timeoutMs + 2000,
                orElse: () => Effect.fail(new RenderFailure({ reason: "timeout", url: request.url, message: `the page was not rendered within ${request.timeoutMs} ms` }))
              }),
              Effect.withSpan("PageRenderer.render")
            )
          }
        })
      })
    )
}
