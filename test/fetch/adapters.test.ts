/**
 * webFetch on the real entry points: the Node server (`npm start`'s adapters/node/main.ts, its
 * PageFetcher pinned to the checked address) and the Deno adapter (the fetch-based PageFetcher),
 * each as a child process with a config file allowing one loopback site. Both read the same
 * page alike (Markdown with its table and code, a PDF) and refuse a loopback address they
 * were not allowed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildServer, spawnDenoServer, spawnNodeServer, TEST_KEY } from "../support/servers.ts"
import { minimalPdf, send, serveSite, type Site } from "./support.ts"

let dataDir: string
let site: Site
let secret: Site
let node: ChildServer | undefined
let deno: ChildServer | undefined

beforeAll(async () => {
  site = await serveSite({
    "/page.html": send(
      `<html><head><title>Gadgets</title></head><body><nav><a href="/">Home</a> <a href="/x">Somewhere else entirely</a></nav><main><h1>Gadgets</h1>
      <table><tr><th>Name</th><th>Price</th></tr><tr><td>gizmo</td><td>5</td></tr></table>
      <pre><code class="language-python">print("hi")</code></pre></main></body></html>`,
      "text/html"
    ),
    "/doc.pdf": send(minimalPdf(["Gadget manual first line"], "Gadget Manual"), "application/pdf")
  })
  secret = await serveSite({ "/": send("secret", "text/plain") })
  dataDir = mkdtempSync(join(tmpdir(), "periscope-fetch-adapters-"))
  const configPath = join(dataDir, "periscope.json")
  writeFileSync(configPath, JSON.stringify({ search: { backend: "fixture" }, fetch: { allowHosts: [site.host] } }))
  const env = { PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_CONFIG: configPath }
  ;[node, deno] = await Promise.all([spawnNodeServer({ ...env, PERISCOPE_DATA_DIR: dataDir }), spawnDenoServer(env)])
}, 180_000)

afterAll(async () => {
  await Promise.all([node?.close(), deno?.close(), site?.close(), secret?.close()])
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
})

const post = async (server: ChildServer, body: unknown) => {
  const response = await fetch(`${server.url}/api/search/webFetch`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() as any }
}

describe("webFetch on Node and Deno", () => {
  for (const name of ["node", "deno"] as const) {
    it(`${name}: Markdown and PDF alike; an address not allowed refused`, async () => {
      const server = name === "node" ? node! : deno!
      const page = await post(server, { url: `${site.origin}/page.html` })
      expect(page.status, server.output()).toBe(200)
      expect(page.body.data.title).toBe("Gadgets")
      expect(page.body.data.content).toBe("# Gadgets\n\n| Name | Price |\n| --- | --- |\n| gizmo | 5 |\n\n```python\nprint(\"hi\")\n```")
      const pdf = await post(server, { url: `${site.origin}/doc.pdf` })
      expect(pdf.status).toBe(200)
      expect(pdf.body.data).toMatchObject({ title: "Gadget Manual", content: "Gadget manual first line", contentType: "application/pdf" })
      for (const url of [`http://127.0.0.1:${secret.port}/`, `http://[::ffff:7f00:1]:${secret.port}/`, `http://localhost:${secret.port}/`]) {
        const refused = await post(server, { url })
        expect(refused.status, url).toBe(403)
      }
      expect(secret.requested).toEqual([])
    })
  }
})
