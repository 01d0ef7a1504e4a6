/** pageByUrl: a page of the index by its address, with its stored text, in memory and from a snapshot file. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { openSnapshotFile } from "../../adapters/node/snapshotFile.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { pageByUrl } from "../../core/index/PageByUrl.ts"
import { decodeSnapshot, encodeSnapshot } from "../../core/index/Snapshot.ts"

const work = mkdtempSync(join(tmpdir(), "periscope-page-by-url-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

// Given out of order, with spellings the index normalises (a trailing slash, a tracking parameter, a fragment).
const documents = Array.from({ length: 300 }, (_, i) => ({
  url: `https://site${i % 7}.example/docs/page-${(i * 37) % 300}${i % 5 === 0 ? "/" : ""}${i % 11 === 0 ? "?utm_source=x" : ""}`,
  title: `Page ${i}`,
  text: `Page ${i} says ünïcode ${"words ".repeat(i % 4)}and ends.`,
  ...(i % 2 === 0 ? { date: "2024-05-01" } : {})
}))
documents.push({ url: "https://site1.example/guide#install", title: "Install", text: "Install section.", date: "2024-05-01" })
documents.push({ url: "https://site1.example/guide#usage", title: "Usage", text: "Usage section.", date: "2024-05-01" })

const builder = new IndexBuilder()
builder.add(documents)
const index = builder.build()

describe("pageByUrl", () => {
  it("finds every page of the index by its stored URL, and by another spelling of it", () => {
    const stored = Array.from(index.documents())
    expect(stored).toHaveLength(index.documentCount)
    for (const doc of stored) {
      expect(pageByUrl(index, doc.url, 1000)).toEqual({ url: doc.url, title: doc.title, text: doc.text, date: doc.date ?? null })
    }
    const respelt = pageByUrl(index, "HTTPS://Site3.example:443/docs/page-111/?utm_medium=y", 1000)
    expect(respelt?.url).toBe(stored.find((d) => d.url.includes("site3.example/docs/page-111"))!.url)
    expect(pageByUrl(index, "https://site1.example/guide#usage", 1000)?.title).toBe("Usage")
  })

  it("answers undefined for a page the index does not hold or a string that is no URL", () => {
    expect(pageByUrl(index, "https://site1.example/docs/page-9999", 1000)).toBeUndefined()
    expect(pageByUrl(index, "https://elsewhere.example/", 1000)).toBeUndefined()
    expect(pageByUrl(index, "not a url", 1000)).toBeUndefined()
    expect(pageByUrl(new IndexBuilder().build(), "https://site1.example/guide#usage", 1000)).toBeUndefined()
  })

  it("gives at most the characters asked for, whole characters only", () => {
    const doc = Array.from(index.documents()).find((d) => d.text.includes("ünïcode"))!
    const cut = pageByUrl(index, doc.url, 12)!.text
    expect(cut).toBe(doc.text.slice(0, 12))
  })

  it("reads the same pages from a decoded snapshot and from a snapshot file whose text stays on disk", async () => {
    const bytes = encodeSnapshot(index)
    const file = join(work, "index.snapshot")
    writeFileSync(file, bytes)
    const decoded = decodeSnapshot(bytes)
    const opened = await Effect.runPromise(openSnapshotFile(file))
    for (const doc of Array.from(index.documents()).filter((_, i) => i % 13 === 0)) {
      expect(pageByUrl(decoded, doc.url, 50)).toEqual(pageByUrl(index, doc.url, 50))
      expect(pageByUrl(opened, doc.url, 50)).toEqual(pageByUrl(index, doc.url, 50))
    }
  })
})
