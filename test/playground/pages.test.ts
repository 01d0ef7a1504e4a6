/**
 * The pages are served by the core, so every way to run Periscope serves
 * them alike: checked here on the embed library's fetch handler, the Node
 * server and the Deno adapter (run by the deno binary), without a browser. No key is needed to load them; they go out
 * with their CSP; the scripts never write markup.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPeriscope, type Periscope } from "../../adapters/embed/index.ts"
import { contentSecurityPolicy, pagePaths } from "../../core/api/Playground.ts"
import { type ChildServer, type RunningServer, spawnDenoServer, startInProcess } from "../support/servers.ts"

const KEY = "embed-key-0123456789abcdef"

const typeOf = (path: string): string =>
  path === "/" || path === "/docs" ? "text/html; charset=utf-8"
  : path.endsWith(".js") ? "text/javascript; charset=utf-8"
  : path.endsWith(".css") ? "text/css; charset=utf-8"
  : path.endsWith(".svg") ? "image/svg+xml"
  : `no type expected for ${path}`

const scriptPaths = pagePaths.filter((path) => path.endsWith(".js"))

describe("the playground pages", () => {
  let embed: Periscope
  let node: RunningServer
  let deno: ChildServer

  beforeAll(async () => {
    embed = await createPeriscope({ apiKeys: [KEY] })
    ;[node, deno] = await Promise.all([startInProcess(), spawnDenoServer({ PERISCOPE_API_KEYS: KEY })])
  }, 180_000)
  afterAll(async () => {
    await Promise.all([embed?.close(), node?.close(), deno?.close()])
  })

  it("the embed handler serves every page without a key, with the CSP and no-referrer", async () => {
    for (const path of ["/", "/docs", "/playground.js", "/docs.js", "/playground.css", "/favicon.svg"]) expect(pagePaths).toContain(path)
    for (const path of pagePaths) {
      const response = await embed.fetch(new Request(`http://embedded.test${path}`))
      expect(response.status, path).toBe(200)
      expect(response.headers.get("content-type"), path).toBe(typeOf(path))
      expect(response.headers.get("content-security-policy"), path).toBe(contentSecurityPolicy)
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff")
      expect(response.headers.get("referrer-policy"), path).toBe("no-referrer")
      expect(await response.text(), path).not.toContain(KEY)
    }
  })

  it("the Node server and the Deno adapter serve the same bytes with the same headers", async () => {
    const read = async (response: Response) => ({
      status: response.status,
      body: await response.text(),
      headers: ["content-type", "content-security-policy", "x-content-type-options", "referrer-policy", "cache-control"].map((name) => response.headers.get(name))
    })
    for (const path of pagePaths) {
      const [fromEmbed, fromNode, fromDeno] = await Promise.all([
        embed.fetch(new Request(`http://embedded.test${path}`)).then(read),
        fetch(`${node.url}${path}`).then(read),
        fetch(`${deno.url}${path}`).then(read)
      ])
      expect(fromNode, `${path} from Node`).toEqual(fromEmbed)
      expect(fromDeno, `${path} from Deno`).toEqual(fromEmbed)
    }
  })

  it("the HTML loads one module from a file (the CSP forbids inline script), has the landmarks and the shared key form", async () => {
    for (const path of ["/", "/docs"]) {
      const html = await embed.fetch(new Request(`http://embedded.test${path}`)).then((r) => r.text())
      const scripts = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)]
      expect(scripts.length, path).toBe(1)
      expect(scripts[0]![0], path).toMatch(/^<script type="module" src="\/(playground|docs)\.js">/)
      expect(scripts[0]![1], path).toBe("")
      expect(html, path).not.toMatch(/\son[a-z]+=/i)
      expect(html, path).not.toMatch(/\sstyle=/i)
      for (const landmark of ["<header", "<nav", "<main", "<footer", 'lang="en"', 'for="api-key"']) expect(html, path).toContain(landmark)
      expect(html, path).toContain('<form id="key-form" class="key" aria-label="API key">')
      expect(html, path).not.toContain("<!-- include")
    }
    expect(contentSecurityPolicy).toContain("default-src 'none'")
    expect(contentSecurityPolicy).toContain("connect-src 'self'")
    expect(contentSecurityPolicy).not.toContain("unsafe")
  })

  it("the scripts never turn text into markup, and every module they import is served", async () => {
    const imports: Array<string> = []
    for (const path of scriptPaths) {
      const source = await embed.fetch(new Request(`http://embedded.test${path}`)).then((r) => r.text())
      expect(source, path).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/)
      for (const [line, imported] of source.matchAll(/^import .+ from "\.(\/[a-z-]+\.js)"$/gm)) {
        imports.push(line)
        expect(pagePaths, `${path}: ${line}`).toContain(imported)
      }
    }
    expect(imports.length).toBeGreaterThan(scriptPaths.length)
  })

  it("the API stays behind the key while the pages are open", async () => {
    const response = await embed.fetch(new Request("http://embedded.test/openapi.json"))
    expect(response.status).toBe(401)
    const withKey = await embed.fetch(new Request("http://embedded.test/openapi.json", { headers: { authorization: `Bearer ${KEY}` } }))
    expect(withKey.status).toBe(200)
  })
})
