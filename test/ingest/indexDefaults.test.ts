/**
 * Index defaults users expect (issue 12 part 4): generated index pages left
 * out (but crawled through), dates from Last-Modified, sitemap lastmod and
 * WARC-Date when a page states none (never from file times), and image width
 * and height answered by imageSearch over HTTP when the page gave them.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Stream } from "effect"
import { WARCRecord, WARCSerializer } from "warcio"
import { afterAll, describe, expect, it } from "vitest"
import { htmlDirectorySource } from "../../adapters/node/sources/htmlDirectorySource.ts"
import { openSources } from "../../adapters/node/sources/openSources.ts"
import { warcSource } from "../../adapters/node/sources/warcSource.ts"
import { EngineSearch } from "../../core/backends/EngineSearch.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import type { DocumentSource, SourceItem } from "../../core/ingest/DocumentSource.ts"
import { withFallbackDate } from "../../core/ingest/FallbackDate.ts"
import { generatedPageKind } from "../../core/ingest/GeneratedPage.ts"
import { authHeaders, startInProcess } from "../support/servers.ts"
import { startSiteServer } from "./support/siteServer.ts"

const work = mkdtempSync(join(tmpdir(), "periscope-index-defaults-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const collect = (source: DocumentSource): Promise<Array<SourceItem>> => Effect.runPromise(Stream.runCollect(source.items)).then((c) => [...c])
const docs = (items: ReadonlyArray<SourceItem>) => items.flatMap((i) => (i._tag === "Document" ? [i.document] : []))
const skips = (items: ReadonlyArray<SourceItem>) => items.flatMap((i) => (i._tag === "Skipped" ? [`${i.origin}: ${i.reason}`] : []))

const page = (title: string, extra = "", head = "") =>
  `<!doctype html><html lang="en"><head><title>${title}</title>${head}</head><body><main><h1>${title}</h1>` +
  `<p>${title}: a page with enough words about asyncio event loops to be indexed as text.</p>${extra}</main></body></html>`

describe("generated index pages", () => {
  it("names the generators' list pages and leaves ordinary pages alone", () => {
    const generated = [
      "https://docs.python.org/3/genindex.html", "https://docs.python.org/3/genindex-A.html", "https://docs.python.org/3/genindex-all.html",
      "https://docs.python.org/3/py-modindex.html", "https://docs.scipy.org/doc/np-modindex.html", "https://docs.python.org/3/search.html",
      "https://docs.oracle.com/javase/8/docs/api/index-all.html", "https://example.org/api/index-files/index-3.html",
      "https://example.org/api/allclasses-index.html", "https://example.org/api/overview-tree.html", "https://example.org/api/deprecated-list.html",
      "https://example.org/doxygen/globals_func.html", "https://example.org/doxygen/functions_vars.html", "https://docs.rs/tokio/latest/tokio/all.html"
    ]
    for (const url of generated) expect(generatedPageKind(url), url).toBeDefined()
    const ordinary = [
      "https://docs.python.org/3/library/asyncio.html", "https://docs.python.org/3/", "https://example.org/index.html",
      "https://example.org/searching-tips.html", "https://example.org/genindex-explained/", "https://example.org/api/java/util/List.html"
    ]
    for (const url of ordinary) expect(generatedPageKind(url), url).toBeUndefined()
  })

  it("a folder: skipped with the reason, kept with keepGenerated", async () => {
    const folder = join(work, "sphinx")
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, "asyncio.html"), page("asyncio"))
    writeFileSync(join(folder, "genindex.html"), page("Index", "<a href='asyncio.html'>asyncio</a> ".repeat(200)))
    writeFileSync(join(folder, "py-modindex.html"), page("Python Module Index"))
    writeFileSync(join(folder, "search.html"), page("Search"))
    const items = await collect(htmlDirectorySource(folder, { baseUrl: "https://docs.example.org/3/" }))
    expect(docs(items).map((d) => d.url)).toEqual(["https://docs.example.org/3/asyncio.html"])
    expect(skips(items)).toEqual([
      "genindex.html: generated index page (Sphinx general index)",
      "py-modindex.html: generated index page (Sphinx module index)",
      "search.html: generated index page (search page)"
    ])
    const kept = await collect(htmlDirectorySource(folder, { baseUrl: "https://docs.example.org/3/", keepGenerated: true }))
    expect(docs(kept)).toHaveLength(4)
  })

  it("a crawl: not indexed, but its links are followed", async () => {
    const site = await startSiteServer({
      "/": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html" })
        r.end(page("Home", `<a href="/genindex.html">Index</a>`))
      },
      "/genindex.html": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html" })
        r.end(page("Index", `<a href="/only-from-index.html">only here</a>`))
      },
      "/only-from-index.html": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html" })
        r.end(page("Reached through the index"))
      }
    })
    try {
      const [crawl] = openSources([`${site.origin}/`], { allowPrivate: true, crawl: { delayMs: 0 } })
      const items = await collect(crawl!)
      expect(docs(items).map((d) => d.url).sort()).toEqual([`${site.origin}/`, `${site.origin}/only-from-index.html`])
      expect(skips(items)).toEqual([`${site.origin}/genindex.html: generated index page (Sphinx general index)`])
    } finally {
      await site.close()
    }
  })
})

describe("dates when the page states none", () => {
  it("the page's own date wins; then the fallbacks in order; unreadable ones are passed over", () => {
    const doc = { url: "https://e.org/a", title: "A", text: "x" }
    expect(withFallbackDate({ ...doc, date: "2020-01-02" }, ["2024-01-01"]).date).toBe("2020-01-02")
    expect(withFallbackDate({ ...doc, date: null }, [undefined, "not a date", "Wed, 21 Oct 2015 07:28:00 GMT"]).date).toBe("2015-10-21T07:28:00Z")
    expect(withFallbackDate(doc, []).date).toBeUndefined()
  })

  it("a crawl: sitemap lastmod first, then Last-Modified", async () => {
    const lastModified = "Tue, 03 Mar 2020 10:00:00 GMT"
    const send = (body: string) => (_q: unknown, r: import("node:http").ServerResponse) => {
      r.writeHead(200, { "content-type": "text/html", "last-modified": lastModified })
      r.end(body)
    }
    const site = await startSiteServer({
      "/sitemap.xml": (_q, r) => {
        r.writeHead(200, { "content-type": "application/xml" })
        r.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
          `<url><loc>/a</loc><lastmod>2019-07-08</lastmod></url><url><loc>/b</loc></url><url><loc>/c</loc><lastmod>2019-07-08</lastmod></url></urlset>`)
      },
      "/a": send(page("Listed with lastmod")),
      "/b": send(page("Listed without lastmod")),
      "/c": send(page("Dated itself", "", `<meta property="article:published_time" content="2011-11-11">`))
    })
    try {
      const [crawl] = openSources([`${site.origin}/sitemap.xml`], { allowPrivate: true, crawl: { delayMs: 0, maxDepth: 0 } })
      const dates = Object.fromEntries(docs(await collect(crawl!)).map((d) => [new URL(d.url).pathname, d.date]))
      expect(dates["/a"]).toBe("2019-07-08")
      expect(dates["/c"]).toBe("2011-11-11")
      expect(dates["/b"]).toBe("2020-03-03T10:00:00Z")
    } finally {
      await site.close()
    }
  })

  it("an archive: Last-Modified of the archived answer, then WARC-Date", async () => {
    const record = (url: string, headers: Record<string, string>, body: string) =>
      WARCRecord.create({ url, date: "2023-04-05T06:07:08Z", type: "response", warcVersion: "WARC/1.1", httpHeaders: { "Content-Type": "text/html", ...headers } },
        [new TextEncoder().encode(body)])
    const path = join(work, "dated.warc.gz")
    const parts: Array<Uint8Array> = []
    for (const r of [
      record("https://news.example.org/plain", {}, page("Undated story")),
      record("https://news.example.org/modified", { "Last-Modified": "Mon, 01 Feb 2021 00:00:00 GMT" }, page("Modified story")),
      record("https://news.example.org/2018/05/06/own", {}, page("Story with a date in its URL"))
    ]) parts.push(await WARCSerializer.serialize(r, { gzip: true }))
    writeFileSync(path, Buffer.concat(parts))
    const dates = Object.fromEntries(docs(await collect(warcSource(path))).map((d) => [d.url, d.date]))
    expect(dates).toEqual({
      "https://news.example.org/plain": "2023-04-05T06:07:08Z",
      "https://news.example.org/modified": "2021-02-01T00:00:00Z",
      "https://news.example.org/2018/05/06/own": "2018-05-06"
    })
  })

  it("a folder: never the file's modification time", async () => {
    const folder = join(work, "mtime")
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, "a.html"), page("Undated page"))
    utimesSync(join(folder, "a.html"), new Date("2001-01-01"), new Date("2001-01-01"))
    const [doc] = docs(await collect(htmlDirectorySource(folder, { baseUrl: "https://e.org/" })))
    expect(doc!.date ?? null).toBeNull()
  })
})

describe("image sizes in image results", () => {
  it("imageSearch over HTTP answers width and height when the page gave them, and leaves them out otherwise", async () => {
    const builder = new IndexBuilder()
    builder.add([{
      url: "https://garden.example.org/roses",
      title: "Roses",
      text: "Growing roses in a small garden.",
      images: [
        { url: "https://garden.example.org/rose.jpg", alt: "A red rose", width: 1024, height: 768 },
        { url: "https://garden.example.org/rose-bud.jpg", alt: "A rose bud" }
      ]
    }])
    const server = await startInProcess({ search: EngineSearch.layer(builder.build()) })
    try {
      const response = await fetch(`${server.url}/api/search/imageSearch`, {
        method: "POST",
        headers: authHeaders(),
        body: JSON.stringify({ keywords: "rose" })
      })
      expect(response.status).toBe(200)
      const body = await response.json() as { data: Array<Record<string, unknown>> }
      expect(body.data).toEqual(expect.arrayContaining([
        { url: "https://garden.example.org/rose.jpg", refUrl: "https://garden.example.org/roses", title: "A red rose", width: 1024, height: 768 },
        { url: "https://garden.example.org/rose-bud.jpg", refUrl: "https://garden.example.org/roses", title: "A rose bud" }
      ]))
      expect(body.data).toHaveLength(2)
    } finally {
      await server.close()
    }
  })
})
