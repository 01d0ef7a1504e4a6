/**
 * The starter index a user gets: the documentation of the packages an install of Periscope
 * puts in node_modules (its dependencies, not its devDependencies, and not Periscope's own
 * README). Every search and grounded-chat example of the README answers on it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { createPeriscope } from "../../adapters/embed/index.ts"
import { indexSnapshot } from "../../adapters/node/indexCommand.ts"
import { nodeModulesSource } from "../../adapters/node/sources/nodeModulesSource.ts"
import { buildStarterIndex } from "../../adapters/node/starterIndex.ts"
import { decodeSnapshot } from "../../core/index/Snapshot.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-starter-examples-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const writePackage = (nodeModules: string, name: string, readme: string) => {
  const dir = join(nodeModules, name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", description: `${name} package` }))
  writeFileSync(join(dir, "README.md"), readme)
}

/** Top-level packages our lock file marks as dev-only: an install of the package does not have them. */
const devOnlyPackages = (): Array<string> => {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean }> }
  return Object.entries(lock.packages)
    .filter(([path, entry]) => entry.dev === true && /^node_modules\/(?:@[^/]+\/)?[^/]+$/.test(path))
    .map(([path]) => path.slice("node_modules/".length))
}

/** The README's curl examples to `path`, as their JSON bodies. */
const readmeExamples = (path: string): Array<Record<string, unknown>> => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const escaped = path.replaceAll("/", "\\/")
  return [...readme.matchAll(new RegExp(`${escaped} \\\\\\n(?:[^\\n]*\\\\\\n)*?\\s*-d '(\\{[^']*\\})'`, "g"))].map((m) => JSON.parse(m[1]!))
}

describe("the starter index", () => {
  it("leaves Periscope's own package out", async () => {
    const nodeModules = join(work, "own", "node_modules")
    writePackage(nodeModules, "periscope-search", "# Periscope\n\nSea otters hold hands while they sleep.")
    writePackage(nodeModules, "otter-facts", "# Otter facts\n\nSea otters use stones as tools.")
    const dataDir = join(work, "own", "data")
    await Effect.runPromise(buildStarterIndex({ dataDir, nodeModules }))
    const index = decodeSnapshot(new Uint8Array(readFileSync(join(dataDir, "index.snapshot"))))
    expect(Array.from(index.documents(), (d) => d.url)).toEqual(["https://www.npmjs.com/package/otter-facts"])
  })

  it("answers every search and grounded-chat example of the README, built from the dependencies an install has", async () => {
    const out = join(work, "installed", "index.snapshot")
    const skip = [...devOnlyPackages(), "periscope-search"]
    expect(skip).toContain("vitest")
    const summary = await Effect.runPromise(indexSnapshot({ sources: [nodeModulesSource(join(root, "node_modules"), skip)], out, fresh: true, starter: true, allowShrink: true }))
    expect(summary.documents).toBeGreaterThan(20)
    const periscope = createPeriscope({ search: { snapshot: new Uint8Array(readFileSync(out)) } })
    try {
      const searches = [...readmeExamples("/api/search/webSearch"), ...readmeExamples("/api/search/imageSearch").map((b) => ({ ...b, images: true }))]
        // Examples with options (freshness, sources, ...) are for live providers.
        .filter((body) => Object.keys(body).every((k) => k === "keywords" || k === "num" || k === "images"))
      expect(searches.length).toBeGreaterThanOrEqual(2)
      for (const { images, ...body } of searches) {
        const request = body as { keywords: string; num?: number }
        const found = images === true ? (await periscope.imageSearch(request)).length : (await periscope.webSearch(request)).organic.length
        expect(found, JSON.stringify(body)).toBeGreaterThan(0)
      }

      // Chat examples without a model (the built-in grounded one answers): a model server's are left out.
      const chats = readmeExamples("/v1/chat/completions").filter((body) => body.model === undefined || body.model === "periscope-grounded")
      expect(chats.length).toBeGreaterThanOrEqual(1)
      for (const body of chats) {
        const answer = await periscope.chat(body as never) as any
        const question = JSON.stringify(body.messages)
        expect(answer.periscope_grounding, question).toMatchObject({ retrieval: "ok" })
        expect(answer.periscope_grounding.pages_read, question).toBeGreaterThan(0)
        // At least one source is quoted (a whole sentence), not only listed.
        expect(answer.choices[0].message.content, question).toMatch(/^1\. .*: ".+" \[1\]$/m)
      }
    } finally {
      await periscope.close()
    }
  }, 60_000)
})
