/**
 * `periscope index` with search.embeddings, against the loopback stand-in: the snapshot file
 * carries the vectors, a second run sends only the changed page's passage, a --fresh run reuses
 * the old file's vectors, and a server that is down leaves the old snapshot as it was.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { formatSummary, indexSnapshot } from "../../adapters/node/indexCommand.ts"
import { loadSnapshotFile } from "../../adapters/node/snapshotFile.ts"
import { jsonlSource } from "../../adapters/node/sources/jsonlSource.ts"
import { type ModelServerStandIn, startModelServerStandIn } from "./support/modelServerStandIn.ts"

let standIn: ModelServerStandIn
let dir: string

beforeAll(async () => {
  standIn = await startModelServerStandIn({ dimensions: 32 })
  dir = mkdtempSync(join(tmpdir(), "periscope-hybrid-index-"))
})
afterAll(async () => {
  await standIn.close()
  rmSync(dir, { recursive: true, force: true })
})

const pages = (orchard: string) => [
  { url: "https://a.example/1", title: "Garage", text: "Drivers park the car in a garage." },
  { url: "https://a.example/2", title: "Orchard", text: orchard },
  { url: "https://a.example/3", title: "Boats", text: "A boat floats on water." }
]

const run = (source: string, out: string, fresh = false) =>
  Effect.runPromise(indexSnapshot({
    sources: [jsonlSource(source)],
    out,
    fresh,
    allowShrink: true,
    embeddings: { baseUrl: standIn.baseUrl, model: "stand-in-embed", retries: 0, timeoutMs: 2_000 },
    embedProgress: () => undefined
  }))

describe("periscope index with search.embeddings", () => {
  it("writes the vectors, embeds only what changed on the next run, and reuses them on a --fresh one", async () => {
    const source = join(dir, "pages.jsonl")
    const out = join(dir, "index.snapshot")
    writeFileSync(source, pages("Apples grow on trees.").map((p) => JSON.stringify(p)).join("\n"))
    standIn.requests.length = 0
    const first = await run(source, out)
    expect(first.notWritten).toBeUndefined()
    expect(first.embeddings).toMatchObject({ passages: 3, embedded: 3, reused: 0, model: "stand-in-embed", dimensions: 32 })
    expect(formatSummary(first)).toMatch(/Vectors: 3 passages of stand-in-embed \(32 dimensions\): 3 embedded in [\d.]+ s, 0 reused/)
    const loaded = await Effect.runPromise(loadSnapshotFile(out))
    expect(loaded.parts.vectors?.count).toBe(3)

    writeFileSync(source, pages("Cherries ripen in June.").map((p) => JSON.stringify(p)).join("\n"))
    standIn.requests.length = 0
    const second = await run(source, out)
    expect(second.embeddings).toMatchObject({ passages: 3, embedded: 1, reused: 2 })
    expect(standIn.embeddedTexts()).toEqual(["Orchard\nCherries ripen in June."])

    standIn.requests.length = 0
    const fresh = await run(source, out, true)
    expect(fresh.embeddings).toMatchObject({ embedded: 0, reused: 3 })
    expect(standIn.requests).toHaveLength(0)
  })

  it("writes nothing when the embedding server is down, and says why", async () => {
    const source = join(dir, "down.jsonl")
    const out = join(dir, "down.snapshot")
    writeFileSync(source, pages("Pears.").map((p) => JSON.stringify(p)).join("\n"))
    await run(source, out)
    const before = readFileSync(out)
    writeFileSync(source, pages("Plums.").map((p) => JSON.stringify(p)).join("\n"))
    standIn.behaviour.down = true
    try {
      const summary = await run(source, out)
      expect(summary.notWritten).toMatch(/^search.embeddings: the embedding server at http:\/\/127.0.0.1:\d+\/v1 failed: .*could not be reached.*; the snapshot was left as it was/)
      expect(readFileSync(out).equals(before)).toBe(true)
    } finally {
      standIn.behaviour.down = false
    }
  })
})
