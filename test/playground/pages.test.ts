/**
 * The pages are served by the core, so every way to run Periscope serves
 * them alike: checked here on the embed library's fetch handler and on the
 * Node server, without a browser. No key is needed to load them; they go out
 * with their CSP; the scripts parse and never write markup.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPeriscope, type Periscope } from "../../adapters/embed/index.ts"
import { contentSecurityPolicy, pagePaths } from "../../core/api/Playground.ts"
import { apiDocsScript } from "../../core/api/playground/ApiDocsScript.ts"
import { playgroundScript } from "../../core/api/playground/PlaygroundScript.ts"
import { type RunningServer, startInProcess } from "../support/servers.ts"

const KEY = "embed-key-0123456789abcdef"

const types: Record<(typeof pagePaths)[number], string> = {
  "/": "text/html; charset=utf-8",
  "/docs": "text/html; charset=utf-8",
  "/playground.js": "text/javascript; charset=utf-8",
  "/docs.js": "text/javascript; charset=utf-8",
  "/playground.css": "text/css; charset=utf-8",
  "/favicon.svg": "image/svg+xml"
}

describe("the playground pages", () => {
  let embed: Periscope
  let node: RunningServer

  beforeAll(async () => {
    embed = await createPeriscope({ apiKeys: [KEY] })
    node = await startInProcess()
  })
  afterAll(async () => {
    await embed?.close()
    await node?.close()
  })

  it("the embed handler serves every page without a key, with the CSP and no-referrer", async () => {
    for (const path of pagePaths) {
      const response = await embed.fetch(new Request(`http://embedded.test${path}`))
      expect(response.status, path).toBe(200)
      expect(response.headers.get("content-type"), path).toBe(types[path])
      expect(response.headers.get("content-security-policy"), path).toBe(contentSecurityPolicy)
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff")
      expect(response.headers.get("referrer-policy"), path).toBe("no-referrer")
      expect(await response.text(), path).not.toContain(KEY)
    }
  })

  it("the Node server serves the same bytes", async () => {
    for (const path of pagePaths) {
      const [fromNode, fromEmbed] = await Promise.all([
        fetch(`${node.url}${path}`).then((r) => r.text()),
        embed.fetch(new Request(`http://embedded.test${path}`)).then((r) => r.text())
      ])
      expect(fromNode, path).toBe(fromEmbed)
    }
  })

  it("the HTML loads scripts from files only (the CSP forbids inline script) and has the landmarks", async () => {
    for (const path of ["/", "/docs"]) {
      const html = await embed.fetch(new Request(`http://embedded.test${path}`)).then((r) => r.text())
      const scripts = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)]
      expect(scripts.length, path).toBe(1)
      expect(scripts[0]![0], path).toMatch(/src="\/(playground|docs)\.js"/)
      expect(scripts[0]![1], path).toBe("")
      expect(html, path).not.toMatch(/\son[a-z]+=/i)
      expect(html, path).not.toMatch(/\sstyle=/i)
      for (const landmark of ["<header", "<nav", "<main", "<footer", 'lang="en"', 'for="api-key"']) expect(html, path).toContain(landmark)
    }
    expect(contentSecurityPolicy).toContain("default-src 'none'")
    expect(contentSecurityPolicy).toContain("connect-src 'self'")
    expect(contentSecurityPolicy).not.toContain("unsafe")
  })

  it("the scripts parse and never turn text into markup", () => {
    for (const source of [playgroundScript, apiDocsScript]) {
      expect(() => new Function(source)).not.toThrow()
      expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/)
    }
  })

  it("the API stays behind the key while the pages are open", async () => {
    const response = await embed.fetch(new Request("http://embedded.test/openapi.json"))
    expect(response.status).toBe(401)
    const withKey = await embed.fetch(new Request("http://embedded.test/openapi.json", { headers: { authorization: `Bearer ${KEY}` } }))
    expect(withKey.status).toBe(200)
  })
})
