/**
 * webFetch against pages made to cost far more to read than their size (hostilePages.ts), served
 * from a loopback site the allow-list admits, read by the Node server's job workers: each
 * dimension has its bound and its own answer, named in the error.
 *
 * - HTML nested 200,000 deep: 413 naming fetch.maxHtmlDepth, measured before any parse.
 * - More elements than fetch.maxHtmlElements: 413 naming it.
 * - A PDF whose one stream inflates to 300 MB: 413 naming fetch.maxPdfDecodedBytes.
 * - A 20,000-page PDF: 413 with its page count and fetch.maxPdfPages.
 * - A page whose reading outlasts the fetch's deadline: 504 at the deadline, its worker ended;
 *   the next page is read by its replacement.
 * - A page whose reading outgrows jobs.memoryMb: 413 naming it.
 * - Every worker busy and no room to wait (jobs.queue 0): 503 ServerBusy with Retry-After.
 * Pages within the bounds still read (a PDF of a few pages, an ordinary page).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { largeHtml, manyPagesPdf, nestedHtml, pdfBomb } from "./hostilePages.ts"
import { type FetchServer, postFetch, send, serveSite, type Site, startFetchServer } from "./support.ts"

let site: Site
const servers: Array<FetchServer> = []
const start = async (...args: Parameters<typeof startFetchServer>) => {
  const server = await startFetchServer(...args)
  servers.push(server)
  return server
}

beforeAll(async () => {
  const bomb = await pdfBomb(300 * 1024 * 1024)
  site = await serveSite({
    "/nested.html": send(nestedHtml(200_000), "text/html"),
    "/many-elements.html": send(`<html><body>${"<span>x</span>".repeat(5000)}</body></html>`, "text/html"),
    "/bomb.pdf": send(bomb, "application/pdf"),
    "/pages.pdf": send(manyPagesPdf(20_000), "application/pdf"),
    "/few-pages.pdf": send(manyPagesPdf(3), "application/pdf"),
    "/large.html": send(largeHtml(6 * 1024 * 1024, 1), "text/html"),
    "/ordinary.html": send("<html><head><title>Ordinary</title></head><body><main><p>An ordinary page, read in full.</p></main></body></html>", "text/html")
  })
}, 60_000)

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await site.close()
})

const url = (path: string) => `${site.origin}${path}`

describe("webFetch page bounds", () => {
  it("refuses HTML nested deeper than fetch.maxHtmlDepth, naming it", async () => {
    const server = await start({ allowHosts: [site.host] })
    const { status, body } = await postFetch(server.url, { url: url("/nested.html") })
    expect(status).toBe(413)
    expect(body.exception.type).toBe("PageTooLarge")
    expect(body.message).toBe("the page nests elements more than 512 deep, the limit (fetch.maxHtmlDepth)")
    // The bound is a setting: a lower one names its own value.
    const strict = await start({ allowHosts: [site.host], maxHtmlDepth: 16 })
    expect((await postFetch(strict.url, { url: url("/nested.html") })).body.message).toBe("the page nests elements more than 16 deep, the limit (fetch.maxHtmlDepth)")
  }, 60_000)

  it("refuses a page with more elements than fetch.maxHtmlElements, naming it", async () => {
    const server = await start({ allowHosts: [site.host], maxHtmlElements: 1000 })
    const { status, body } = await postFetch(server.url, { url: url("/many-elements.html") })
    expect(status).toBe(413)
    expect(body.message).toBe("the page has more than 1000 elements, the limit (fetch.maxHtmlElements)")
    expect((await postFetch(server.url, { url: url("/ordinary.html") })).body.data.content).toBe("An ordinary page, read in full.")
  }, 60_000)

  it("refuses a PDF whose streams inflate beyond fetch.maxPdfDecodedBytes, and one with more pages than fetch.maxPdfPages", async () => {
    const server = await start({ allowHosts: [site.host] })
    const bomb = await postFetch(server.url, { url: url("/bomb.pdf") })
    expect(bomb.status).toBe(413)
    expect(bomb.body.message).toBe("the PDF's compressed streams inflate to more than 64.0 MiB, the limit (fetch.maxPdfDecodedBytes)")
    const pages = await postFetch(server.url, { url: url("/pages.pdf") })
    expect(pages.status).toBe(413)
    expect(pages.body.message).toBe("the PDF has 20000 pages, more than the limit of 1000 (fetch.maxPdfPages)")
    const few = await postFetch(server.url, { url: url("/few-pages.pdf") })
    expect(few.status).toBe(200)
    expect(few.body.data.content).toContain("One of very many pages")
  }, 60_000)

  it("answers 504 when reading outlasts the fetch's deadline, and reads the next page on a fresh worker", async () => {
    const server = await start({ allowHosts: [site.host], timeoutMs: 1000, maxHtmlElements: 10_000_000 }, { jobs: { workers: 1 } })
    const started = Date.now()
    const slow = await postFetch(server.url, { url: url("/large.html") })
    const waited = Date.now() - started
    expect(slow.status).toBe(504)
    expect(slow.body.exception.type).toBe("FetchTimeout")
    expect(slow.body.message).toBe("the page was not read within 1000 ms")
    // At the deadline (1 s and the read's grace), not when the reading would have ended.
    expect(waited).toBeLessThan(6000)
    // Its replacement starts and loads the reader while the fetch's own 1 s may run out: ask again until it answers.
    let next = await postFetch(server.url, { url: url("/ordinary.html") })
    for (let i = 0; i < 20 && next.status === 504; i++) next = await postFetch(server.url, { url: url("/ordinary.html") })
    expect(next.status).toBe(200)
  }, 60_000)

  it("answers 413 when reading a page outgrows jobs.memoryMb, naming it", async () => {
    const server = await start({ allowHosts: [site.host], timeoutMs: 60_000, maxHtmlElements: 10_000_000 }, { jobs: { workers: 1, memoryMb: 48 } })
    const { status, body } = await postFetch(server.url, { url: url("/large.html") })
    expect(status).toBe(413)
    expect(body.message).toBe("reading the page took more than the memory limit of 48 MB (jobs.memoryMb)")
    expect((await postFetch(server.url, { url: url("/ordinary.html") })).status).toBe(200)
  }, 120_000)

  it("answers 503 ServerBusy with Retry-After when every worker is busy and none may wait", async () => {
    const server = await start({ allowHosts: [site.host], timeoutMs: 3000, maxHtmlElements: 10_000_000, cacheTtlSeconds: 0 }, { jobs: { workers: 1, queue: 0 } })
    const slow = postFetch(server.url, { url: url("/large.html") })
    // The large page's body takes a moment to arrive and start reading: ask until the worker is taken.
    let busy: Awaited<ReturnType<typeof postFetch>> | undefined
    for (let i = 0; i < 100 && busy === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50))
      const answer = await postFetch(server.url, { url: url("/ordinary.html") })
      if (answer.status === 503) busy = answer
    }
    expect(busy?.body.exception.type).toBe("ServerBusy")
    expect(busy?.body.message).toMatch(/^the server is reading as many pages as it may at once; retry in \d+ s$/)
    expect(Number(busy?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect((await slow).status).toBe(504)
  }, 60_000)
})
