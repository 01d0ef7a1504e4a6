/**
 * The Node PageRenderer (adapters/node/browserRenderer.ts) with Debian's Chromium against pages
 * served on loopback under test names (app.test is allowed by host:port; everything else on this
 * machine is refused, whatever its spelling): a page that builds its text by script comes back
 * built; a page whose scripts, frames, redirects and sockets reach for refused addresses gets no
 * connection there; pages that never settle end at the deadline; the pool queues; a killed
 * browser fails its page and the next page gets a new one; a bad Chromium path says what to install.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, ManagedRuntime, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BrowserRenderer } from "../../adapters/node/browserRenderer.ts"
import { PageRenderer, type RenderedPage, type RenderFailure, type RenderRequest } from "../../core/ingest/crawl/PageRenderer.ts"
import { APP_HOST, APP_SCRIPT, ARTICLE, CHROMIUM, EVIL_HOST, haveChromium, ownBrowserPids, SHELL_PAGE, standIn, type StandIn, testResolver } from "./renderSite.ts"
import { send, serveSite, type Site } from "./support.ts"

const run = haveChromium("the browser renderer tests")

type Renderer = ManagedRuntime.ManagedRuntime<PageRenderer, never>
const rendererOf = (options: { readonly pages?: number; readonly executablePath?: string } = {}): Renderer =>
  ManagedRuntime.make(BrowserRenderer.layer({ executablePath: options.executablePath ?? CHROMIUM, pages: options.pages ?? 2, resolve: testResolver }))

const render = (renderer: Renderer, request: RenderRequest): Promise<Result.Result<RenderedPage, RenderFailure>> =>
  renderer.runPromise(Effect.result(Effect.gen(function*() {
    return yield* (yield* PageRenderer).render(request)
  })))

describe.skipIf(!run)("rendering in headless Chromium", () => {
  let site: Site
  let stand: StandIn
  let renderer: Renderer
  let appHost: string
  /** Called when the site receives /held; the request is then kept open until the test ends. */
  let onHeld: (() => void) | undefined
  const held: Array<ServerResponse> = []
  let slowInFlight = 0
  let slowMax = 0

  const requestFor = (path: string, extra: Partial<RenderRequest> = {}): RenderRequest => ({
    url: `http://${appHost}${path}`,
    userAgent: "Periscope render test",
    timeoutMs: 15_000,
    maxBytes: 5 * 1024 * 1024,
    allow: [appHost],
    ...extra
  })

  beforeAll(async () => {
    stand = await standIn()
    const refused = [
      `http://${EVIL_HOST}:${stand.port}/`,
      `http://127.0.0.1:${stand.port}/`,
      `http://127.1:${stand.port}/`,
      `http://0x7f.0.0.1:${stand.port}/`,
      `http://2130706433:${stand.port}/`,
      `http://[::ffff:127.0.0.1]:${stand.port}/`,
      `http://[::1]:${stand.port}/`,
      `http://localhost:${stand.port}/`
    ]
    site = await serveSite({
      "/shell.html": send(SHELL_PAGE, "text/html; charset=utf-8"),
      "/app.js": send(APP_SCRIPT, "text/javascript"),
      "/api/article": send(JSON.stringify(ARTICLE), "application/json"),
      "/to-standin": (_q: IncomingMessage, r: ServerResponse) => {
        r.writeHead(302, { location: `http://127.0.0.1:${stand.port}/after-redirect` })
        r.end()
      },
      "/reach.html": send(
        `<!doctype html><html><head><title>Reaching out</title>
        <link rel="preconnect" href="http://127.0.0.1:${stand.port}/"><link rel="dns-prefetch" href="http://${EVIL_HOST}:${stand.port}/">
        <link rel="stylesheet" href="http://127.0.0.1:${stand.port}/style.css"></head>
        <body><main><h1>Reaching out</h1><ul id="out"></ul>
        <img src="http://127.0.0.1:${stand.port}/pixel.png"><iframe src="http://${EVIL_HOST}:${stand.port}/frame"></iframe>
        <script src="http://[::1]:${stand.port}/lib.js"></script>
        <script>
          const note = (what) => { const li = document.createElement("li"); li.textContent = what; document.getElementById("out").appendChild(li) }
          const targets = ${JSON.stringify(refused)}
          const tries = targets.map((t) => fetch(t).then(() => note("reached " + t), () => note("refused " + t)))
          tries.push(fetch("/to-standin").then(() => note("reached by redirect"), () => note("refused by redirect")))
          tries.push(fetch("http://${EVIL_HOST}:${stand.port}/post", { method: "POST", body: "x" }).then(() => note("posted"), () => note("refused post")))
          tries.push(new Promise((done) => {
            const socket = new WebSocket("ws://127.0.0.1:${stand.port}/socket")
            socket.onopen = () => { note("socket open"); done() }
            socket.onerror = () => { note("refused socket"); done() }
            socket.onclose = () => done()
          }))
          navigator.sendBeacon("http://127.0.0.1:${stand.port}/beacon", "x")
          Promise.allSettled(tries).then(() => { const done = document.createElement("p"); done.id = "done"; done.textContent = "all tried"; document.body.appendChild(done) })
        </script></main></body></html>`,
        "text/html"
      ),
      "/polls.html": send(
        `<!doctype html><html><head><title>Live</title></head><body><main id="m"></main><script>
          document.getElementById("m").innerHTML = "<h1>Live scores</h1><p>${ARTICLE.paragraphs[0]}</p>"
          const poll = () => fetch("/api/article?" + Math.random()).finally(() => setTimeout(poll, 100))
          poll()
        </script></body></html>`,
        "text/html"
      ),
      "/never.html": (_q: IncomingMessage, r: ServerResponse) => {
        // Headers and the start of the page, then nothing: the document never ends.
        r.writeHead(200, { "content-type": "text/html" })
        r.write("<!doctype html><html><head><title>Never</title></head><body><p>Loading")
        held.push(r)
      },
      "/slow.html": send(
        `<!doctype html><html><head><title>Slow</title></head><body><main id="m"></main><script>
          fetch("/api/slow").then((r) => r.text()).then((t) => { document.getElementById("m").innerHTML = "<p>" + t + "</p>" })
        </script></body></html>`,
        "text/html"
      ),
      "/api/slow": (_q: IncomingMessage, r: ServerResponse) => {
        slowInFlight++
        slowMax = Math.max(slowMax, slowInFlight)
        setTimeout(() => {
          slowInFlight--
          r.writeHead(200, { "content-type": "text/plain" })
          r.end("slow answer arrived")
        }, 300)
      },
      "/holds.html": send(
        `<!doctype html><html><head><title>Holds</title></head><body><main id="m">waiting</main><script>
          fetch("/held").then((r) => r.text()).then((t) => { document.getElementById("m").textContent = t })
        </script></body></html>`,
        "text/html"
      ),
      "/held": (_q: IncomingMessage, r: ServerResponse) => {
        held.push(r)
        onHeld?.()
      },
      "/storage.html": send(
        `<!doctype html><html><head><title>Storage</title></head><body><main id="m"></main><script>
          const seen = "cookie=" + (document.cookie || "none") + " stored=" + (localStorage.getItem("k") || "none")
          document.cookie = "visited=yes"; localStorage.setItem("k", "set")
          document.getElementById("m").textContent = seen
        </script></body></html>`,
        "text/html"
      ),
      "/download": send("a,b\n1,2\n", "text/csv", 200, { "content-disposition": "attachment; filename=data.csv" }),
      "/gone.html": send("<html><body><h1>Gone</h1></body></html>", "text/html", 404),
      "/hop": (_q: IncomingMessage, r: ServerResponse) => {
        r.writeHead(301, { location: "/shell.html" })
        r.end()
      }
    })
    appHost = `${APP_HOST}:${site.port}`
    renderer = rendererOf()
  })

  afterAll(async () => {
    for (const r of held) r.destroy()
    await renderer?.dispose()
    await site?.close()
    await stand?.close()
  })

  it("builds a page whose text comes from its script", async () => {
    const result = await render(renderer, requestFor("/shell.html"))
    const page = Result.getOrThrow(result)
    expect(page.url).toBe(`http://${appHost}/shell.html`)
    expect(page.html).toContain(`<h1>${ARTICLE.title}</h1>`)
    for (const paragraph of ARTICLE.paragraphs) expect(page.html).toContain(paragraph)
    expect(site.requested).toContain("/api/article")
  })

  it("answers the navigation with the document the caller already has", async () => {
    const before = site.requested.filter((p) => p === "/shell.html").length
    const page = Result.getOrThrow(await render(renderer, requestFor("/shell.html", { document: { body: new TextEncoder().encode(SHELL_PAGE), contentType: "text/html" } })))
    expect(page.html).toContain(ARTICLE.paragraphs[2])
    expect(site.requested.filter((p) => p === "/shell.html").length).toBe(before)
  })

  it("follows the page's redirect, each hop judged, and names the final URL", async () => {
    const page = Result.getOrThrow(await render(renderer, requestFor("/hop")))
    expect(page.url).toBe(`http://${appHost}/shell.html`)
    expect(page.html).toContain(ARTICLE.title)
  })

  it("refuses every request for a refused address, in every spelling, with no connection made", async () => {
    const page = Result.getOrThrow(await render(renderer, requestFor("/reach.html", { wait: { _tag: "Selector", selector: "#done" } })))
    expect(page.html).toContain("all tried")
    const outcomes = [...(/<ul id="out">(.*?)<\/ul>/s.exec(page.html)?.[1] ?? "").matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1])
    // Each fetch of a refused address, the POST and the redirect failed in the page; the socket never opened.
    expect(outcomes.length).toBe(10)
    for (const outcome of outcomes) expect(outcome).toMatch(/^refused /)
    expect(stand.connections()).toBe(0)
  })

  it("refuses a page whose own address is refused", async () => {
    const result = await render(renderer, { ...requestFor("/shell.html"), url: `http://${EVIL_HOST}:${site.port}/shell.html` })
    expect(Result.isFailure(result) && result.failure.reason).toBe("refused")
    if (Result.isFailure(result)) expect(result.failure.message).toContain("loopback address")
    const direct = await render(renderer, { ...requestFor("/shell.html"), url: `http://127.0.0.1:${stand.port}/` })
    expect(Result.isFailure(direct) && direct.failure.reason).toBe("refused")
    expect(stand.connections()).toBe(0)
  })

  it("reports the site's error status", async () => {
    const result = await render(renderer, requestFor("/gone.html"))
    expect(Result.isFailure(result) && result.failure.reason).toBe("http_status")
    if (Result.isFailure(result)) expect(result.failure.status).toBe(404)
  })

  it("does not download a page that is an attachment", async () => {
    const result = await render(renderer, requestFor("/download"))
    expect(Result.isFailure(result) && result.failure.reason).toBe("failed")
    if (Result.isFailure(result)) expect(result.failure.message).toContain("not HTML")
  })

  it("gives each page a fresh context: no cookie or storage from the page before", async () => {
    const first = Result.getOrThrow(await render(renderer, requestFor("/storage.html")))
    const second = Result.getOrThrow(await render(renderer, requestFor("/storage.html")))
    expect(first.html).toContain("cookie=none stored=none")
    expect(second.html).toContain("cookie=none stored=none")
  })

  it("ends a page whose document never arrives at the deadline", async () => {
    const result = await render(renderer, requestFor("/never.html", { timeoutMs: 2000 }))
    expect(Result.isFailure(result) && result.failure.reason).toBe("timeout")
  })

  it("reads a page whose network never goes quiet as it stands at the deadline", async () => {
    const page = Result.getOrThrow(await render(renderer, requestFor("/polls.html", { timeoutMs: 2500 })))
    expect(page.html).toContain("Live scores")
  })

  it("ends the wait for a selector that never appears at the deadline, naming it", async () => {
    const result = await render(renderer, requestFor("/shell.html", { timeoutMs: 2000, wait: { _tag: "Selector", selector: "#never-there" } }))
    expect(Result.isFailure(result) && result.failure.reason).toBe("timeout")
    if (Result.isFailure(result)) expect(result.failure.message).toContain("#never-there")
  })

  it("renders at most `pages` pages at once; the others wait their turn", async () => {
    const pooled = rendererOf({ pages: 1 })
    try {
      slowMax = 0
      const pages = await Promise.all([1, 2, 3].map(() => render(pooled, requestFor("/slow.html"))))
      for (const result of pages) expect(Result.getOrThrow(result).html).toContain("slow answer arrived")
      expect(slowMax).toBe(1)
    } finally {
      await pooled.dispose()
    }
  })

  it("fails the page whose browser is killed, and renders the next one in a new browser", async () => {
    const others = ownBrowserPids()
    const own = rendererOf()
    try {
      Result.getOrThrow(await render(own, requestFor("/shell.html")))
      const arrived = new Promise<void>((resolve) => (onHeld = resolve))
      const pending = render(own, requestFor("/holds.html"))
      await arrived
      const pids = ownBrowserPids().filter((pid) => !others.includes(pid))
      expect(pids.length).toBe(1)
      for (const pid of pids) process.kill(pid, "SIGKILL")
      const killed = await pending
      expect(Result.isFailure(killed) && killed.failure.reason).toBe("failed")
      if (Result.isFailure(killed)) expect(killed.failure.message).toContain("browser exited")
      const next = Result.getOrThrow(await render(own, requestFor("/shell.html")))
      expect(next.html).toContain(ARTICLE.title)
      expect(ownBrowserPids().some((pid) => !pids.includes(pid) && !others.includes(pid))).toBe(true)
    } finally {
      onHeld = undefined
      await own.dispose()
    }
  })

  it("says what to install when Chromium is not where it is configured", async () => {
    const missing = rendererOf({ executablePath: "/nonexistent/chromium" })
    try {
      const result = await render(missing, requestFor("/shell.html"))
      expect(Result.isFailure(result) && result.failure.reason).toBe("unavailable")
      if (Result.isFailure(result)) {
        expect(result.failure.message).toContain("/nonexistent/chromium")
        expect(result.failure.message).toContain("apt-get install chromium")
        expect(result.failure.message).toContain("fetch.chromiumPath")
      }
    } finally {
      await missing.dispose()
    }
  })
})
