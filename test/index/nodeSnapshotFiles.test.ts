import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Logger } from "effect"
import { FetchHttpClient } from "effect/http"
import { afterAll, describe, expect, it } from "vitest"
import { jsonlToSnapshot } from "../../adapters/node/jsonlSnapshot.ts"
import { loadSnapshotFile, openInPlace, openSnapshotFile, readSnapshotFile, SnapshotFileError, writeSnapshotFile } from "../../adapters/node/snapshotFile.ts"
import { nodeEngineHooks } from "../../adapters/node/platform.ts"
import { searchChoiceOf, searchLayer } from "../../core/app/SearchBackend.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { encodeSnapshot, SnapshotError, TextInSource } from "../../core/index/Snapshot.ts"
import { sampleDocuments } from "./corpus.ts"
import { buildIndex } from "./support.ts"

const dir = mkdtempSync(join(tmpdir(), "periscope-snapshot-files-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("snapshot files (Node)", () => {
  const bytes = encodeSnapshot(buildIndex(sampleDocuments))

  it("write atomically and read back the same bytes", async () => {
    const path = join(dir, "nested", "index.snapshot")
    await Effect.runPromise(writeSnapshotFile(path, bytes))
    await Effect.runPromise(writeSnapshotFile(path, bytes)) // overwrite in place
    expect(await Effect.runPromise(readSnapshotFile(path))).toEqual(bytes)
    expect(readdirSync(join(dir, "nested"))).toEqual(["index.snapshot"]) // no temporary file left
    const index = await Effect.runPromise(loadSnapshotFile(path))
    expect(index.search("event loop", 10).hits).toHaveLength(2)
  })

  // Read and decoded, or opened in place: the same refusals, the file named.
  it.each([["read", loadSnapshotFile], ["opened", openSnapshotFile]] as const)("name the file and the problem when it cannot be %s", async (way, load) => {
    const missing = await Effect.runPromise(Effect.flip(load(join(dir, "missing.snapshot"))))
    expect(missing).toBeInstanceOf(SnapshotFileError)
    expect(missing.message).toBe("cannot read the snapshot: no such file")
    const cut = join(dir, `cut-${way}.snapshot`)
    writeFileSync(cut, bytes.subarray(0, bytes.length >> 1))
    const truncated = await Effect.runPromise(Effect.flip(load(cut)))
    expect(truncated).toBeInstanceOf(SnapshotError)
    expect((truncated as SnapshotError).reason).toBe("truncated")
    expect(truncated.message).toContain(cut)
    const damaged = join(dir, `damaged-${way}.snapshot`)
    const copy = bytes.slice()
    copy[copy.length - 100] = copy[copy.length - 100]! ^ 0x5a
    writeFileSync(damaged, copy)
    expect(((await Effect.runPromise(Effect.flip(load(damaged)))) as SnapshotError).reason).toBe("checksum-mismatch")
  })

  it("open in place: the same answers, and an index that outlives the file being replaced", async () => {
    const path = join(dir, "opened.snapshot")
    await Effect.runPromise(writeSnapshotFile(path, bytes))
    const opened = await Effect.runPromise(openSnapshotFile(path))
    const decoded = await Effect.runPromise(loadSnapshotFile(path))
    const queries = ["event loop", "asyncio", "python", "diagram"]
    for (const q of queries) expect(opened.search(q, 10), q).toEqual(decoded.search(q, 10))
    // A new snapshot renamed over the file: the open index keeps reading the one it opened.
    await Effect.runPromise(writeSnapshotFile(path, encodeSnapshot(buildIndex(sampleDocuments.slice(0, 1)))))
    for (const q of queries) expect(opened.search(q, 10), q).toEqual(decoded.search(q, 10))
    expect((await Effect.runPromise(openSnapshotFile(path))).documentCount).toBe(1)
  })

  it("open in place: the page text comes into memory, and then a rewrite in place cannot reach the index", async () => {
    const path = join(dir, "held.snapshot")
    await Effect.runPromise(writeSnapshotFile(path, bytes))
    const { index, settled } = await Effect.runPromise(openInPlace(path))
    const before = index.search("event loop", 10)
    expect(before.hits.length).toBe(2)
    expect(await settled).toBe("held")
    writeFileSync(path, bytes.subarray(0, 100)) // cp over it, cut short
    expect(index.search("event loop", 10)).toEqual(before)
  })

  it("open in place: a file rewritten while its text is read keeps being read from", async () => {
    const path = join(dir, "rewritten.snapshot")
    await Effect.runPromise(writeSnapshotFile(path, bytes))
    const { index, settled } = await Effect.runPromise(openInPlace(path))
    writeFileSync(path, bytes.map((b) => b ^ 1)) // the same length, other bytes, before the background read ends
    // "changed", or "failed" when the read met the file while it was cut to nothing: never kept.
    expect(["changed", "failed"]).toContain(await settled)
    expect(index.parts.pages.bytes).toBeInstanceOf(TextInSource)
  })

  it("are warmed up before they serve for the time the settings give, and not for 0", async () => {
    const path = join(dir, "warm.snapshot")
    await Effect.runPromise(writeSnapshotFile(path, bytes))
    const logsOf = async (search: { readonly warmUpMs?: number }, defaultWarmUpMs?: number) => {
      const messages: Array<string> = []
      const logger = Logger.make((options) => void messages.push(String(options.message)))
      const settings = settingsOf({ search })
      const choice = searchChoiceOf(settings.search, path, defaultWarmUpMs)
      const layer = searchLayer(choice, nodeEngineHooks(settings)).pipe(Layer.provide(NodeFileSystem.layer), Layer.provide(FetchHttpClient.layer))
      await Effect.runPromise(Effect.scoped(Layer.build(layer)).pipe(Effect.provide(Logger.layer([logger]))))
      return messages.join("\n")
    }
    expect(await logsOf({}, 200)).toMatch(/search: warmed up with [1-9]\d* queries in \d+ ms/)
    expect(await logsOf({ warmUpMs: 100 })).toMatch(/search: warmed up with [1-9]\d* queries in \d+ ms/)
    const off = await logsOf({ warmUpMs: 0 }, 200)
    expect(off).toContain(`search: ${sampleDocuments.length} documents`)
    expect(off).not.toContain("warmed up")
  })

  it("refuse to write where a folder stands", async () => {
    const error = await Effect.runPromise(Effect.flip(writeSnapshotFile(dir, bytes)))
    expect(error).toBeInstanceOf(SnapshotFileError)
    expect(error.path).toBe(dir)
  })
})

describe("JSONL to snapshot", () => {
  it("indexes good lines and reports bad ones by line number", async () => {
    const input = join(dir, "docs.jsonl")
    const lines = [
      JSON.stringify(sampleDocuments[0]),
      "{not json",
      "",
      JSON.stringify({ url: "relative/path", title: "x", text: "y" }),
      JSON.stringify({ ...sampleDocuments[1], title: "Older title" }),
      JSON.stringify(sampleDocuments[1]),
      JSON.stringify({ url: "https://img.example/", title: "Images", text: "pictures", images: [{ url: "no" }, { url: "https://img.example/a.png", alt: "kite" }] })
    ]
    writeFileSync(input, lines.join("\n"))
    const output = join(dir, "out", "docs.snapshot")
    const report = await Effect.runPromise(jsonlToSnapshot(input, output))
    expect(report).toMatchObject({ output, lines: 7, documents: 3, images: 2, duplicates: 1, problems: 3 })
    expect(report.problemSamples).toEqual([
      { line: 2, url: "", reason: "not a JSON value" },
      { line: 4, url: "relative/path", reason: "url: must be an absolute http(s) URL" },
      { line: 7, url: "https://img.example/", reason: "images[0].url: must be an absolute http(s) URL" }
    ])
    const index = await Effect.runPromise(loadSnapshotFile(output))
    expect(index.search("node.js event loop", 10).hits[0]?.title).toBe("The Node.js Event Loop") // the later line won
    expect(index.searchImages("kite", 10)).toEqual([{ url: "https://img.example/a.png", refUrl: "https://img.example/", title: "kite" }])
  })

  it("fails with the file named when the input is missing", async () => {
    const error = await Effect.runPromise(Effect.flip(jsonlToSnapshot(join(dir, "nope.jsonl"), join(dir, "x.snapshot"))))
    expect(error).toBeInstanceOf(SnapshotFileError)
    expect(error.path).toBe(join(dir, "nope.jsonl"))
  })
})
