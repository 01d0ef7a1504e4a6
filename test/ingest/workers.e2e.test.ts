/**
 * Extraction on worker threads (issue 13 part 4), on real pages: a sample of
 * the Debian documentation corpus (Python, PostgreSQL, Django, GIMP) copied
 * into folders, a WARC of Debian pages, and damaged inputs among them.
 *
 * - `--workers 2` writes the very bytes `--workers 1` writes, and reports the
 *   same errors and skips in the same order;
 * - progress counts items that reached the build, one at a time;
 * - a worker that dies fails only the page it was on, the run goes on; one
 *   that dies during the build's analysis changes nothing;
 * - an interrupt (the fiber, and Ctrl-C on the CLI) stops the workers at once.
 *
 * Skips with a printed reason when the corpus is missing (fails under CI=true).
 */
import { spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import type { Worker } from "node:worker_threads"
import { Effect, Fiber } from "effect"
import { WARCRecord, WARCSerializer } from "warcio"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { extractPool } from "../../adapters/node/extractPool.ts"
import { indexSnapshot, type IndexSummary } from "../../adapters/node/indexCommand.ts"
import { openSources } from "../../adapters/node/sources/openSources.ts"
import type { FromWorker } from "../../core/jobs/JobHost.ts"
import { type IndexProgress, runIndex } from "../../core/ingest/IndexRun.ts"
import { cacheDir, corePackages, debianDocsOrSkip } from "../support/debianDocs.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-workers-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const pages = debianDocsOrSkip(corePackages)
const PER_PACKAGE = 30

/** Folder arguments (`dir=https://...`), a good and a cut WARC, and a binary file posing as a page. */
let args: Array<string> = []

beforeAll(async () => {
  if (pages === undefined) return
  const corpus = join(work, "corpus")
  for (const pkg of corePackages) {
    const htmlRoot = join(cacheDir, pkg.name, pkg.htmlRoot)
    const own = pages.filter((p) => p.pkg === pkg.name)
    const stride = Math.max(1, Math.floor(own.length / PER_PACKAGE))
    for (let i = 0; i < own.length && i / stride < PER_PACKAGE; i += stride) {
      const to = join(corpus, pkg.name, relative(htmlRoot, own[i]!.file))
      mkdirSync(dirname(to), { recursive: true })
      copyFileSync(own[i]!.file, to)
    }
    args.push(`${join(corpus, pkg.name)}=${pkg.baseUrl}`)
  }
  // Damage among good pages: random bytes under an .html name, and a page with no main text.
  writeFileSync(join(corpus, corePackages[0]!.name, "zz-broken.html"), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)))
  writeFileSync(join(corpus, corePackages[1]!.name, "zz-empty.html"), "<html><head><title>Nothing</title></head><body></body></html>")
  // A WARC of Django pages (undated ones get the record's date), and the same archive cut mid-record.
  const django = pages.filter((p) => p.pkg === "python-django-doc").slice(0, 20)
  const records = django.map((p, i) =>
    WARCRecord.create({
      url: p.url,
      date: `2024-05-${String(1 + i).padStart(2, "0")}T07:08:09Z`,
      type: "response",
      warcVersion: "WARC/1.1",
      httpHeaders: { "Content-Type": "text/html; charset=utf-8" }
    }, [readFileSync(p.file)])
  )
  const members: Array<Buffer> = []
  for (const record of records) members.push(Buffer.from(await WARCSerializer.serialize(record, { gzip: true })))
  const whole = Buffer.concat(members)
  writeFileSync(join(work, "django.warc.gz"), whole)
  const cutAt = members.slice(0, 12).reduce((n, m) => n + m.length, 0) + Math.floor(members[12]!.length / 2)
  writeFileSync(join(work, "django-cut.warc.gz"), whole.subarray(0, cutAt))
  args = [...args, join(work, "django.warc.gz"), join(work, "django-cut.warc.gz")]
}, 120_000)

const run = (workers: number, out: string) =>
  Effect.runPromise(indexSnapshot({ sources: openSources(args), out, fresh: true, workers, errorSamples: 100 }))

/** What a summary reports, without the timings. */
const reported = (summary: IndexSummary) => ({
  read: summary.read,
  documents: summary.documents,
  images: summary.images,
  duplicates: summary.duplicates,
  nearDuplicates: summary.nearDuplicates,
  skipped: summary.skipped,
  failed: summary.failed,
  errors: summary.errors,
  refused: summary.refused,
  refusedSamples: summary.refusedSamples,
  notWritten: summary.notWritten
})

const until = async (condition: () => boolean, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe.skipIf(pages === undefined)("extraction on worker threads", () => {
  it("writes the same snapshot bytes and reports the same damage with 2 workers as with 1", async () => {
    const one = await run(1, join(work, "one.snapshot"))
    const two = await run(2, join(work, "two.snapshot"))
    expect(readFileSync(join(work, "two.snapshot")).equals(readFileSync(join(work, "one.snapshot")))).toBe(true)
    expect(reported(two)).toEqual(reported(one))
    // Not vacuous: real pages from every package and the WARC, and each damaged input reported.
    expect(one.documents).toBeGreaterThan(4 * PER_PACKAGE * 0.8)
    expect(one.errors.map((e) => e.origin)).toEqual(expect.arrayContaining(["zz-broken.html", expect.stringMatching(/django-cut\.warc\.gz after record/)]))
    expect(one.errors.find((e) => e.origin.includes("django-cut"))?.message).toMatch(/truncated|corrupt|ends in the middle/)
    expect(one.skipped).toEqual(expect.arrayContaining([{ reason: "no main text", count: 1 }]))
  }, 300_000)

  it("counts progress per item that reached the build, never ahead of it", async () => {
    const seen: Array<IndexProgress> = []
    const progress = { start: () => {}, update: (p: IndexProgress) => void seen.push(p), stop: () => {} }
    const result = await Effect.runPromise(Effect.scoped(Effect.flatMap(extractPool({ workers: 2 }), (extractor) =>
      runIndex({ sources: openSources([args[0]!, ...args.slice(-2)]), extractor, progress, batchSize: 1 })
    )))
    const total = result.read + result.skipped.reduce((n, s) => n + s.count, 0) + result.failed
    // One update per item, each one item further than the last: nothing counted before it arrived in order.
    const done = seen.map((p) => p.documents + p.skipped + p.failed)
    expect(done).toEqual(Array.from({ length: done.length }, (_, i) => i + 1))
    // Damage is an item too (the cut archive's error comes after the records before the cut).
    expect(done.length).toBe(total)
    expect(result.failed).toBe(2)
    expect(seen.at(-1)!.documents).toBe(result.read)
  }, 300_000)

  it("fails only the page a dying worker was on, and finishes the run on the others", async () => {
    let killed = false
    const onWorker = (worker: Worker) => {
      // The first worker dies as soon as it has pages to work on.
      if (!killed) {
        killed = true
        worker.once("online", () => setTimeout(() => void worker.terminate(), 50))
      }
    }
    const result = await Effect.runPromise(Effect.scoped(Effect.flatMap(extractPool({ workers: 2, onWorker }), (extractor) =>
      runIndex({ sources: openSources(args.slice(0, 1)), extractor, errorSamples: 100 })
    )))
    const stopped = result.errors.filter((e) => e.message.startsWith("the extraction worker stopped on this page"))
    expect(stopped.length).toBeLessThanOrEqual(1)
    expect(result.failed).toBe(1 + stopped.length) // zz-broken.html, and the page the worker died on (if it had one)
    expect(result.read).toBeGreaterThan(PER_PACKAGE * 0.8 - 1)
  }, 300_000)

  it("does the build's analysis on the workers, and a worker that dies during it changes no byte of the snapshot", async () => {
    const sources = () => openSources(args.slice(0, 2))
    const alone = await Effect.runPromise(runIndex({ sources: sources() }))
    let analysed = 0
    let killed = false
    const onWorker = (worker: Worker) => {
      // The first worker to answer an analysis dies at once, with the pages queued behind it.
      worker.on("message", (answer: FromWorker) => {
        // An analysis answers with the page's language and the tokens of each text (fields); an extraction with an item.
        if (answer.type !== "done" || !Array.isArray((answer.output as { fields?: unknown } | undefined)?.fields)) return
        analysed++
        if (!killed) {
          killed = true
          void worker.terminate()
        }
      })
    }
    const pooled = await Effect.runPromise(Effect.scoped(Effect.flatMap(extractPool({ workers: 2, onWorker }), (extractor) =>
      runIndex({ sources: sources(), extractor })
    )))
    expect(killed).toBe(true)
    expect(analysed).toBeGreaterThan(1)
    expect(pooled.read).toBe(alone.read)
    expect(Buffer.from(pooled.bytes).equals(Buffer.from(alone.bytes))).toBe(true)
  }, 300_000)

  it("terminates every worker within a second when the run's fiber is interrupted", async () => {
    const workers: Array<Worker> = []
    const exited = new Set<Worker>()
    const onWorker = (worker: Worker) => {
      workers.push(worker)
      worker.on("exit", () => exited.add(worker))
    }
    let documents = 0
    const progress = { start: () => {}, update: (p: IndexProgress) => void (documents = p.documents), stop: () => {} }
    const fiber = Effect.runFork(Effect.scoped(Effect.flatMap(extractPool({ workers: 2, onWorker }), (extractor) =>
      runIndex({ sources: openSources(args), extractor, progress })
    )))
    await until(() => documents >= 3)
    expect(workers.length).toBe(2)
    const started = Date.now()
    await Effect.runPromise(Fiber.interrupt(fiber))
    await until(() => exited.size === workers.length, 1000)
    expect(Date.now() - started).toBeLessThan(1000)
    expect(documents).toBeLessThan(4 * PER_PACKAGE)
  }, 120_000)

  it("stops on Ctrl-C (SIGINT) of the CLI with --workers 2, writing nothing", async () => {
    const out = join(work, "cli", "index.snapshot")
    const child = spawn(process.execPath, [
      "adapters/node/cli.ts", "index", ...args, "--workers", "2", "--out", out, "--fresh"
    ], { cwd: root, env: { ...process.env, PERISCOPE_DATA_DIR: join(work, "cli-data") }, stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += String(chunk)))
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
    try {
      await until(() => stderr.includes("Indexing "))
      // Let the workers start and take pages.
      await new Promise((r) => setTimeout(r, 2000))
      const signalled = Date.now()
      child.kill("SIGINT")
      const code = await exited
      expect(Date.now() - signalled).toBeLessThan(1500)
      expect(code).not.toBe(0)
      expect(stderr).toContain("periscope: interrupted")
      expect(existsSync(out)).toBe(false)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  }, 120_000)

  it("rejects --workers 0 naming the flag and the rule", async () => {
    const child = spawn(process.execPath, ["adapters/node/cli.ts", "index", ...args.slice(0, 1), "--workers", "0", "--out", join(work, "zero.snapshot")], {
      cwd: root,
      env: { ...process.env, PERISCOPE_DATA_DIR: join(work, "cli-data") },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += String(chunk)))
    const code = await new Promise<number | null>((done) => child.on("exit", (c) => done(c)))
    expect(code).not.toBe(0)
    expect(stderr).toContain("--workers")
    expect(stderr).toContain("must be an integer from 1 to 256, got 0")
    expect(existsSync(join(work, "zero.snapshot"))).toBe(false)
  }, 60_000)
})
