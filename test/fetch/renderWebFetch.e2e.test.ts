/**
 * POST /api/search/webFetch with `render`, through Periscope's own composition over the Node
 * platform and Debian's Chromium, against pages served on loopback under an allowed test name:
 * an app shell is empty read as sent and whole rendered (asked for, or found by auto); an article
 * is not rendered by auto; rendered pages are cached apart; a script reaching for a refused
 * address gets no connection; a killed browser fails its page and the next page gets a new one;
 * a page that never arrives ends at fetch.timeoutMs; without Chromium,
 * always answers 501 naming what to install and auto reads the page as sent, as it does on a
 * platform with no browser (Deno, the embedded library).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { APP_HOST, APP_SCRIPT, ARTICLE, EVIL_HOST, haveChromium, ownBrowserPids, SHELL_PAGE, standIn, type StandIn, startRenderServer } from "./renderSite.ts"
import { type FetchServer, postFetch, send, serveSite, type Site } from "./support.ts"

const run = haveChromium("the webFetch rendering tests")

describe.skipIf(!run)("webFetch render", () => {
  let site: Site
  let stand: StandIn
  let server: FetchServer
  let appHost: string
  const held: Array<ServerResponse> = []
  /** Called when the site receives /held; the request is then kept open until the suite ends. */
  let onHeld: (() => void) | undefined
  const url = (path: string) => `http://${appHost}${path}`
  const servers: Array<FetchServer> = []
  const start = async (...args: Parameters<typeof startRenderServer>) => {
    const started = await startRenderServer(...args)
    servers.push(started)
    return started
  }

  beforeAll(async () => {
    stand = await standIn()
    site = await serveSite({
      "/shell.html": send(SHELL_PAGE, "text/html; charset=utf-8"),
      "/app.js": send(APP_SCRIPT, "text/javascript"),
      "/api/article": send(JSON.stringify(ARTICLE), "application/json"),
      "/article.html": send(
        `<!doctype html><html><head><title>${ARTICLE.title}</title></head><body><main><article><h1>${ARTICLE.title}</h1>` +
          `${ARTICLE.paragraphs.map((p) => `<p>${p}</p>`).join("")}</article></main><script src="/app.js"></script></body></html>`,
        "text/html"
      ),
      "/reach.html": send(
        `<!doctype html><html><head><title>Reaching out</title></head><body><div id="root"></div><script>
          Promise.allSettled([fetch("http://${EVIL_HOST}:${stand.port}/"), fetch("http://127.0.0.1:${stand.port}/"), fetch("http://[::1]:${stand.port}/")])
            .then((all) => { document.getElementById("root").innerHTML = "<main><h1>Outcomes</h1><p>" + all.map((o) => o.status).join(" ") + "</p></main>" })
        </script></body></html>`,
        "text/html"
      ),
      "/holds.html": send(
        `<!doctype html><html><head><title>Holds</title></head><body><div id="root"></div><script>
          fetch("/held").then((r) => r.text()).then((t) => { document.getElementById("root").textContent = t })
        </script></body></html>`,
        "text/html"
      ),
      "/held": (_q: IncomingMessage, r: ServerResponse) => {
        held.push(r)
        onHeld?.()
      },
      "/never.html": (_q: IncomingMessage, r: ServerResponse) => {
        r.writeHead(200, { "content-type": "text/html" })
        r.write(`<!doctype html><html><head><title>Never</title></head><body><div id="root"></div><script src="/never.js"></script>`)
        r.end()
      },
      "/never.js": (_q: IncomingMessage, r: ServerResponse) => {
        // The script's headers, then nothing: the document never finishes loading.
        r.writeHead(200, { "content-type": "text/javascript" })
        r.write("// ")
        held.push(r)
      }
    })
    appHost = `${APP_HOST}:${site.port}`
    server = await start({ allowHosts: [appHost] })
  })

  afterAll(async () => {
    for (const r of held) r.destroy()
    for (const s of servers) await s.close()
    await site?.close()
    await stand?.close()
  })

  it("reads an app shell as empty when not rendered, and whole when rendered", async () => {
    const plain = await postFetch(server.url, { url: url("/shell.html"), render: "never" })
    expect(plain.status).toBe(200)
    expect(plain.body.data.content).not.toContain(ARTICLE.paragraphs[0])

    const rendered = await postFetch(server.url, { url: url("/shell.html"), render: "always" })
    expect(rendered.status).toBe(200)
    expect(rendered.body.data.url).toBe(url("/shell.html"))
    expect(rendered.body.data.content).toContain(`# ${ARTICLE.title}`)
    for (const paragraph of ARTICLE.paragraphs) expect(rendered.body.data.content).toContain(paragraph)
    expect(rendered.body.data.fromCache).toBe(false)
    const again = await postFetch(server.url, { url: url("/shell.html"), render: "always" })
    expect(again.body.data.fromCache).toBe(true)
    expect(again.body.data.content).toBe(rendered.body.data.content)
  })

  it("renders an app shell on its own under auto, the default", async () => {
    const auto = await postFetch(server.url, { url: url("/shell.html") })
    expect(auto.status).toBe(200)
    for (const paragraph of ARTICLE.paragraphs) expect(auto.body.data.content).toContain(paragraph)
  })

  it("does not render a page with its text in the HTML under auto", async () => {
    const scripts = site.requested.filter((p) => p === "/app.js").length
    const article = await postFetch(server.url, { url: url("/article.html"), render: "auto" })
    expect(article.status).toBe(200)
    expect(article.body.data.content).toContain(ARTICLE.paragraphs[1])
    expect(site.requested.filter((p) => p === "/app.js").length).toBe(scripts)
  })

  it("gives a rendered page's scripts no connection to a refused address", async () => {
    const page = await postFetch(server.url, { url: url("/reach.html"), render: "always" })
    expect(page.status).toBe(200)
    expect(page.body.data.content).toContain("rejected rejected rejected")
    expect(stand.connections()).toBe(0)
  })

  it("fails the page whose browser is killed mid-render, and renders the next one", async () => {
    const arrived = new Promise<void>((resolve) => (onHeld = resolve))
    const pending = postFetch(server.url, { url: url("/holds.html"), render: "always" })
    await arrived
    const browsers = ownBrowserPids()
    expect(browsers.length).toBe(1)
    process.kill(browsers[0]!, "SIGKILL")
    const killed = await pending
    expect(killed.status).toBe(502)
    expect(killed.body.exception.type).toBe("FetchFailed")
    expect(killed.body.message).toContain("browser exited")
    const next = await postFetch(server.url, { url: url("/shell.html"), render: "always", fresh: true })
    expect(next.status).toBe(200)
    expect(next.body.data.content).toContain(ARTICLE.paragraphs[1])
    onHeld = undefined
  })

  it("ends a page that never finishes loading at fetch.timeoutMs", async () => {
    const quick = await start({ allowHosts: [appHost], timeoutMs: 2000 })
    const page = await postFetch(quick.url, { url: url("/never.html"), render: "always" })
    expect(page.status).toBe(504)
    expect(page.body.exception.type).toBe("FetchTimeout")
  })

  it("answers always with 501 naming what to install when Chromium is missing; auto reads the page as sent", async () => {
    const missing = await start({ allowHosts: [appHost], chromiumPath: "/nonexistent/chromium" })
    const always = await postFetch(missing.url, { url: url("/shell.html"), render: "always" })
    expect(always.status).toBe(501)
    expect(always.body.exception.type).toBe("RenderUnavailable")
    expect(always.body.message).toContain("/nonexistent/chromium")
    expect(always.body.message).toContain("apt-get install chromium")
    const auto = await postFetch(missing.url, { url: url("/shell.html"), render: "auto" })
    expect(auto.status).toBe(200)
    expect(auto.body.data.title).toBe("Widget docs")
    expect(auto.body.data.content).not.toContain(ARTICLE.paragraphs[0])
  })

  it("has no browser where the platform gives none: always is 501, auto reads the page as sent", async () => {
    const bare = await start({ allowHosts: [appHost] }, { renderer: false })
    const always = await postFetch(bare.url, { url: url("/shell.html"), render: "always" })
    expect(always.status).toBe(501)
    expect(always.body.exception.type).toBe("RenderUnavailable")
    expect(always.body.message).toContain("apt-get install chromium")
    const auto = await postFetch(bare.url, { url: url("/shell.html") })
    expect(auto.status).toBe(200)
    expect(auto.body.data.content).not.toContain(ARTICLE.paragraphs[0])
  })

  it("refuses a render value that is not one of the three, naming the field", async () => {
    const bad = await postFetch(server.url, { url: url("/shell.html"), render: "sometimes" })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toContain("render")
    expect(bad.body.message).toContain("must be never, auto or always")
  })
})
