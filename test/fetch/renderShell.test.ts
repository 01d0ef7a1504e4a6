/**
 * Which pages `render: "auto"` renders: app shells (little main text, while the HTML is mostly
 * scripts or shows one empty root), judged with the text webFetch's reader extracts from them.
 */
import { describe, expect, it } from "vitest"
import { isAppShell } from "../../core/ingest/AppShell.ts"
import { readablePage } from "../../core/ingest/ReadablePage.ts"
import { APP_SCRIPT, ARTICLE, SHELL_PAGE } from "./renderSite.ts"

const mainText = async (html: string): Promise<string> => {
  const page = await readablePage(new TextEncoder().encode(html), "text/html; charset=utf-8", "https://site.example/", "text")
  return page?.text ?? ""
}

const judge = async (html: string) => isAppShell(html, await mainText(html))

const bundle = `<script>${"window.__app=" + JSON.stringify({ chunks: Array.from({ length: 200 }, (_, i) => `chunk-${i}-${"x".repeat(40)}`) })}</script>`

describe("isAppShell", () => {
  it("finds a lone app root with its script", async () => {
    expect(await judge(SHELL_PAGE)).toBe(true)
    expect(await judge(`<!doctype html><html><head><title>App</title><script type="module" src="/assets/index.js"></script></head><body><div id="app"></div></body></html>`)).toBe(true)
  })

  it("finds a page that is mostly an inline bundle around a little text", async () => {
    expect(await judge(`<html><head><title>Docs</title></head><body><header><a href="/">Docs home</a> <a href="/guide">Guide</a> <a href="/api">API reference</a> <a href="/blog">Blog</a></header><div id="__next"><p>Loading the documentation...</p></div>${bundle}</body></html>`)).toBe(true)
  })

  it("leaves an article alone, scripts or not", async () => {
    const article = `<html><head><title>${ARTICLE.title}</title></head><body><main><article><h1>${ARTICLE.title}</h1>${ARTICLE.paragraphs.map((p) => `<p>${p}</p>`).join("")}</article></main>${bundle}<script>${APP_SCRIPT}</script></body></html>`
    expect(await judge(article)).toBe(false)
  })

  it("leaves a short page without scripts alone", async () => {
    expect(await judge(`<html><head><title>Hello</title></head><body><p>Hello.</p></body></html>`)).toBe(false)
    expect(await judge(`<html><body></body></html>`)).toBe(false)
  })

  it("does not count data blocks as scripts", async () => {
    const data = `<html><head><title>Hello</title><script type="application/ld+json">{"@type":"Thing","name":"${"n".repeat(2000)}"}</script></head><body><p>Hello.</p></body></html>`
    expect(await judge(data)).toBe(false)
  })

  it("judges hostile markup (thousands of unclosed scripts, comments and tags) in one pass", () => {
    const unclosedScripts = `<html><body><div id="root"></div>${"<script>x=1;".repeat(400_000)}`
    expect(isAppShell(unclosedScripts, "")).toBe(true)
    const unclosedComments = `<html><body><script src="/a.js"></script>${"<!-- a ".repeat(400_000)}`
    expect(isAppShell(unclosedComments, "")).toBe(true)
    const openTags = `<html><body><script src="/a.js"></script>${"<div <p <span ".repeat(300_000)}`
    expect(isAppShell(openTags, "")).toBe(true)
    const hiddenElements = `<html><body><script src="/a.js"></script>${"<svg><style>".repeat(300_000)}<p>${"word ".repeat(100)}</p>`
    expect(isAppShell(hiddenElements, "")).toBe(true)
    const bytes = new TextEncoder().encode(`<html><body><div id="app"></div><script type="module" src="/main.js"></script></body></html>`)
    expect(isAppShell(bytes, "  \n ")).toBe(true)
  })

  it("leaves a short page with a script but text to read alone", async () => {
    const page = `<html><head><title>Status</title><script src="/analytics.js"></script></head><body><h1>Service status</h1><p>All systems are running normally today, and no incident has been reported this week.</p></body></html>`
    expect(await judge(page)).toBe(false)
  })
})
