/**
 * The starter index: on a first start with no snapshot, `npm start` builds one
 * from the documentation of the installed packages (no network) and answers
 * real web and image searches from it. Run through the real start path
 * (adapters/node/main.ts in a child process) into a temporary data directory.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { starterMarkerPath } from "../../adapters/node/snapshotFile.ts"
import { buildStarterIndex, ensureStarterIndex, ownNodeModules } from "../../adapters/node/starterIndex.ts"
import { decodeSnapshot } from "../../core/index/Snapshot.ts"
import { authHeaders, spawnNodeServer, TEST_KEY } from "../support/servers.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-starter-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("starter index", () => {
  it("reads the node_modules our own dependencies are in, whatever the working directory", () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "periscope-cwd-"))
    const before = process.cwd()
    try {
      process.chdir(elsewhere)
      const found = ownNodeModules()
      expect(existsSync(join(found, "effect", "package.json"))).toBe(true)
      expect(found).toBe(resolve(before, "node_modules"))
    } finally {
      process.chdir(before)
      rmSync(elsewhere, { recursive: true, force: true })
    }
  })

  it("indexes the READMEs and docs in node_modules, linked to npm and to the packaged files", async () => {
    const dataDir = join(work, "direct")
    const { summary, message } = await Effect.runPromise(buildStarterIndex({ dataDir, nodeModules: join(root, "node_modules") }))
    expect(summary.documents).toBeGreaterThan(50)
    expect(summary.failed).toBe(0)
    expect(message).toContain("npm run index -- ")
    const index = decodeSnapshot(new Uint8Array(readFileSync(join(dataDir, "index.snapshot"))))
    const links = new Set(Array.from(index.documents(), (d) => d.url))
    // Packages this project depends on are installed, so their READMEs are there.
    for (const name of ["effect", "linkedom", "@mozilla/readability", "warcio", "cli-progress"]) {
      expect(links.has(`https://www.npmjs.com/package/${name}`), name).toBe(true)
    }
    const cli = index.search("progress bar terminal", 5).hits[0]
    expect(cli).toMatchObject({ link: "https://www.npmjs.com/package/cli-progress", date: null })
    expect(cli!.title.startsWith("cli-progress")).toBe(true)

    // Marked as the starter, so the operator's first `periscope index` replaces it (test/ingest/safeIndexing.test.ts).
    expect(existsSync(starterMarkerPath(join(dataDir, "index.snapshot")))).toBe(true)

    // Every search example of the README answers on the index a fresh install ships (issue 12).
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const examples = [...readme.matchAll(/\/api\/search\/(webSearch|imageSearch)[^\n]*\\\n(?:[^\n]*\\\n)*?\s*-d '(\{[^']*\})'/g)]
      .map((m) => ({ endpoint: m[1]!, body: JSON.parse(m[2]!) as { keywords: string; num?: number } }))
      // The seed's requests; examples with options (freshness, ...) belong to live web search with providers configured.
      .filter(({ body }) => Object.keys(body).every((k) => k === "keywords" || k === "num"))
    expect(examples.length).toBeGreaterThanOrEqual(2)
    for (const { endpoint, body } of examples) {
      const found = endpoint === "webSearch" ? index.search(body.keywords, body.num ?? 10).hits.length : index.searchImages(body.keywords, body.num ?? 10).length
      expect(found, `README ${endpoint} ${JSON.stringify(body)}`).toBeGreaterThan(0)
    }

    // A snapshot already there is left alone.
    expect(await Effect.runPromise(ensureStarterIndex({ dataDir }))).toBeUndefined()
  })

  it("is built by the first `npm start` and answers webSearch and imageSearch", async () => {
    const dataDir = join(work, "started")
    const server = await spawnNodeServer({ PERISCOPE_DATA_DIR: dataDir, PERISCOPE_API_KEYS: TEST_KEY }, undefined)
    try {
      expect(existsSync(join(dataDir, "index.snapshot"))).toBe(true)
      expect(server.output()).toContain("built a starter index")
      expect(server.output()).toContain("npm run index -- ")

      const web = await fetch(`${server.url}/api/search/webSearch`, {
        method: "POST",
        headers: authHeaders(),
        body: JSON.stringify({ keywords: "parse robots.txt crawler", num: 5 })
      })
      const webBody = await web.json() as { success: boolean; data: { organic: Array<{ title: string; link: string }> } }
      expect(webBody.success).toBe(true)
      expect(webBody.data.organic.map((r) => r.link)).toContain("https://www.npmjs.com/package/robots-parser")

      const images = await fetch(`${server.url}/api/search/imageSearch`, {
        method: "POST",
        headers: authHeaders(),
        body: JSON.stringify({ keywords: "logo", num: 5 })
      })
      const imageBody = await images.json() as { success: boolean; data: Array<{ url: string; refUrl: string; title: string }> }
      expect(imageBody.success).toBe(true)
      expect(imageBody.data.length).toBeGreaterThan(0)
      for (const image of imageBody.data) {
        expect(image.url).toMatch(/^https?:\/\//)
        expect(image.refUrl).toMatch(/^https:\/\/(www\.npmjs\.com\/package\/|unpkg\.com\/)/)
      }
    } finally {
      await server.close()
    }
  }, 180_000)
})
