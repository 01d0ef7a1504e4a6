/**
 * webFetch with `urls` through the real Node server against loopback sites (allowed by host:port
 * in the fetch config): the answers in the order asked, each failure the type, detail and status
 * a fetch of that URL alone answers, never failing the others; at most fetch.perHostConcurrency
 * pages of one host at once (the stand-in counts what it sees at once), each host its own; Tavily's
 * extract under the same limit; every URL past the first charged to the key; bad bodies 400
 * naming the fields. A request with `url` keeps its answer's shape.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FetchServer, type Handler, postFetch, postJson, send, serveSite, type Site, startFetchServer } from "./support.ts"

const page = (title: string, text: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`

/**
 * Pages held until `release` requests wait together, or `holdMs` pass, counting the most
 * requests waiting at once, over all the sites that share the gate and per site. Held for one
 * more than a limit allows, a page is answered after `holdMs`: a server over its limit would
 * have sent that one more request by then.
 */
const makeGate = (release: number, holdMs: number) => {
  let waiting: Array<() => void> = []
  let inFlight = 0
  const state = { most: 0, perSite: new Map<string, { now: number; most: number }>() }
  const handler = (site: string): Handler => (_q, r) => {
    const own = state.perSite.get(site) ?? { now: 0, most: 0 }
    state.perSite.set(site, own)
    inFlight++
    own.now++
    state.most = Math.max(state.most, inFlight)
    own.most = Math.max(own.most, own.now)
    const answer = () => {
      inFlight--
      own.now--
      r.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      r.end(page(`Held ${site}`, "A page held until enough requests wait together."))
    }
    waiting.push(answer)
    if (waiting.length >= release) {
      const ready = waiting
      waiting = []
      for (const go of ready) go()
    } else {
      setTimeout(() => {
        if (!waiting.includes(answer)) return
        waiting = waiting.filter((w) => w !== answer)
        answer()
      }, holdMs)
    }
  }
  return { handler, state }
}

const paths = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `/${prefix}${i}`)

let site: Site
let other: Site
let server: FetchServer
// Three pages of one host at a time: a fourth never comes while three wait. One gate per test below.
const oneHost = makeGate(4, 500)
const tavily = makeGate(4, 500)
// Released only when six wait at once: possible only when each host has its own three.
const twoHosts = makeGate(6, 4000)

beforeAll(async () => {
  const routes: Record<string, Handler> = {
    "/a": send(page("Page A", "The first page of the list."), "text/html; charset=utf-8"),
    "/b": send(page("Page B", "The second page of the list."), "text/html; charset=utf-8"),
    "/image.png": send(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), "image/png")
  }
  for (const path of paths("one", 9)) routes[path] = oneHost.handler("site")
  for (const path of paths("tavily", 6)) routes[path] = tavily.handler("site")
  for (const path of paths("two", 3)) routes[path] = twoHosts.handler("site")
  site = await serveSite(routes)
  other = await serveSite(Object.fromEntries(paths("two", 3).map((path) => [path, twoHosts.handler("other")])))
  server = await startFetchServer({ allowHosts: [site.host, other.host], perHostConcurrency: 3 })
})

afterAll(async () => {
  await server?.close()
  await site?.close()
  await other?.close()
})

describe("webFetch with urls", () => {
  it("answers every URL in the order asked; a failure is its entry's, with what a fetch of it alone answers", async () => {
    const asked = [
      `${site.origin}/a`,
      `${site.origin}/missing`,
      "http://10.0.0.1/",
      "gopher://example.com/",
      `${site.origin}/b`,
      `${site.origin}/image.png`,
      `${site.origin}/a#again`
    ]
    const before = site.requested.length
    const { status, body } = await postFetch(server.url, { urls: asked, format: "text" })
    expect(status).toBe(200)
    expect(body).toMatchObject({ success: true, code: "200", message: "success", exception: null, extra: null })
    expect(body.data).toHaveLength(asked.length)
    const [a, missing, refused, invalid, b, image, again] = body.data
    expect(a).toMatchObject({ title: "Page A", url: `${site.origin}/a`, contentType: "text/html" })
    expect(a.content).toContain("The first page of the list.")
    expect(Object.keys(a)).toEqual(["title", "content", "url", "fromCache", "date", "contentType"])
    expect(b).toMatchObject({ title: "Page B", url: `${site.origin}/b` })
    expect(again).toMatchObject({ title: "Page A", url: `${site.origin}/a` })
    expect(missing).toEqual({ url: asked[1], error: { type: "SiteHttpStatus", detail: "the site answered HTTP 404", status: 502 } })
    expect(refused).toMatchObject({ url: asked[2], error: { type: "FetchRefused", status: 403 } })
    expect(invalid).toEqual({ url: asked[3], error: { type: "InvalidUrl", detail: "url: must be an http(s) URL, got a gopher: URL", status: 400 } })
    expect(image).toMatchObject({ url: asked[5], error: { type: "UnsupportedContentType", status: 415 } })
    // The same failures asked alone: the same type, detail and status.
    for (const [i, entry] of [[1, missing], [2, refused], [3, invalid], [5, image]] as const) {
      const alone = await postFetch(server.url, { url: asked[i], format: "text" })
      expect(alone.status).toBe(entry.error.status)
      expect(alone.body.exception).toEqual({ type: entry.error.type, detail: entry.error.detail })
    }
    // /a asked twice (the fragment is never sent) reached the site once.
    expect(site.requested.slice(before).filter((path) => path === "/a")).toHaveLength(1)
  })

  it("a request with url answers as it always has: one page, no list, no chunks", async () => {
    const { status, body } = await postFetch(server.url, { url: `${site.origin}/b` })
    expect(status).toBe(200)
    expect(Object.keys(body)).toEqual(["success", "code", "message", "exception", "data", "extra"])
    expect(Object.keys(body.data)).toEqual(["title", "content", "url", "fromCache", "date", "contentType"])
    expect(body.extra).toBeNull()
  })

  it("reads at most fetch.perHostConcurrency pages of one host at once", async () => {
    const { status, body } = await postFetch(server.url, { urls: paths("one", 9).map((path) => `${site.origin}${path}`) })
    expect(status).toBe(200)
    expect(body.data.map((entry: any) => entry.title)).toEqual(Array.from({ length: 9 }, () => "Held site"))
    expect(oneHost.state.most).toBe(3)
  })

  it("limits each host apart: two hosts are read three and three at once", async () => {
    const urls = [...paths("two", 3).map((path) => `${site.origin}${path}`), ...paths("two", 3).map((path) => `${other.origin}${path}`)]
    const { status, body } = await postFetch(server.url, { urls })
    expect(status).toBe(200)
    expect(body.data.map((entry: any) => entry.title)).toEqual([...Array(3).fill("Held site"), ...Array(3).fill("Held other")])
    expect(twoHosts.state.most).toBe(6)
    expect(twoHosts.state.perSite.get("site")!.most).toBe(3)
    expect(twoHosts.state.perSite.get("other")!.most).toBe(3)
  })

  it("Tavily's extract reads its URLs under the same per-host limit", async () => {
    const urls = paths("tavily", 6).map((path) => `${site.origin}${path}`)
    const { status, body } = await postJson(server.url, "/tavily/extract", { urls })
    expect(status).toBe(200)
    expect(body.results.map((r: any) => r.url)).toEqual(urls)
    expect(body.failed_results).toEqual([])
    expect(tavily.state.most).toBe(3)
  })

  it("with addToIndex, extra.index has one entry per URL: null where the page was not read", async () => {
    const { body } = await postFetch(server.url, { urls: [`${site.origin}/a`, `${site.origin}/missing`], addToIndex: true })
    expect(body.extra.index).toEqual([expect.objectContaining({ added: false, reason: "no_index" }), null])
  })
})

describe("webFetch with urls: the key's limit", () => {
  let limited: FetchServer
  beforeAll(async () => {
    limited = await startFetchServer({ allowHosts: [site.host] }, { perMinute: 3 })
  })
  afterAll(async () => {
    await limited?.close()
  })

  it("counts each URL past the first as one more request: five URLs under a limit of three are refused, none fetched", async () => {
    const before = site.requested.length
    const { status, body } = await postFetch(limited.url, { urls: ["/a", "/b", "/a?1", "/b?1", "/a?2"].map((path) => `${site.origin}${path}`) })
    expect(status).toBe(429)
    expect(body).toMatchObject({ success: false, code: "40303" })
    expect(site.requested.length).toBe(before)
  })
})

describe("webFetch: url and urls, bad input", () => {
  const url = "https://example.com/"
  const BAD: ReadonlyArray<readonly [name: string, body: unknown, message: string]> = [
    ["neither url nor urls", { format: "text" }, "url: is required (or urls, a list of up to 20 URLs)"],
    ["both url and urls", { url, urls: [url] }, "urls: cannot be sent with url: send url or urls, not both"],
    ["urls empty", { urls: [] }, "urls: must be an array of 1 to 20 absolute http(s) URLs"],
    ["urls over 20", { urls: Array.from({ length: 21 }, () => url) }, "urls: must be an array of 1 to 20 absolute http(s) URLs"],
    ["urls a string", { urls: url }, "urls: must be an array of 1 to 20 absolute http(s) URLs"],
    ["an entry not a string", { urls: [url, 42] }, "urls[1]: must be an absolute http(s) URL of at most 8192 characters, got 42"],
    ["an empty entry", { urls: [url, ""] }, "urls[1]: must be an absolute http(s) URL of at most 8192 characters"],
    ["query blank", { url, query: "   " }, "query: must be a non-empty string of at most 1000 characters"],
    ["query too long", { url, query: "a".repeat(1001) }, "query: must be a non-empty string of at most 1000 characters"],
    ["query with format html", { url, query: "install", format: "html" }, "format: must be markdown or text with query (chunks are not given as HTML)"],
    ["maxTokens zero", { url, maxTokens: 0 }, "maxTokens: must be an integer from 1 to 200000, got 0"],
    ["maxTokens too large", { urls: [url], maxTokens: 200_001 }, "maxTokens: must be an integer from 1 to 200000, got 200001"]
  ]

  it.each(BAD)("%s: 400 naming the field", async (_name, body, message) => {
    const answer = await postFetch(server.url, body)
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({ success: false, code: "400", data: null, extra: null, exception: { type: "InvalidRequest" } })
    expect(answer.body.message.startsWith(message), answer.body.message).toBe(true)
  })
})
