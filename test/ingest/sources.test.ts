/**
 * The file sources on real files written by the test: WARC and WARC.gz
 * archives made with warcio (as Common Crawl lays them out: warcinfo,
 * request, response, metadata records), JSONL with good and bad lines, a
 * folder tree of HTML files, and the checks on source arguments.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { WARCRecord, WARCSerializer } from "warcio"
import { Effect, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import type { DocumentSource, SourceItem } from "../../core/ingest/DocumentSource.ts"
import { runIndex } from "../../core/ingest/IndexRun.ts"
import { htmlDirectorySource } from "../../adapters/node/sources/htmlDirectorySource.ts"
import { jsonlSource } from "../../adapters/node/sources/jsonlSource.ts"
import { openSources } from "../../adapters/node/sources/openSources.ts"
import { warcSource } from "../../adapters/node/sources/warcSource.ts"

const dir = mkdtempSync(join(tmpdir(), "periscope-sources-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const collect = (source: DocumentSource): Promise<Array<SourceItem>> => Effect.runPromise(Stream.runCollect(source.items))
const documents = (items: ReadonlyArray<SourceItem>) => items.flatMap((i) => (i._tag === "Document" ? [i.document] : []))
const others = (items: ReadonlyArray<SourceItem>) =>
  items.flatMap((i) => (i._tag === "Skipped" ? [`skipped ${i.origin}: ${i.reason}`] : i._tag === "Failed" ? [`failed ${i.origin}: ${i.message}`] : []))

const article = (title: string, body: string, head = "") =>
  `<!doctype html><html lang="en"><head><title>${title} | Example News</title>${head}</head><body>` +
  `<nav><a href="/">Home</a></nav><main><h1>${title}</h1>${body}</main><footer>© Example</footer></body></html>`

describe("WARC source", () => {
  const writeWarc = async (path: string, gzip: boolean) => {
    const records: Array<WARCRecord> = [
      WARCRecord.createWARCInfo({ filename: path, warcVersion: "WARC/1.1" }, { software: "periscope test" }),
      WARCRecord.create({
        url: "https://news.example.com/2019/03/04/rivers.html",
        date: "2024-01-01T00:00:00Z", // the crawl date: never the publish date
        type: "request",
        warcVersion: "WARC/1.1",
        statusline: "GET /2019/03/04/rivers.html HTTP/1.1",
        httpHeaders: { host: "news.example.com" }
      }, []),
      WARCRecord.create({
        url: "https://news.example.com/2019/03/04/rivers.html",
        date: "2024-01-01T00:00:00Z",
        type: "response",
        warcVersion: "WARC/1.1",
        httpHeaders: { "Content-Type": "text/html; charset=ISO-8859-1" }
      }, [new Uint8Array(Buffer.from(
        article("Rivers of Europe", "<p>The Danube flows through ten countries, more than any other river in the world. Cafés line its banks.</p>"),
        "latin1"
      ))]),
      WARCRecord.create({
        url: "https://news.example.com/2019/03/04/rivers.html",
        date: "2024-01-01T00:00:00Z",
        type: "metadata",
        warcVersion: "WARC/1.1",
        warcHeaders: { "Content-Type": "application/warc-fields" }
      }, [new TextEncoder().encode("fetchTimeMs: 120\r\n")]),
      WARCRecord.create({
        url: "https://news.example.com/logo.png",
        date: "2024-01-01T00:00:00Z",
        type: "response",
        warcVersion: "WARC/1.1",
        httpHeaders: { "Content-Type": "image/png" }
      }, [new Uint8Array([0x89, 0x50, 0x4e, 0x47])]),
      WARCRecord.create({
        url: "https://news.example.com/missing",
        date: "2024-01-01T00:00:00Z",
        type: "response",
        warcVersion: "WARC/1.1",
        statusline: "HTTP/1.1 404 Not Found",
        httpHeaders: { "Content-Type": "text/html" }
      }, [new TextEncoder().encode("<p>not found</p>")]),
      WARCRecord.create({
        url: "https://news.example.com/empty",
        date: "2024-01-01T00:00:00Z",
        type: "response",
        warcVersion: "WARC/1.1",
        httpHeaders: { "Content-Type": "text/html" }
      }, [new TextEncoder().encode("<html><body><script>app()</script></body></html>")])
    ]
    const chunks: Array<Uint8Array> = []
    for (const record of records) chunks.push(await WARCSerializer.serialize(record, { gzip }))
    writeFileSync(path, Buffer.concat(chunks))
  }

  for (const gzip of [false, true]) {
    it(`reads response records of a ${gzip ? ".warc.gz" : ".warc"} file and skips the rest with reasons`, async () => {
      const path = join(dir, gzip ? "crawl.warc.gz" : "crawl.warc")
      await writeWarc(path, gzip)
      const items = await collect(warcSource(path))
      const [doc, ...rest] = documents(items)
      expect(rest).toEqual([])
      expect(doc).toMatchObject({
        url: "https://news.example.com/2019/03/04/rivers.html",
        title: "Rivers of Europe",
        text: "Rivers of Europe\n\nThe Danube flows through ten countries, more than any other river in the world. Cafés line its banks.",
        // From the URL; the record's WARC-Date (2024) is when it was crawled.
        date: "2019-03-04",
        lang: "en"
      })
      expect(others(items)).toEqual([
        "skipped https://news.example.com/logo.png: not HTML (image/png)",
        "skipped https://news.example.com/missing: HTTP 404",
        "skipped https://news.example.com/empty: no main text"
      ])
    })
  }

  it("reports a truncated archive and keeps what came before", async () => {
    const whole = join(dir, "whole.warc")
    await writeWarc(whole, false)
    const bytes = readFileSync(whole)
    const cut = join(dir, "cut.warc")
    // Cut inside the 404 record: the first page is intact, the rest is not.
    writeFileSync(cut, bytes.subarray(0, bytes.indexOf(Buffer.from("not found")) - 5))
    const items = await collect(warcSource(cut))
    expect(documents(items).map((d) => d.title)).toEqual(["Rivers of Europe"])
    expect(others(items).at(-1)).toMatch(/^failed .*cut\.warc after record \d+: the archive ends in the middle of a record/)
  })
})

describe("JSONL source", () => {
  const lines = [
    JSON.stringify({ url: "https://kb.example.com/a", title: "Alpha", text: "First article text.", date: "March 5, 2021", lang: "en_GB",
      images: [{ url: "https://kb.example.com/a.png", alt: "Diagram", width: 800 }] }),
    "",
    "{not json",
    JSON.stringify({ url: "https://kb.example.com/b", title: "Beta" }),
    JSON.stringify({ url: "/relative", title: "Gamma", text: "x" }),
    JSON.stringify({ url: "https://kb.example.com/c", title: "Gamma", text: "Third.", images: [{ url: "https://kb.example.com/c.png", height: -1 }] }),
    JSON.stringify({ url: "https://kb.example.com/d", title: "Delta", text: "   " }),
    JSON.stringify({ url: "https://kb.example.com/e", title: "Epsilon", text: "Fifth.", date: null })
  ].join("\n")

  for (const gz of [false, true]) {
    it(`reads good lines and names the line, field and rule of bad ones${gz ? " (gzipped)" : ""}`, async () => {
      const path = join(dir, gz ? "docs.jsonl.gz" : "docs.jsonl")
      writeFileSync(path, gz ? gzipSync(lines) : lines)
      const items = await collect(jsonlSource(path))
      expect(documents(items)).toEqual([
        { url: "https://kb.example.com/a", title: "Alpha", text: "First article text.", date: "2021-03-05", lang: "en-GB",
          images: [{ url: "https://kb.example.com/a.png", alt: "Diagram", width: 800 }] },
        // A bad image drops that image when indexed, not the page (below).
        { url: "https://kb.example.com/c", title: "Gamma", text: "Third.", date: null, images: [{ url: "https://kb.example.com/c.png", height: -1 }] },
        { url: "https://kb.example.com/e", title: "Epsilon", text: "Fifth.", date: null }
      ])
      expect(others(items).map((s) => s.replace(path, "FILE"))).toEqual([
        `failed FILE:3: is not valid JSON (Expected property name or '}' in JSON at position 1 (line 1 column 2))`,
        "failed FILE:4: text: must be a string",
        `failed FILE:5: url: must be an absolute http(s) URL, got "/relative" (a string)`,
        "skipped FILE:7: no main text"
      ])
      const run = await Effect.runPromise(runIndex({ sources: [jsonlSource(path)] }))
      expect(run.index.documentCount).toBe(3)
      expect(run.refusedSamples).toEqual([{ url: "https://kb.example.com/c", reason: "images[0].height: must be a whole number of pixels" }])
    })
  }
})

describe("HTML folder source", () => {
  it("maps paths under the folder to links under the base URL, in sorted order", async () => {
    const site = join(dir, "site")
    mkdirSync(join(site, "guide", "deep"), { recursive: true })
    writeFileSync(join(site, "index.html"), article("Home page", "<p>Welcome to the documentation of the example project.</p>"))
    writeFileSync(join(site, "guide", "install notes.html"), article("Install notes", "<p>Run the installer and follow the prompts.</p>"))
    writeFileSync(join(site, "guide", "deep", "faq.htm"), article("FAQ", "<p>Answers to the questions people ask most.</p>"))
    writeFileSync(join(site, "guide", "style.css"), "body{}")
    writeFileSync(join(site, "empty.html"), "<html><body><nav>only navigation</nav></body></html>")
    symlinkSync(site, join(site, "guide", "loop")) // a folder link back up must not loop forever
    const source = htmlDirectorySource(site, { baseUrl: "https://docs.example.com/v2" })
    expect(await Effect.runPromise(source.estimate!)).toBe(4)
    const items = await collect(source)
    expect(documents(items).map((d) => [d.url, d.title])).toEqual([
      ["https://docs.example.com/v2/guide/deep/faq.htm", "FAQ"],
      ["https://docs.example.com/v2/guide/install%20notes.html", "Install notes"],
      ["https://docs.example.com/v2/index.html", "Home page"]
    ])
    expect(others(items)).toEqual(["skipped empty.html: no main text"])
  })

  it("refuses a base URL that is not http(s)", () => {
    expect(() => htmlDirectorySource(dir, { baseUrl: "file:///srv/www/" })).toThrow(/base URL: must be an http\(s\) URL/)
  })
})

describe("source arguments", () => {
  it("recognizes each kind and rejects what it cannot use, naming the argument", () => {
    const site = join(dir, "args-site")
    mkdirSync(site, { recursive: true })
    const list = join(dir, "urls.txt")
    writeFileSync(list, "# pages to crawl\nhttps://a.example.com/\n\nhttps://a.example.com/sitemap.xml\n")
    writeFileSync(join(dir, "x.jsonl"), "")
    const kinds = openSources([`${site}=https://a.example.com/docs/`, join(dir, "x.jsonl"), list, "https://b.example.com/start"])
      .map((s) => s.describe)
    expect(kinds).toEqual([
      `${site} (HTML files as https://a.example.com/docs/)`,
      `${join(dir, "x.jsonl")} (JSONL documents)`,
      "crawl of 2 URLs + sitemap https://a.example.com/sitemap.xml"
    ])
    const error = (args: Array<string>, options = {}) => {
      try {
        openSources(args, options)
        return "no error"
      } catch (e) {
        return (e as { argument: string; message: string }).argument + ": " + (e as Error).message
      }
    }
    expect(error([])).toBe("sources: give at least one folder, file or URL to index")
    expect(error([join(dir, "nope")])).toBe(`${join(dir, "nope")}: no such file or folder`)
    expect(error([site])).toMatch(/: a folder needs the URL it is published at/)
    expect(error([site], { baseUrl: "ftp://x/" })).toMatch(/base URL: must be an http\(s\) URL/)
    writeFileSync(join(dir, "notes.pdf"), "")
    expect(error([join(dir, "notes.pdf")])).toMatch(/unknown kind of file/)
    writeFileSync(list, "not a url\n")
    expect(error([list])).toBe(`${list}:1: "not a url" is not an absolute http(s) URL`)
  })
})
