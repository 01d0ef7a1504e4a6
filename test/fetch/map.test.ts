/**
 * POST /api/search/map through the real Node server against loopback sites (allowed by host:port
 * in the fetch config): a site's URLs from its sitemaps (robots.txt's Sitemap line, an index, a
 * gzipped sitemap) and then its start page's links; only its host, only what robots.txt lets
 * PeriscopeBot read, each once, and what each site was asked (no listed page is fetched); the
 * bounds (a request's limit, fetch.mapMaxUrls, fetch.mapTimeoutMs) with what was found and why
 * it stopped; refusals and failures with their statuses; bad bodies 400 naming the field; the
 * MCP tool map_site.
 */
import { gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { callTool, FETCH_KEY, type FetchServer, type Handler, postJson, redirect, send, serveSite, type Site, startFetchServer } from "./support.ts"

const html = (body: string) => `<!doctype html><html><head><title>Start</title></head><body>${body}</body></html>`
const urlset = (locs: ReadonlyArray<string>) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${l}</loc></url>`).join("")}</urlset>`
const sitemapIndex = (locs: ReadonlyArray<string>) =>
  `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${
    locs.map((l) => `<sitemap><loc>${l}</loc></sitemap>`).join("")
  }</sitemapindex>`
const text = (body: string, status = 200): Handler => send(body, "text/plain", status)
const xml = (body: string | Uint8Array, type = "application/xml"): Handler => send(body, type)

/** Serves `routes` once the site's own origin is known (robots.txt and sitemaps name it). */
const siteWith = async (routes: (origin: string) => Record<string, Handler>): Promise<Site> => {
  let built: Record<string, Handler> = {}
  const site = await serveSite(new Proxy({}, { get: (_t, path: string) => built[path] }) as Record<string, Handler>)
  built = routes(site.origin)
  return site
}

let mapped: Site
let linked: Site
let slow: Site
let closed: Site
let broken: Site
let unlisted: Site
let server: FetchServer
let bounded: FetchServer
let timed: FetchServer

beforeAll(async () => {
  mapped = await siteWith((origin) => ({
    "/robots.txt": text(`User-agent: *\nDisallow: /private/\n\nSitemap: ${origin}/sitemap-index.xml\n`),
    "/sitemap-index.xml": xml(sitemapIndex([`${origin}/sitemap-pages.xml`, `${origin}/sitemap-blog.xml.gz`])),
    "/sitemap-pages.xml": xml(urlset([`${origin}/`, `${origin}/docs/a`, `${origin}/docs/b`, `${origin}/private/secret`, "http://other.example/x", `${origin}/docs/a`])),
    "/sitemap-blog.xml.gz": xml(gzipSync(urlset([`${origin}/blog/1`, `${origin}/blog/2`])), "application/gzip"),
    "/": send(
      html(`<main><a href="/docs/a">A</a> <a href="/about">About</a> <a href="/about#team">Team</a> <a href="/private/x">Private</a>
        <a href="https://elsewhere.example/">Elsewhere</a> <a rel="nofollow" href="/nofollowed">Not followed</a></main>`),
      "text/html; charset=utf-8"
    )
  }))
  linked = await siteWith(() => ({
    "/robots.txt": text("User-agent: PeriscopeBot\nDisallow: /hidden\n"),
    "/jump": redirect("http://10.0.0.1/"),
    "/start.html": send(html(`<a href="page1.html">1</a> <a href="/page2.html?x=1">2</a> <a href="/hidden/3.html">3</a> <a href="mailto:a@b.c">mail</a>`), "text/html")
  }))
  slow = await siteWith((origin) => ({
    "/robots.txt": text(`Sitemap: ${origin}/never.xml\n`),
    "/": send(html(`<a href="/later">Later</a>`), "text/html"),
    // Never answers: the map ends at its time limit.
    "/never.xml": () => {}
  }))
  closed = await siteWith(() => ({ "/robots.txt": text("User-agent: *\nDisallow: /\n"), "/": send(html("closed"), "text/html") }))
  broken = await siteWith(() => ({ "/robots.txt": text("down", 500), "/": send(html("up"), "text/html") }))
  unlisted = await serveSite({ "/": send(html("never asked"), "text/html") })
  const allowHosts = [mapped.host, linked.host, slow.host, closed.host, broken.host]
  server = await startFetchServer({ allowHosts })
  bounded = await startFetchServer({ allowHosts, mapMaxUrls: 2 })
  timed = await startFetchServer({ allowHosts, mapTimeoutMs: 2000 })
})

afterAll(async () => {
  await Promise.all([server?.close(), bounded?.close(), timed?.close()])
  await Promise.all([mapped, linked, slow, closed, broken, unlisted].map((site) => site?.close()))
})

const map = (body: unknown, on: FetchServer = server) => postJson(on.url, "/api/search/map", body)

describe("map", () => {
  it("lists the start page, its sitemaps' pages, then its links: one host, robots.txt honoured, each once", async () => {
    const { status, body } = await map({ url: `${mapped.origin}/` })
    expect(status).toBe(200)
    expect(body).toEqual({
      success: true,
      code: "200",
      message: "success",
      exception: null,
      extra: null,
      data: {
        url: `${mapped.origin}/`,
        urls: ["/", "/docs/a", "/docs/b", "/blog/1", "/blog/2", "/about"].map((path) => `${mapped.origin}${path}`),
        truncated: null
      }
    })
    // Read: robots.txt, the start page, the sitemaps; never a page the map lists.
    expect([...new Set(mapped.requested)].sort()).toEqual(["/", "/robots.txt", "/sitemap-blog.xml.gz", "/sitemap-index.xml", "/sitemap-pages.xml"])
  })

  it("without a sitemap, gives the start page's links on its host that robots.txt allows", async () => {
    const { status, body } = await map({ url: `${linked.origin}/start.html` })
    expect(status).toBe(200)
    expect(body.data).toEqual({
      url: `${linked.origin}/start.html`,
      urls: [`${linked.origin}/start.html`, `${linked.origin}/page1.html`, `${linked.origin}/page2.html?x=1`],
      truncated: null
    })
    expect(linked.requested).not.toContain("/hidden/3.html")
  })

  it("stops at the request's limit and says so", async () => {
    const { body } = await map({ url: `${mapped.origin}/`, limit: 3 })
    expect(body.data).toEqual({ url: `${mapped.origin}/`, urls: ["/", "/docs/a", "/docs/b"].map((path) => `${mapped.origin}${path}`), truncated: "limit" })
  })

  it("keeps a request's limit within fetch.mapMaxUrls", async () => {
    const { body } = await map({ url: `${mapped.origin}/`, limit: 100 }, bounded)
    expect(body.data.urls).toEqual([`${mapped.origin}/`, `${mapped.origin}/docs/a`])
    expect(body.data.truncated).toBe("limit")
  })

  it("ends at fetch.mapTimeoutMs with the URLs found so far", async () => {
    const { status, body } = await map({ url: `${slow.origin}/` }, timed)
    expect(status).toBe(200)
    expect(body.data).toEqual({ url: `${slow.origin}/`, urls: [`${slow.origin}/`], truncated: "time" })
  })

  it("a site whose robots.txt allows none of it: 403 FetchRefused, only robots.txt read", async () => {
    const { status, body } = await map({ url: `${closed.origin}/` })
    expect(status).toBe(403)
    expect(body).toMatchObject({ success: false, code: "400", exception: { type: "FetchRefused", detail: expect.stringContaining("robots.txt") } })
    expect(closed.requested).toEqual(["/robots.txt"])
  })

  it("a site whose robots.txt cannot be read is not mapped: 502 FetchFailed", async () => {
    const { status, body } = await map({ url: `${broken.origin}/` })
    expect(status).toBe(502)
    expect(body).toMatchObject({ code: "500", exception: { type: "FetchFailed", detail: expect.stringContaining("robots.txt") } })
    expect(broken.requested).toEqual(["/robots.txt"])
  })

  it("a start page that is missing, with no sitemap: the page's error (502 SiteHttpStatus)", async () => {
    const { status, body } = await map({ url: `${linked.origin}/gone.html` })
    expect(status).toBe(502)
    expect(body.exception).toEqual({ type: "SiteHttpStatus", detail: "the site answered HTTP 404" })
  })

  it("refuses an address the fetch policy refuses (403), with no request made", async () => {
    for (const url of [`${unlisted.origin}/`, "http://10.0.0.1/", "http://[::1]/"]) {
      const { status, body } = await map({ url })
      expect(status, url).toBe(403)
      expect(body.exception.type).toBe("FetchRefused")
      expect(body.exception.detail).toContain("fetch.allowHosts")
    }
    expect(unlisted.requested).toEqual([])
    // A redirect is judged as the URL asked is.
    const jump = await map({ url: `${linked.origin}/jump` })
    expect(jump.status).toBe(403)
    expect(jump.body.exception.detail).toContain("10.0.0.1")
  })

  it("is a keyed route: no key, 401", async () => {
    const response = await fetch(`${server.url}/api/search/map`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: `${mapped.origin}/` }) })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ success: false, code: "90402" })
  })

  it("the MCP tool map_site gives the same URLs", async () => {
    const { result } = await callTool(server.url, "map_site", { url: `${linked.origin}/start.html`, limit: 2 })
    expect(result.isError).toBe(false)
    expect(result.structuredContent).toEqual({ url: `${linked.origin}/start.html`, urls: [`${linked.origin}/start.html`, `${linked.origin}/page1.html`], truncated: "limit" })
    expect(result.content[0].text).toContain(`${linked.origin}/page1.html`)
    const refused = await callTool(server.url, "map_site", { url: "http://10.0.0.1/" })
    expect(refused.result.isError).toBe(true)
    const bad = await callTool(server.url, "map_site", { url: `${linked.origin}/`, limit: 0 })
    expect(bad.error).toMatchObject({ code: -32602 })
    expect(bad.error.message).toContain("limit: must be an integer from 1 to 100000")
  })
})

describe("map: bad input", () => {
  const BAD: ReadonlyArray<readonly [name: string, body: unknown, type: string, message: string]> = [
    ["missing url", {}, "InvalidRequest", "url: is required"],
    ["url not a string", { url: 42 }, "InvalidRequest", "url: must be an absolute http(s) URL of at most 8192 characters, got 42"],
    ["empty url", { url: "" }, "InvalidRequest", "url: must be an absolute http(s) URL of at most 8192 characters"],
    ["limit zero", { url: "https://example.com/", limit: 0 }, "InvalidRequest", "limit: must be an integer from 1 to 100000, got 0"],
    ["limit too large", { url: "https://example.com/", limit: 100_001 }, "InvalidRequest", "limit: must be an integer from 1 to 100000, got 100001"],
    ["limit a fraction", { url: "https://example.com/", limit: 1.5 }, "InvalidRequest", "limit: must be an integer from 1 to 100000, got 1.5"],
    ["body an array", [], "InvalidRequest", "request body: must be a JSON object with url and optional limit"],
    ["not an http URL", { url: "gopher://example.com/" }, "InvalidUrl", "url: must be an http(s) URL, got a gopher: URL"],
    ["credentials in the URL", { url: "https://user:secret@example.com/" }, "InvalidUrl", "url: must not carry credentials"]
  ]

  it.each(BAD)("%s: 400 naming the field", async (_name, body, type, message) => {
    const { status, body: answer } = await map(body)
    expect(status).toBe(400)
    expect(answer).toMatchObject({ success: false, code: "400", data: null, extra: null, exception: { type } })
    expect(answer.message.startsWith(message), answer.message).toBe(true)
    expect(JSON.stringify(answer)).not.toContain("secret")
  })

  it("not JSON: 400 InvalidJson", async () => {
    const response = await fetch(`${server.url}/api/search/map`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${FETCH_KEY}` },
      body: "{url:"
    })
    expect(response.status).toBe(400)
    expect(((await response.json()) as any).exception.type).toBe("InvalidJson")
  })
})
