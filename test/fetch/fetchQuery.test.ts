/**
 * webFetch with `query` through the real Node server against a loopback site: the page's chunks
 * most relevant to the query, in page order, each with the path of headings it sits under,
 * within maxChars or maxTokens (o200k_base, counted here with the same tokenizer); content is the
 * chunks joined; plain chunks for format text; a chunk in a code block keeps its fences; the MCP
 * tool gives the same chunks. maxTokens without a query cuts the content.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { o200kEncoding } from "../../core/search/TokenEncoding.ts"
import { callTool, type FetchServer, postFetch, send, serveSite, type Site, startFetchServer } from "./support.ts"

const filler = (topic: string, count: number) =>
  Array.from({ length: count }, (_, i) => `<p>The ${topic} section says more in paragraph ${i + 1}, with settings, defaults and examples of each option.</p>`).join("\n")

const GUIDE = `<!doctype html><html><head><title>Widgets guide</title></head><body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
<main>
<h1>Widgets</h1>
<p>Widgets is a small library for drawing widgets on a canvas. It has no dependencies.</p>
${filler("overview", 12)}
<h2>Install</h2>
<p>There are two ways to put widgets on your machine.</p>
<h3>From npm</h3>
<p>Run <code>npm install widgets</code> in your project. The package manager fetches the latest release for you.</p>
<h3>From a tarball</h3>
<p>Download the tarball from the releases page. Unpack the tarball into a directory of your choice and install it from there.</p>
<pre><code class="language-bash">tar xzf widgets.tar.gz
cd widgets
make install PREFIX=/opt/gadgetry</code></pre>
<h2>Configure</h2>
${filler("configuration", 25)}
<h2>Troubleshooting</h2>
<p>If a tarball you downloaded is corrupt, download it again and compare its checksum.</p>
${filler("troubleshooting", 8)}
</main></body></html>`

let site: Site
let server: FetchServer
let whole: string

beforeAll(async () => {
  site = await serveSite({ "/guide.html": send(GUIDE, "text/html; charset=utf-8") })
  server = await startFetchServer({ allowHosts: [site.host] })
  whole = (await postFetch(server.url, { url: `${site.origin}/guide.html` })).body.data.content
})

afterAll(async () => {
  await server?.close()
  await site?.close()
})

const tokens = (text: string) => Effect.runPromise(Effect.map(o200kEncoding, (encoding) => encoding.count(text)))

describe("webFetch with query", () => {
  it("gives the chunks most relevant to the query, in page order, each under its heading path, within maxChars", async () => {
    const { status, body } = await postFetch(server.url, { url: `${site.origin}/guide.html`, query: "install from a tarball", maxChars: 900 })
    expect(status).toBe(200)
    const { chunks, content } = body.data
    expect(body.data).toMatchObject({ title: "Widgets guide", url: `${site.origin}/guide.html`, contentType: "text/html" })
    expect(chunks.length).toBeGreaterThan(0)
    for (const chunk of chunks) expect(Object.keys(chunk)).toEqual(["heading", "text"])
    const tarball = chunks.find((chunk: any) => chunk.text.includes("Unpack the tarball"))
    expect(tarball?.heading).toBe("Widgets > Install > From a tarball")
    // A heading labels a chunk; it is not its text.
    for (const chunk of chunks) expect(chunk.text).not.toMatch(/^#/m)
    expect(content).toBe(chunks.map((chunk: any) => chunk.text).join(" [...] "))
    expect(content.length).toBeLessThanOrEqual(900)
    expect(content).not.toContain("configuration section says more")
    // In page order: each chunk's first line comes later in the page than the one before.
    const at = chunks.map((chunk: any) => whole.indexOf(chunk.text.split("\n").find((line: string) => !line.startsWith("```"))))
    expect(at.every((position: number) => position >= 0)).toBe(true)
    expect([...at].sort((x, y) => x - y)).toEqual(at)
  })

  it("keeps a code block's fences in a Markdown chunk, and gives plain chunks for format text", async () => {
    const markdown = (await postFetch(server.url, { url: `${site.origin}/guide.html`, query: "gadgetry", maxChars: 600 })).body.data
    const code = markdown.chunks.find((chunk: any) => chunk.text.includes("PREFIX=/opt/gadgetry"))
    expect(code.heading).toBe("Widgets > Install > From a tarball")
    expect(code.text.match(/^```/gm)?.length ?? 0).toBe(2)
    const text = (await postFetch(server.url, { url: `${site.origin}/guide.html`, query: "install from a tarball", format: "text", maxChars: 900 })).body.data
    expect(text.chunks.find((chunk: any) => chunk.text.includes("Unpack the tarball"))?.heading).toBe("Widgets > Install > From a tarball")
    for (const chunk of text.chunks) expect(chunk.text).not.toMatch(/```|\]\(|\*\*|^#/m)
  })

  it("keeps the chunks within maxTokens", async () => {
    const { body } = await postFetch(server.url, { url: `${site.origin}/guide.html`, query: "configuration settings defaults", maxTokens: 60 })
    expect(body.data.chunks.length).toBeGreaterThan(0)
    expect(await tokens(body.data.content)).toBeLessThanOrEqual(60)
    expect(body.data.chunks.every((chunk: any) => chunk.heading === "Widgets > Configure")).toBe(true)
  })

  it("without query, maxTokens cuts the content from its start", async () => {
    const { body } = await postFetch(server.url, { url: `${site.origin}/guide.html`, maxTokens: 40 })
    expect(body.data.chunks).toBeUndefined()
    expect(await tokens(body.data.content)).toBeLessThanOrEqual(40)
    expect(body.data.content.length).toBeGreaterThan(40)
    expect(whole.startsWith(body.data.content)).toBe(true)
  })

  it("the MCP tool web_fetch takes query and gives the same chunks, each under its headings in the text", async () => {
    const rest = (await postFetch(server.url, { url: `${site.origin}/guide.html`, query: "install from a tarball" })).body.data
    const { result } = await callTool(server.url, "web_fetch", { url: `${site.origin}/guide.html`, query: "install from a tarball" })
    expect(result.isError).toBe(false)
    expect(result.structuredContent.chunks).toEqual(rest.chunks)
    expect(result.structuredContent.content).toBe(rest.content)
    expect(result.content[0].text).toContain("## Widgets > Install > From a tarball\n")
    const html = await callTool(server.url, "web_fetch", { url: `${site.origin}/guide.html`, query: "install", format: "html" })
    expect(html.error).toMatchObject({ code: -32602 })
    expect(html.error.message).toContain("format: must be markdown or text with query")
  })
})
