/**
 * The same snapshot answers the same on Node and on Deno: a snapshot of real Debian
 * documentation passages (and the multilingual samples) is written to a file, the Deno probe
 * loads it with Deno.readFile and answers a query set, and Node answers the same set here.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { decodeSnapshot, encodeSnapshot } from "../../core/index/Snapshot.ts"
import { pagePassages } from "../bench/support/passageCorpus.ts"
import { debianDocsOrSkip, readPage } from "../support/debianDocs.ts"
import { sampleDocuments, sampleQueries } from "./corpus.ts"

const root = resolve(import.meta.dirname, "../..")
const deno = join(root, "node_modules/.bin/deno")
const pages = debianDocsOrSkip()

describe.skipIf(pages === undefined)("Node and Deno", () => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-deno-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("give the same answers from the same snapshot", () => {
    const chosen = pages!.filter((_, i) => i % 25 === 0).slice(0, 200)
    const builder = new IndexBuilder()
    for (const page of chosen) builder.add(pagePassages(page, readPage(page)))
    builder.add(sampleDocuments)
    const index = builder.build()
    expect(index.documentCount).toBeGreaterThan(500)
    const snapshot = join(dir, "index.snapshot")
    writeFileSync(snapshot, encodeSnapshot(index))

    // Queries from the corpus's own titles, plus operators and multilingual samples.
    const titles = [...index.documents()].filter((_, i) => i % 40 === 0).map((d) => d.title.split(/\s+/).slice(0, 3).join(" "))
    const queries = [...sampleQueries, ...titles, "\"event loop\"", "function -python", "site:docs.python.org library", "table site:postgresql.org"]
    const queriesFile = join(dir, "queries.json")
    writeFileSync(queriesFile, JSON.stringify(queries))

    const output = execFileSync(deno, ["run", "--quiet", "--allow-read", join(root, "test/index/deno-engine-probe.ts"), snapshot, queriesFile], {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000,
      maxBuffer: 64 << 20
    })
    const fromDeno = JSON.parse(output) as { checksum: string; documents: number; images: number; answers: Array<unknown> }
    expect(fromDeno.checksum).toBe("wasm")
    const loaded = decodeSnapshot(new Uint8Array(readFileSync(snapshot)))
    const fromNode = queries.map((q) => ({ query: q, web: loaded.search(q, 10), images: loaded.searchImages(q, 10) }))
    expect(fromDeno.documents).toBe(index.documentCount)
    expect(fromDeno.images).toBe(index.imageCount)
    expect(fromDeno.answers).toEqual(JSON.parse(JSON.stringify(fromNode)))
    // Most queries found something, so the comparison is not between empty lists.
    expect(fromNode.filter((a) => a.web.hits.length > 0).length).toBeGreaterThan(queries.length * 0.7)
  })
})
