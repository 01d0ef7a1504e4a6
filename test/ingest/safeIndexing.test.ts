/**
 * Index runs that never lose data and never hide damage (issue 11): sources
 * that yield nothing leave a good snapshot byte-identical (unless
 * --allow-shrink), a --fresh run that would shrink the snapshot is refused,
 * every damaged input (cut archives, binary files under .html names, bad
 * JSONL) is reported with what went wrong, and the starter index is replaced
 * by the operator's first index (issue 12). Real files, a real loopback site,
 * and the real CLI for the exit codes.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Stream } from "effect"
import { WARCRecord, WARCSerializer } from "warcio"
import { afterAll, describe, expect, it } from "vitest"
import { formatSummary, indexSnapshot, type IndexSummary } from "../../adapters/node/indexCommand.ts"
import { starterMarkerPath } from "../../adapters/node/snapshotFile.ts"
import { openSources } from "../../adapters/node/sources/openSources.ts"
import { warcSource } from "../../adapters/node/sources/warcSource.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { decodeSnapshot, encodeSnapshot } from "../../core/index/Snapshot.ts"
import type { SourceItem } from "../../core/ingest/DocumentSource.ts"
import { notHtml } from "../../core/ingest/NotHtml.ts"
import { page, sendHtml, startSiteServer } from "./support/siteServer.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-safe-index-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

let serial = 0
const fresh = (name: string) => {
  const path = join(work, `${name}-${++serial}`)
  mkdirSync(path, { recursive: true })
  return path
}

/** A good snapshot of `n` documents where the run writes; returns its path and bytes. */
const goodSnapshot = (n = 3) => {
  const builder = new IndexBuilder()
  builder.add(Array.from({ length: n }, (_, i) => ({
    url: `https://good.example.com/page-${i}`,
    title: `Good page ${i}`,
    text: `A page of the good snapshot about lighthouses, number ${i}.`
  })))
  const path = join(fresh("snapshot"), "index.snapshot")
  writeFileSync(path, encodeSnapshot(builder.build()))
  return { path, bytes: readFileSync(path) }
}

const run = (args: ReadonlyArray<string>, out: string, options: { fresh?: boolean; allowShrink?: boolean; keepStarter?: boolean } = {}) =>
  Effect.runPromise(indexSnapshot({ sources: openSources(args, { allowPrivate: true, crawl: { delayMs: 0, timeoutMs: 2000 } }), out, ...options }))

const collect = (items: Stream.Stream<SourceItem, unknown>) => Effect.runPromise(Stream.runCollect(items)).then((c) => [...c])
const docs = (items: ReadonlyArray<SourceItem>) => items.flatMap((i) => (i._tag === "Document" ? [i.document] : []))
const failures = (items: ReadonlyArray<SourceItem>) => items.flatMap((i) => (i._tag === "Failed" ? [`${i.origin}: ${i.message}`] : []))

const html = (title: string) =>
  `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1>` +
  `<p>${title} is a page with enough ordinary words in it to be indexed as real text by the indexer.</p></main></body></html>`

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), Buffer.from("IHDR"), Buffer.alloc(200, 7)])
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(300, 0x41)])
/** Bytes from a fixed linear congruential generator: random-looking, the same every run. */
const randomBytes = (n: number, seed = 7) => {
  const out = Buffer.alloc(n)
  let x = seed
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    out[i] = x >>> 24
  }
  return out
}

/** A closed loopback port: a server is started to learn a free port, then stopped. */
const closedPort = async () => {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((done) => server.close(() => done()))
  return port
}

const warcRecords = (n: number, extra: { date?: string; lastModified?: string } = {}) =>
  Array.from({ length: n }, (_, i) =>
    WARCRecord.create({
      url: `https://archive.example.org/story-${i}`,
      date: extra.date ?? "2024-05-06T07:08:09Z",
      type: "response",
      warcVersion: "WARC/1.1",
      httpHeaders: { "Content-Type": "text/html; charset=utf-8", ...(extra.lastModified ? { "Last-Modified": extra.lastModified } : {}) }
    }, [new TextEncoder().encode(html(`Story ${i}`))]))

const serialize = async (records: ReadonlyArray<WARCRecord>, gzip: boolean) => {
  const members: Array<Buffer> = []
  for (const record of records) members.push(Buffer.from(await WARCSerializer.serialize(record, { gzip })))
  return members
}

describe("a run whose sources yield nothing leaves the snapshot as it was", () => {
  const nothingCases: ReadonlyArray<{ readonly name: string; readonly args: () => Promise<Array<string>>; readonly reported: RegExp }> = [
    {
      name: "an empty folder",
      args: async () => [`${fresh("empty")}=https://docs.example.com/`],
      reported: /no \.html, \.htm or \.xhtml files in this folder/
    },
    {
      name: "an unreachable host",
      args: async () => [`http://127.0.0.1:${await closedPort()}/`],
      reported: /robots\.txt could not be read: ECONNREFUSED/
    },
    {
      name: "a garbage .warc",
      args: async () => {
        const path = join(fresh("garbage"), "crawl.warc")
        writeFileSync(path, randomBytes(5000))
        return [path]
      },
      reported: /not a WARC archive/
    },
    {
      name: "a garbage .warc.gz",
      args: async () => {
        const path = join(fresh("garbage-gz"), "crawl.warc.gz")
        writeFileSync(path, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), randomBytes(4000, 11)]))
        return [path]
      },
      reported: /the archive is (corrupt|truncated) at byte \d+ \(gzip: /
    },
    {
      name: "an empty .jsonl",
      args: async () => {
        const path = join(fresh("jsonl"), "docs.jsonl")
        writeFileSync(path, "")
        return [path]
      },
      reported: /no documents: the file has no lines/
    },
    {
      name: "a .jsonl of bad lines only",
      args: async () => {
        const path = join(fresh("jsonl-bad"), "docs.jsonl")
        writeFileSync(path, `{"url": "nope", "title": "x", "text": "y"}\nnot json at all\n`)
        return [path]
      },
      reported: /docs\.jsonl:1: url: must be an absolute http\(s\) URL/
    },
    {
      name: "a folder of .html files that are images and random bytes",
      args: async () => {
        const folder = fresh("binary")
        writeFileSync(join(folder, "a.html"), PNG)
        writeFileSync(join(folder, "b.html"), randomBytes(3000))
        return [`${folder}=https://docs.example.com/`]
      },
      reported: /a\.html: a PNG image, not HTML/
    }
  ]

  for (const { name, args, reported } of nothingCases) {
    it(`${name}: refused, reported, nothing written`, async () => {
      const { path, bytes } = goodSnapshot()
      for (const freshRun of [true, false]) {
        const summary = await run(await args(), path, { fresh: freshRun })
        expect(summary.read).toBe(0)
        expect(summary.notWritten).toMatch(/^nothing was indexed from the sources \(\d+ errors?, \d+ items? skipped\); the snapshot .* was left as it was/)
        expect(summary.errors.map((e) => `${e.origin}: ${e.message}`).join("\n")).toMatch(reported)
        expect(readFileSync(path).equals(bytes)).toBe(true)
        expect(formatSummary(summary)).toContain("Not written: nothing was indexed")
      }
    })
  }

  it("a crawl that robots.txt refuses: refused, nothing written", async () => {
    const site = await startSiteServer({
      "/robots.txt": (_q, r) => {
        r.writeHead(200, { "content-type": "text/plain" })
        r.end("User-agent: *\nDisallow: /\n")
      },
      "/": sendHtml(page("Home"))
    })
    try {
      const { path, bytes } = goodSnapshot()
      const summary = await run([`${site.origin}/`], path, { fresh: true })
      expect(summary.read).toBe(0)
      expect(summary.skipped).toEqual([{ reason: "disallowed by robots.txt", count: 1 }])
      expect(summary.notWritten).toContain("nothing was indexed")
      expect(readFileSync(path).equals(bytes)).toBe(true)
      expect(site.requested).toEqual(["/robots.txt"])
    } finally {
      await site.close()
    }
  })

  it("writes nothing where no snapshot existed either, and --allow-shrink writes the empty one when asked", async () => {
    const out = join(fresh("none"), "index.snapshot")
    const empty = `${fresh("empty2")}=https://docs.example.com/`
    const refused = await run([empty], out, { fresh: true })
    expect(refused.notWritten).toContain("no snapshot was written")
    expect(existsSync(out)).toBe(false)
    const forced = await run([empty], out, { fresh: true, allowShrink: true })
    expect(forced.notWritten).toBeUndefined()
    expect(decodeSnapshot(new Uint8Array(readFileSync(out))).documentCount).toBe(0)
  })
})

describe("a --fresh run never shrinks the snapshot unless asked", () => {
  it("refuses fewer documents than the snapshot has, and replaces it with --allow-shrink", async () => {
    const { path, bytes } = goodSnapshot(3)
    const folder = fresh("small")
    writeFileSync(join(folder, "one.html"), html("The only page"))
    const refused = await run([`${folder}=https://small.example.com/`], path, { fresh: true })
    expect(refused.notWritten).toMatch(/^--fresh would replace .*index\.snapshot \(3 documents\) with 1 document \(0 errors, 0 items skipped\); it was left as it was\. Pass --allow-shrink/)
    expect(readFileSync(path).equals(bytes)).toBe(true)

    const allowed = await run([`${folder}=https://small.example.com/`], path, { fresh: true, allowShrink: true })
    expect(allowed.notWritten).toBeUndefined()
    expect(decodeSnapshot(new Uint8Array(readFileSync(path))).documentCount).toBe(1)
  })

  it("replaces with as many or more documents, and an unreadable old snapshot, without asking", async () => {
    const { path } = goodSnapshot(2)
    const folder = fresh("same")
    writeFileSync(join(folder, "a.html"), html("Alpha"))
    writeFileSync(join(folder, "b.html"), html("Beta"))
    expect((await run([`${folder}=https://same.example.com/`], path, { fresh: true })).notWritten).toBeUndefined()
    writeFileSync(path, "not a snapshot")
    expect((await run([`${folder}=https://same.example.com/`], path, { fresh: true })).notWritten).toBeUndefined()
    expect(decodeSnapshot(new Uint8Array(readFileSync(path))).documentCount).toBe(2)
  })
})

describe("every damaged input is reported", () => {
  it("a .warc.gz cut at several offsets: what came before is indexed, the cut is an error naming the byte", async () => {
    const members = await serialize(warcRecords(4), true)
    const whole = Buffer.concat(members)
    const ends = members.reduce<Array<number>>((acc, m) => [...acc, (acc.at(-1) ?? 0) + m.length], [])
    const folder = fresh("cut")
    const cuts = [12, ends[0]! + 20, ends[1]! + Math.floor(members[2]!.length / 2), whole.length - 4, whole.length - 1]
    for (const cut of cuts) {
      const path = join(folder, `cut-${cut}.warc.gz`)
      writeFileSync(path, whole.subarray(0, cut))
      const items = await collect(warcSource(path).items)
      const whole_ = ends.filter((end) => end <= cut).length
      // Members wholly before the cut are read (the last one's record may sit whole before its gzip trailer).
      expect(docs(items).length, `cut at ${cut}`).toBeGreaterThanOrEqual(Math.min(whole_, 4))
      expect(docs(items).length, `cut at ${cut}`).toBeLessThanOrEqual(4)
      expect(failures(items), `cut at ${cut}`).toEqual([expect.stringMatching(new RegExp(`after record \\d+: the archive is truncated at byte ${cut} \\(gzip: unexpected end of file\\)$`))])
    }
    // Cut exactly between two members: a valid, shorter archive (it cannot be told apart); nothing is reported.
    const atBoundary = join(folder, "boundary.warc.gz")
    writeFileSync(atBoundary, whole.subarray(0, ends[1]))
    const items = await collect(warcSource(atBoundary).items)
    expect(docs(items).map((d) => d.title)).toEqual(["Story 0", "Story 1"])
    expect(failures(items)).toEqual([])
  })

  it("a plain .warc cut in a header, in a payload, or with garbage between records", async () => {
    const members = await serialize(warcRecords(3), false)
    const whole = Buffer.concat(members)
    const folder = fresh("plain-cut")
    const cases: ReadonlyArray<[string, Buffer, number, RegExp]> = [
      ["header", whole.subarray(0, members[0]!.length + 60), 1, /the archive ends in the middle of a record header \(truncated at byte \d+\)/],
      ["payload", whole.subarray(0, whole.length - 200), 2, /the archive ends in the middle of a record \(truncated at byte \d+, \d+ bytes of .* missing\)/],
      ["garbage", Buffer.concat([members[0]!, Buffer.from("this is not a record\r\n\r\n"), members[1]!]), 1, /unreadable data where record 2 should start/]
    ]
    for (const [name, bytes, kept, message] of cases) {
      const path = join(folder, `${name}.warc`)
      writeFileSync(path, bytes)
      const items = await collect(warcSource(path).items)
      expect(docs(items).length, name).toBe(kept)
      expect(failures(items), name).toEqual([expect.stringMatching(message)])
    }
  })

  it("files under .html names that are not HTML are errors, never pages; real pages beside them are indexed", async () => {
    const folder = fresh("mixed")
    writeFileSync(join(folder, "good.html"), html("A real page"))
    writeFileSync(join(folder, "logo.html"), PNG)
    writeFileSync(join(folder, "photo.htm"), JPEG)
    // High bytes without NULs: undecodable as UTF-8, the page declaring no other encoding.
    writeFileSync(join(folder, "noise.html"), randomBytes(6000, 3).map((b) => b | 0x80))
    writeFileSync(join(folder, "nul.html"), Buffer.concat([Buffer.from("<html>"), Buffer.alloc(50, 0), Buffer.from("</html>")]))
    writeFileSync(join(folder, "archive.html"), Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), randomBytes(100)]))
    const out = join(fresh("mixed-out"), "index.snapshot")
    const summary = await run([`${folder}=https://mixed.example.com/`], out)
    expect(summary.read).toBe(1)
    expect(summary.failed).toBe(5)
    expect(Object.fromEntries(summary.errors.map((e) => [e.origin, e.message]))).toEqual({
      "archive.html": "a ZIP archive, not HTML",
      "logo.html": "a PNG image, not HTML",
      "noise.html": expect.stringMatching(/^binary data \(\d+% of the first \d+ KiB is not text\), not HTML$/),
      "nul.html": "binary data (NUL bytes), not HTML",
      "photo.htm": "a JPEG image, not HTML"
    })
    const index = decodeSnapshot(new Uint8Array(readFileSync(out)))
    expect(index.documentCount).toBe(1)
  })

  it("judges bytes, not names: legacy encodings and UTF-16 pages are HTML, text without markup is not", () => {
    const latin1 = Buffer.from(`<html><head><meta charset="iso-8859-1"><title>Café</title></head><body><p>Crème brûlée à la carte.</p></body></html>`, "latin1")
    expect(notHtml(latin1)).toBeUndefined()
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("<html><body><p>Hello in UTF-16</p></body></html>", "utf16le")])
    expect(notHtml(utf16)).toBeUndefined()
    const shiftJis = Buffer.concat([Buffer.from(`<html><head><meta charset="shift_jis"></head><body><p>`), Buffer.from([0x93, 0xfa, 0x96, 0x7b]), Buffer.from("</p></body></html>")])
    expect(notHtml(shiftJis)).toBeUndefined()
    expect(notHtml(new TextEncoder().encode(html("Plain UTF-8 page ✓")))).toBeUndefined()
    expect(notHtml(new TextEncoder().encode("just some words, no tags at all"))).toBe("no HTML markup")
    expect(notHtml(Buffer.from("%PDF-1.7\n..."))).toBe("a PDF document, not HTML")
    expect(notHtml(new Uint8Array())).toBeUndefined()
  })

  it("a crawled page answering text/html with image bytes is an error", async () => {
    const site = await startSiteServer({
      "/": sendHtml(page("Home", ["/fake"])),
      "/fake": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html" })
        r.end(PNG)
      }
    })
    try {
      const out = join(fresh("crawl-bin"), "index.snapshot")
      const summary = await run([`${site.origin}/`], out)
      expect(summary.read).toBe(1)
      expect(summary.errors).toEqual([{ origin: `${site.origin}/fake`, message: "a PNG image, not HTML" }])
    } finally {
      await site.close()
    }
  })
})

describe("the CLI's exit codes", () => {
  const cli = (args: ReadonlyArray<string>): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((done) => {
      execFile(process.execPath, ["adapters/node/cli.ts", "index", "--quiet", ...args], {
        cwd: root,
        env: { ...process.env, PERISCOPE_DATA_DIR: fresh("cli-data") },
        timeout: 120_000
      }, (error, stdout, stderr) => done({ code: error === null ? 0 : (error as { code?: number }).code ?? 1, stdout, stderr }))
    })

  it("1 and nothing written when the run would lose data; 0 with --allow-shrink", async () => {
    const { path, bytes } = goodSnapshot(2)
    const garbage = join(fresh("cli-garbage"), "crawl.warc")
    writeFileSync(garbage, randomBytes(2000, 5))
    const refused = await cli([garbage, "--out", path, "--fresh"])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toMatch(/Errors: 1 \(showing 1\):\n  .*crawl\.warc after record 0: not a WARC archive/)
    expect(refused.stderr).toContain(`periscope: ${path}: not written: nothing was indexed from the sources (1 error, 0 items skipped)`)
    expect(readFileSync(path).equals(bytes)).toBe(true)

    const forced = await cli([garbage, "--out", path, "--fresh", "--allow-shrink"])
    // Written as asked, but an input was damaged: 2.
    expect(forced.code, forced.stderr).toBe(2)
    expect(decodeSnapshot(new Uint8Array(readFileSync(path))).documentCount).toBe(0)
  })
})

describe("the starter index is replaced by the operator's first index", () => {
  const starter = async () => {
    const out = join(fresh("starter"), "index.snapshot")
    const builder = new IndexBuilder()
    builder.add([{ url: "https://www.npmjs.com/package/effect", title: "effect", text: "README of the effect package." }])
    writeFileSync(out, encodeSnapshot(builder.build()))
    writeFileSync(starterMarkerPath(out), "starter\n")
    return out
  }
  const folder = fresh("own-site")
  writeFileSync(join(folder, "index.html"), html("Our own page"))

  it("without --fresh, replaces the starter and drops its mark", async () => {
    const out = await starter()
    const summary: IndexSummary = await run([`${folder}=https://own.example.com/`], out)
    expect(summary.replacedStarter).toBe(true)
    expect(formatSummary(summary)).toContain("it replaces the starter index")
    const index = decodeSnapshot(new Uint8Array(readFileSync(out)))
    expect(index.documentCount).toBe(1)
    expect(index.search("effect package", 5).hits).toEqual([])
    expect(existsSync(starterMarkerPath(out))).toBe(false)
    // The next run updates the operator's index as usual.
    const next = await run([`${folder}=https://own2.example.com/`], out)
    expect(next.replacedStarter).toBe(false)
    expect(decodeSnapshot(new Uint8Array(readFileSync(out))).documentCount).toBe(2)
  })

  it("with --keep-starter, adds to it", async () => {
    const out = await starter()
    const summary = await run([`${folder}=https://own.example.com/`], out, { keepStarter: true })
    expect(summary.replacedStarter).toBe(false)
    expect(summary.kept).toBe(1)
    expect(decodeSnapshot(new Uint8Array(readFileSync(out))).documentCount).toBe(2)
    expect(existsSync(starterMarkerPath(out))).toBe(false)
  })

  it("a run that reads nothing leaves the starter and its mark in place", async () => {
    const out = await starter()
    const before = readFileSync(out)
    const summary = await run([`${fresh("nothing")}=https://own.example.com/`], out)
    expect(summary.notWritten).toContain("nothing was indexed")
    expect(readFileSync(out).equals(before)).toBe(true)
    expect(existsSync(starterMarkerPath(out))).toBe(true)
  })
})
