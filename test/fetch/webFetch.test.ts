/**
 * POST /api/search/webFetch through the real Node server, against pages served on loopback:
 * real Debian documentation pages, a PDF made here, pages in Shift_JIS, GBK, EUC-KR and
 * Latin-1, JSON and text, redirects, a 50 MB page, a slow page, error statuses. The loopback
 * site is allowed by host:port in the fetch config; nothing else on this machine is.
 */
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { debianDocsOrSkip } from "../support/debianDocs.ts"
import { type FetchServer, minimalPdf, postFetch, redirect, send, serveSite, type Site, startFetchServer } from "./support.ts"

const ascii = (text: string) => [...new TextEncoder().encode(text)]
/** Bytes from ASCII text and raw byte runs (the encoded characters, written by hand). */
const bytesOf = (...parts: ReadonlyArray<string | ReadonlyArray<number>>) =>
  new Uint8Array(parts.flatMap((part) => (typeof part === "string" ? ascii(part) : [...part])))

// 日本語 テスト in Shift_JIS; 中文 你好 in GBK; 한국어 in EUC-KR; café naïve € in windows-1252 (what "latin1" means on the web).
const SJIS_NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]
const SJIS_TESUTO = [0x83, 0x65, 0x83, 0x58, 0x83, 0x67]
const GBK_ZHONGWEN = [0xd6, 0xd0, 0xce, 0xc4]
const GBK_NIHAO = [0xc4, 0xe3, 0xba, 0xc3]
const EUCKR_HANGUKEO = [0xc7, 0xd1, 0xb1, 0xb9, 0xbe, 0xee]
const CP1252_CAFE = [0x63, 0x61, 0x66, 0xe9]
const CP1252_NAIVE = [0x6e, 0x61, 0xef, 0x76, 0x65]
const CP1252_EURO = [0x80]

const docs = debianDocsOrSkip()
const pythonDoc = (path: string) => readFileSync(`.cache/debian-docs/python3.11-doc/usr/share/doc/python3.11/html/${path}`)
const postgresDoc = (path: string) => readFileSync(`.cache/debian-docs/postgresql-doc-15/usr/share/doc/postgresql-doc-15/html/${path}`)

let site: Site
let server: FetchServer
let slowHits = 0
let hangClosed = 0

beforeAll(async () => {
  site = await serveSite({
    "/json.html": docs === undefined ? send("<html></html>", "text/html") : send(pythonDoc("library/json.html"), "text/html; charset=utf-8"),
    "/createtable.html": docs === undefined ? send("<html></html>", "text/html") : send(postgresDoc("sql-createtable.html"), "text/html"),
    "/article.html": send(
      `<!doctype html><html><head><title>Widgets | Example</title><meta property="article:published_time" content="2024-05-01"></head><body>
      <nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/blog">Blog index</a></nav>
      <header class="site-header">Example Corp navigation banner</header>
      <main><h1>Widgets</h1><h2>Install</h2><p>Run the <a href="/docs/install">installer</a> and check the version.</p>
      <pre><code class="language-bash">npm install widgets
widgets --version</code></pre>
      <ul><li>fast</li><li>small</li></ul>
      <table><thead><tr><th>Name</th><th>Size</th></tr></thead><tbody><tr><td><code>widget</code></td><td>3 kB</td></tr></tbody></table></main>
      <footer>Copyright Example Corp. Privacy policy. Cookie settings.</footer></body></html>`,
      "text/html; charset=utf-8",
      200,
      { "last-modified": "Wed, 21 Oct 2015 07:28:00 GMT" }
    ),
    "/report.pdf": send(minimalPdf(["Quarterly report for widgets", "Revenue grew by twelve percent"], "Widget Report"), "application/pdf"),
    "/sjis.html": send(bytesOf("<html><head><title>", SJIS_NIHONGO, "</title></head><body><main><p>", SJIS_TESUTO, " ", SJIS_NIHONGO, "</p></main></body></html>"), "text/html; charset=Shift_JIS"),
    "/sjis-meta.html": send(bytesOf('<html><head><meta charset="shift_jis"><title>', SJIS_NIHONGO, "</title></head><body><main><p>", SJIS_TESUTO, "</p></main></body></html>"), "text/html"),
    "/gbk.html": send(bytesOf('<html><head><meta http-equiv="Content-Type" content="text/html; charset=gbk"><title>', GBK_ZHONGWEN, "</title></head><body><main><p>", GBK_NIHAO, " ", GBK_ZHONGWEN, "</p></main></body></html>"), "text/html"),
    "/euckr.html": send(bytesOf("<html><head><title>", EUCKR_HANGUKEO, "</title></head><body><main><p>", EUCKR_HANGUKEO, "</p></main></body></html>"), "text/html; charset=euc-kr"),
    "/latin1.html": send(bytesOf("<html><head><title>Menu</title></head><body><main><p>", CP1252_CAFE, " ", CP1252_NAIVE, " 5", CP1252_EURO, "</p></main></body></html>"), "text/html; charset=ISO-8859-1"),
    "/latin1.txt": send(bytesOf(CP1252_CAFE, "\n"), "text/plain; charset=iso-8859-1"),
    "/data.json": send('{"name":"widget","sizes":[1,2,3]}', "application/json"),
    "/notes.txt": send("plain notes\nsecond line\n", "text/plain"),
    "/big.txt": send("word ".repeat(300_000), "text/plain"),
    "/untyped": (_q, r) => {
      r.writeHead(200)
      r.end("<!doctype html><html><head><title>No header</title></head><body><main><p>Sniffed as HTML.</p></main></body></html>")
    },
    "/image.png": send(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), "image/png"),
    "/binary": (_q, r) => {
      r.writeHead(200, { "content-type": "application/octet-stream" })
      r.end(new Uint8Array([0, 1, 2, 3, 0, 255]))
    },
    "/hop1": redirect("/hop2", 301),
    "/hop2": redirect("/article.html", 307),
    "/loop": redirect("/loop"),
    "/to-file": redirect("file:///etc/passwd"),
    "/gone": send("<html><body>gone</body></html>", "text/html", 410),
    "/broken": send("<html><body>oops</body></html>", "text/html", 500),
    "/slow": (_q, r) => {
      slowHits++
      setTimeout(() => {
        r.writeHead(200, { "content-type": "text/html" })
        r.end("<html><head><title>Slow</title></head><body><main><p>Worth the wait.</p></main></body></html>")
      }, 300)
    },
    "/hang": (q, r) => {
      r.writeHead(200, { "content-type": "text/html" })
      r.write("<html><body><p>Hanging")
      q.socket.on("close", () => hangClosed++)
    },
    "/never": (_q, r) => {
      r.writeHead(200, { "content-type": "text/html" })
      r.write("<html><body><p>This page starts but never finishes")
    },
    "/huge": (_q, r) => {
      // 50 MB, streamed without a Content-Length.
      r.writeHead(200, { "content-type": "text/html" })
      const chunk = Buffer.alloc(1024 * 1024, "a")
      let sent = 0
      const pump = () => {
        while (sent < 50) {
          sent++
          if (!r.write(chunk)) return void r.once("drain", pump)
        }
        r.end()
      }
      r.on("close", () => {
        sent = 50
      })
      pump()
    },
    "/huge-declared": (_q, r) => {
      r.writeHead(200, { "content-type": "text/html", "content-length": String(50 * 1024 * 1024) })
      r.write("<html>")
    }
  })
  server = await startFetchServer({ allowHosts: [site.host], timeoutMs: 2000, maxBytes: 10 * 1024 * 1024 })
})

afterAll(async () => {
  await server?.close()
  await site?.close()
})

const fetchPage = (body: Record<string, unknown>) => postFetch(server.url, body)

describe("webFetch: pages to Markdown", () => {
  it("keeps title, headings, lists, links, code with its language and tables; drops navigation and footer", async () => {
    const { status, body } = await fetchPage({ url: `${site.origin}/article.html` })
    expect(status).toBe(200)
    expect(body).toMatchObject({ success: true, code: "200", message: "success", exception: null, extra: null })
    const data = body.data
    expect(data).toMatchObject({ title: "Widgets", url: `${site.origin}/article.html`, fromCache: false, date: "2024-05-01", contentType: "text/html" })
    expect(data.content).toContain("# Widgets")
    expect(data.content).toContain("## Install")
    expect(data.content).toContain(`[installer](${site.origin}/docs/install)`)
    expect(data.content).toContain("```bash\nnpm install widgets\nwidgets --version\n```")
    expect(data.content).toMatch(/^-\s+fast$/m)
    expect(data.content).toContain("| Name | Size |\n| --- | --- |\n| `widget` | 3 kB |")
    expect(data.content).not.toContain("About us")
    expect(data.content).not.toContain("navigation banner")
    expect(data.content).not.toContain("Copyright")
  })

  it("answers in the seed provider's shape: title, content, url, fromCache", async () => {
    const { body } = await fetchPage({ url: `${site.origin}/article.html` })
    for (const field of ["title", "content", "url", "fromCache"]) expect(body.data).toHaveProperty(field)
  })

  it.skipIf(docs === undefined)("a Python documentation page: its heading, code examples and conversion table, without the sidebar", async () => {
    const { status, body } = await fetchPage({ url: `${site.origin}/json.html` })
    expect(status).toBe(200)
    const content: string = body.data.content
    expect(body.data.title).toBe("json — JSON encoder and decoder")
    expect(content).toMatch(/^# \[`json`\]\(.*\) — JSON encoder and decoder/m)
    expect(content).toContain("```python3\n>>> import json\n")
    // The "JSON | Python" conversion table.
    expect(content).toMatch(/\| JSON \| Python \|\n\| --- \| --- \|\n\| object \| dict \|/)
    expect(content).not.toContain("Previous topic")
    expect(content).not.toContain("Quick search")
    expect(content).not.toContain("¶")
  })

  it.skipIf(docs === undefined)("a PostgreSQL reference page keeps its synopsis and sections", async () => {
    const { status, body } = await fetchPage({ url: `${site.origin}/createtable.html` })
    expect(status).toBe(200)
    const content: string = body.data.content
    expect(body.data.title).toMatch(/CREATE TABLE/)
    expect(content).toMatch(/^#+ Synopsis$/m)
    expect(content).toContain("```\nCREATE [ [ GLOBAL | LOCAL ] { TEMPORARY | TEMP } | UNLOGGED ] TABLE")
    expect(content).toMatch(/^#+ Description$/m)
    expect(content).not.toMatch(/^Prev\s/m)
  })

  it("format text gives the plain main text; format html the cleaned main-content HTML", async () => {
    const text = await fetchPage({ url: `${site.origin}/article.html`, format: "text" })
    expect(text.body.data.content).toContain("Run the installer and check the version.")
    expect(text.body.data.content).not.toContain("](")
    expect(text.body.data.content).not.toContain("About us")
    const html = await fetchPage({ url: `${site.origin}/article.html`, format: "html" })
    expect(html.body.data.content).toContain("<h2>Install</h2>")
    expect(html.body.data.content).toContain(`href="${site.origin}/docs/install"`)
    expect(html.body.data.content).not.toContain("<nav")
    expect(html.body.data.content).not.toContain("Copyright")
  })

  it("maxChars cuts the content", async () => {
    const { body } = await fetchPage({ url: `${site.origin}/article.html`, maxChars: 10 })
    expect(body.data.content).toBe("# Widgets\n")
  })
})

describe("webFetch: other media types", () => {
  it("a PDF's text, with the title from its info dictionary", async () => {
    const { status, body } = await fetchPage({ url: `${site.origin}/report.pdf` })
    expect(status).toBe(200)
    expect(body.data).toMatchObject({ title: "Widget Report", contentType: "application/pdf", date: "2024-03-15" })
    expect(body.data.content).toContain("Quarterly report for widgets")
    expect(body.data.content).toContain("Revenue grew by twelve percent")
  })

  it("JSON and plain text are passed through as sent", async () => {
    const json = await fetchPage({ url: `${site.origin}/data.json` })
    expect(json.body.data).toMatchObject({ content: '{"name":"widget","sizes":[1,2,3]}', contentType: "application/json", title: "data.json" })
    const text = await fetchPage({ url: `${site.origin}/notes.txt` })
    expect(text.body.data).toMatchObject({ content: "plain notes\nsecond line\n", contentType: "text/plain" })
  })

  it("a body without Content-Type is sniffed", async () => {
    const { body } = await fetchPage({ url: `${site.origin}/untyped` })
    expect(body.data).toMatchObject({ title: "No header", contentType: "text/html" })
    expect(body.data.content).toContain("Sniffed as HTML.")
  })

  it("images and binary data are unsupported (415), the image without reading its body", async () => {
    const image = await fetchPage({ url: `${site.origin}/image.png` })
    expect(image.status).toBe(415)
    expect(image.body).toMatchObject({ success: false, code: "400", data: null, exception: { type: "UnsupportedContentType" } })
    expect(image.body.message).toContain("image/png")
    const binary = await fetchPage({ url: `${site.origin}/binary` })
    expect(binary.status).toBe(415)
    expect(binary.body.exception.type).toBe("UnsupportedContentType")
  })
})

describe("webFetch: charsets", () => {
  it("Shift_JIS from the header and from <meta charset>", async () => {
    const header = await fetchPage({ url: `${site.origin}/sjis.html` })
    expect(header.body.data.title).toBe("日本語")
    expect(header.body.data.content).toContain("テスト 日本語")
    const meta = await fetchPage({ url: `${site.origin}/sjis-meta.html` })
    expect(meta.body.data.title).toBe("日本語")
    expect(meta.body.data.content).toContain("テスト")
  })

  it("GBK from http-equiv, EUC-KR from the header", async () => {
    const gbk = await fetchPage({ url: `${site.origin}/gbk.html` })
    expect(gbk.body.data.title).toBe("中文")
    expect(gbk.body.data.content).toContain("你好 中文")
    const euckr = await fetchPage({ url: `${site.origin}/euckr.html` })
    expect(euckr.body.data.title).toBe("한국어")
  })

  it("Latin-1 (read as windows-1252, as browsers do), in HTML and plain text", async () => {
    const html = await fetchPage({ url: `${site.origin}/latin1.html` })
    expect(html.body.data.content).toContain("café naïve 5€")
    const text = await fetchPage({ url: `${site.origin}/latin1.txt` })
    expect(text.body.data.content).toBe("café\n")
  })
})

describe("webFetch: redirects, cache and single-flight", () => {
  it("follows redirects and answers the final URL", async () => {
    const { status, body } = await fetchPage({ url: `${site.origin}/hop1` })
    expect(status).toBe(200)
    expect(body.data.url).toBe(`${site.origin}/article.html`)
    expect(body.data.title).toBe("Widgets")
  })

  it("gives up after 5 redirects (502) and refuses a redirect to another scheme (403)", async () => {
    const loop = await fetchPage({ url: `${site.origin}/loop` })
    expect(loop.status).toBe(502)
    expect(loop.body.exception).toEqual({ type: "FetchFailed", detail: "more than 5 redirects" })
    const file = await fetchPage({ url: `${site.origin}/to-file` })
    expect(file.status).toBe(403)
    expect(file.body.exception.type).toBe("FetchRefused")
  })

  it("serves a second fetch from the cache; fresh:true fetches again and refreshes it", async () => {
    const url = `${site.origin}/notes.txt?cache-test`
    const count = () => site.requested.filter((p) => p === "/notes.txt").length
    const before = count()
    expect((await fetchPage({ url })).body.data.fromCache).toBe(false)
    expect((await fetchPage({ url })).body.data.fromCache).toBe(true)
    expect(count()).toBe(before + 1)
    expect((await fetchPage({ url, fresh: true })).body.data.fromCache).toBe(false)
    expect(count()).toBe(before + 2)
    expect((await fetchPage({ url })).body.data.fromCache).toBe(true)
    expect(count()).toBe(before + 2)
  })

  it("a page over the cache's entry size (1,000,000 characters) is answered but not kept", async () => {
    const first = await fetchPage({ url: `${site.origin}/big.txt` })
    expect(first.body.data.content).toHaveLength(1_500_000)
    expect((await fetchPage({ url: `${site.origin}/big.txt` })).body.data.fromCache).toBe(false)
    expect(site.requested.filter((p) => p === "/big.txt")).toHaveLength(2)
  })

  it("100 concurrent fetches of one URL make one request to the site", async () => {
    const before = slowHits
    const answers = await Promise.all(Array.from({ length: 100 }, () => fetchPage({ url: `${site.origin}/slow` })))
    expect(answers.every((a) => a.status === 200 && a.body.data.content === "Worth the wait.")).toBe(true)
    expect(slowHits - before).toBe(1)
    expect(answers.filter((a) => a.body.data.fromCache === false)).toHaveLength(1)
  })
})

describe("webFetch: limits and the site's errors, each with its own error", () => {
  it("the site's status: 404, 410, 500 as 502 naming it", async () => {
    for (const [path, status] of [["/missing", 404], ["/gone", 410], ["/broken", 500]] as const) {
      const { status: http, body } = await fetchPage({ url: `${site.origin}${path}` })
      expect(http).toBe(502)
      expect(body).toMatchObject({ success: false, code: "500", data: null, exception: { type: "SiteHttpStatus", detail: `the site answered HTTP ${status}` } })
    }
  })

  it("a 50 MB page is too large (413), streamed or declared", async () => {
    for (const path of ["/huge", "/huge-declared"]) {
      const { status, body } = await fetchPage({ url: `${site.origin}${path}` })
      expect(status).toBe(413)
      expect(body.exception).toEqual({ type: "PageTooLarge", detail: "the page is larger than the limit of 10.0 MiB" })
    }
  })

  it("a page that never finishes times out (504)", async () => {
    const started = Date.now()
    const { status, body } = await fetchPage({ url: `${site.origin}/never` })
    expect(status).toBe(504)
    expect(body.exception).toEqual({ type: "FetchTimeout", detail: "the site did not answer within 2000 ms" })
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it("a client that goes away cancels the fetch: the site's connection is closed", async () => {
    const controller = new AbortController()
    const pending = postFetch(server.url, { url: `${site.origin}/hang` }, { signal: controller.signal }).catch(() => "aborted")
    await new Promise((r) => setTimeout(r, 300))
    controller.abort()
    expect(await pending).toBe("aborted")
    const deadline = Date.now() + 1000
    while (hangClosed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    // Closed long before the 2 s fetch deadline would have closed it.
    expect(hangClosed).toBe(1)
  })

  it("an invalid URL and a non-http scheme are the caller's (400)", async () => {
    for (const url of ["not a url", "/relative/path", "ftp://example.com/file", "file:///etc/passwd", "javascript:alert(1)", "data:text/html,hi"]) {
      const { status, body } = await fetchPage({ url })
      expect(status, url).toBe(400)
      expect(body.exception.type, url).toBe("InvalidUrl")
      expect(body.message, url).toMatch(/^url: must be/)
    }
  })

  it("a host that cannot be reached fails with 502", async () => {
    const closed = await serveSite({})
    await closed.close()
    const blocked = await startFetchServer({ allowHosts: [closed.host] })
    try {
      const { status, body } = await postFetch(blocked.url, { url: `${closed.origin}/` })
      expect(status).toBe(502)
      expect(body.exception.type).toBe("FetchFailed")
      expect(body.message).toMatch(/ECONNREFUSED/)
    } finally {
      await blocked.close()
    }
  })
})
