/**
 * Ingestion benchmark on real pages (Debian documentation: Python, PostgreSQL,
 * Django, GIMP, SciPy): HTML to document, pages per second, side by side with
 * the libraries it is built on, then the end-to-end time to index the same
 * pages into a snapshot through the indexing pipeline (read, extract, build,
 * encode, write), with extraction on one thread and on a worker per core side
 * by side (issue 13: at least 1.8x on 2 cores), checking both snapshots are
 * the same bytes.
 *
 *   node test/bench/ingest.ts              5,000 pages spread over the five packages
 *   node test/bench/ingest.ts --all        every page (about 8,400)
 *   node test/bench/ingest.ts --pages N    N pages
 *   node test/bench/ingest.ts --end-to-end only the end-to-end rows (no per-library table)
 *   node test/bench/ingest.ts --rounds R   end-to-end rounds (default 3)
 *
 * End to end runs in paired rounds, one thread and a worker per core back to back, the
 * order alternating from round to round; the ratio is the median of the rounds' ratios, so
 * a slow stretch of a shared machine lands on both sides of one ratio instead of between
 * two runs.
 *
 * Rows, all over the same pages, files read into memory first:
 * - linkedom parse only: the floor any DOM-based extractor pays.
 * - Readability over linkedom: the library alone (text and title, no dates, no images).
 * - Periscope htmlToDocument: title, link, date, language, main text and images.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Readability } from "@mozilla/readability"
import { Effect, Stream } from "effect"
import { parseHTML } from "linkedom"
import { decodeHtml } from "../../core/ingest/HtmlBytes.ts"
import { extractPage } from "../../core/ingest/HtmlDocument.ts"
import { extractPool } from "../../adapters/node/extractPool.ts"
import { formatSummary, indexSnapshot, type IndexSummary } from "../../adapters/node/indexCommand.ts"
import { extractedInPlace } from "../../adapters/node/sources/asyncItems.ts"
import type { DocumentSource, PageItem } from "../../core/ingest/DocumentSource.ts"
import { type DocPage, largePackages, loadDebianDocs } from "../support/debianDocs.ts"
import { median, percentile } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const all = process.argv.includes("--all")
const pagesArg = process.argv.indexOf("--pages")
const endToEndOnly = process.argv.includes("--end-to-end")
const roundsArg = process.argv.indexOf("--rounds")
const rounds = roundsArg > 0 ? wholeNumberOption("--rounds", process.argv[roundsArg + 1]) : 3
const corpus = loadDebianDocs(largePackages)
if (corpus._tag === "Missing") {
  console.error(`Debian documentation corpus unavailable: ${corpus.reason}`)
  process.exit(process.env.CI === "true" ? 1 : 0)
}
const target = all ? corpus.pages.length
  : Math.min(pagesArg > 0 ? Number(process.argv[pagesArg + 1]) : 5000, corpus.pages.length)
// An even spread over the sorted list keeps every package's share.
const stride = corpus.pages.length / target
const pages: Array<DocPage> = Array.from({ length: target }, (_, i) => corpus.pages[Math.floor(i * stride)]!)
const files = pages.map((page) => ({ page, html: decodeHtml(readFileSync(page.file)) }))
const megabytes = files.reduce((sum, f) => sum + f.html.length, 0) / (1024 * 1024)
const perPackage = new Map<string, number>()
for (const { page } of files) perPackage.set(page.pkg, (perPackage.get(page.pkg) ?? 0) + 1)

console.log(`Ingestion benchmark: ${files.length} pages (${megabytes.toFixed(0)} MB of HTML) from ` +
  [...perPackage].map(([pkg, n]) => `${pkg} ${n}`).join(", "))
console.log(`Node ${process.version}, ${process.arch}, ${availableParallelism()} cores, load average ${loadavg().map((n) => n.toFixed(2)).join(" ")}; ` +
  `library rows: one process, pages in memory, single-threaded.\n`)

interface Row {
  readonly name: string
  readonly ms: Array<number>
  readonly note: string
}


const run = (name: string, work: (html: string, url: string) => string): Row => {
  const ms: Array<number> = []
  let note = ""
  for (const { page, html } of files) {
    const start = performance.now()
    note = work(html, page.url)
    ms.push(performance.now() - start)
  }
  return { name, ms, note }
}

const rows: Array<Row> = []
if (!endToEndOnly) rows.push(run("linkedom parse only", (html) => {
  parseHTML(html)
  return ""
}))

let readabilityEmpty = 0
if (!endToEndOnly) rows.push(run("Readability over linkedom (library alone)", (html) => {
  const { document } = parseHTML(html)
  const article = new Readability(document as unknown as Document).parse()
  if ((article?.textContent ?? "").trim() === "") readabilityEmpty++
  return `${readabilityEmpty} pages without text`
}))

let empty = 0
let images = 0
let dated = 0
const methods = new Map<string, number>()
if (!endToEndOnly) rows.push(run("Periscope htmlToDocument", (html, url) => {
  const { document, method } = extractPage(html, url)
  if (document.text === "") empty++
  if (document.date) dated++
  images += document.images?.length ?? 0
  methods.set(method, (methods.get(method) ?? 0) + 1)
  return `${empty} without text, ${images} images, ${dated} dated; main text by ` +
    [...methods].map(([m, n]) => `${m} ${n}`).join(", ")
}))

const pad = (s: string, n: number) => s.padEnd(n)
if (!endToEndOnly) console.log(`${pad("HTML to document", 44)}${pad("pages/s", 10)}${pad("ms p50", 9)}${pad("ms p95", 9)}${pad("total s", 9)}notes`)
for (const row of rows) {
  const sorted = [...row.ms].sort((a, b) => a - b)
  const total = row.ms.reduce((a, b) => a + b, 0)
  console.log(
    pad(row.name, 44) + pad((row.ms.length / (total / 1000)).toFixed(1), 10) + pad(percentile(sorted, 0.5).toFixed(1), 9) +
      pad(percentile(sorted, 0.95).toFixed(1), 9) + pad((total / 1000).toFixed(1), 9) + row.note
  )
}

// End to end: the same pages through the indexing pipeline into a snapshot file, files read as
// the folder source reads them, extraction in place (1 worker) or on a worker per core.
const rawPages: NonNullable<DocumentSource["pages"]> = Stream.fromIterable(files).pipe(
  Stream.map(({ page }): PageItem => ({ _tag: "Page", origin: page.file, page: { bytes: readFileSync(page.file), url: page.url } }))
)
const pageSource: DocumentSource = {
  describe: `${files.length} Debian documentation pages`,
  estimate: Effect.succeed(files.length),
  items: extractedInPlace(rawPages),
  pages: rawPages
}

// Worker startup: the pool spawned until every worker answered a first page.
const tiny = { bytes: new TextEncoder().encode("<title>t</title><p>startup</p>"), url: "https://example.com/" }
const startupMs = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const started = performance.now()
  const extractor = yield* extractPool({ workers: availableParallelism(), depth: 1 })
  yield* Effect.forEach(Array.from({ length: availableParallelism() }), () => extractor.extract("startup", tiny), { concurrency: "unbounded" })
  return performance.now() - started
})))

const dir = mkdtempSync(join(tmpdir(), "periscope-ingest-bench-"))
try {
  // Every run's snapshot is compared with the first one's as it ends, so only one is held in memory.
  let reference: Buffer | undefined
  const endToEnd = async (workers: number) => {
    const out = join(dir, `workers-${workers}.snapshot`)
    const started = performance.now()
    const cpu = process.cpuUsage()
    const summary = await Effect.runPromise(indexSnapshot({ sources: [pageSource], out, fresh: true, workers }))
    const seconds = (performance.now() - started) / 1000
    // CPU of every thread of the process: on a shared, loaded machine, the share it was given.
    const used = process.cpuUsage(cpu)
    const bytes = readFileSync(out)
    reference ??= bytes
    return { workers, seconds, cpuSeconds: (used.user + used.system) / 1e6, summary, size: bytes.byteLength, same: bytes.equals(reference) }
  }
  const cores = availableParallelism()
  type Run = Awaited<ReturnType<typeof endToEnd>>
  const pairs: Array<{ one: Run; all: Run }> = []
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      const one = await endToEnd(1)
      pairs.push({ one, all: await endToEnd(cores) })
    } else {
      const all = await endToEnd(cores)
      pairs.push({ one: await endToEnd(1), all })
    }
  }
  const rate = (run: { seconds: number }) => files.length / run.seconds
  const ratioOf = (pair: { one: Run; all: Run }) => rate(pair.all) / rate(pair.one)
  console.log(`\nEnd to end (read files, extract, build, encode, write), ${files.length} pages, ${rounds} paired round(s); ` +
    `worker startup ${startupMs.toFixed(0)} ms for ${cores} workers (until each answered a page):`)
  console.log(`${pad("round", 7)}${pad("extraction on", 28)}${pad("pages/s", 10)}${pad("total s", 9)}${pad("extract s", 11)}${pad("build s", 9)}` +
    `${pad("CPU s", 8)}${pad("cores used", 12)}${pad("CPU ms/page", 13)}snapshot`)
  pairs.forEach((pair, round) => {
    for (const run of [pair.one, pair.all]) {
      const s: IndexSummary = run.summary
      console.log(pad(String(round + 1), 7) + pad(run.workers === 1 ? "1 thread (--workers 1)" : `${run.workers} workers (--workers ${run.workers})`, 28) +
        pad(rate(run).toFixed(1), 10) + pad(run.seconds.toFixed(1), 9) + pad((s.readMs / 1000).toFixed(1), 11) +
        pad((s.buildMs / 1000).toFixed(1), 9) + pad(run.cpuSeconds.toFixed(1), 8) + pad((run.cpuSeconds / run.seconds).toFixed(2), 12) +
        pad(((run.cpuSeconds * 1000) / files.length).toFixed(1), 13) + `${(run.size / (1024 * 1024)).toFixed(1)} MiB, ${s.documents} documents`)
    }
  })
  const same = pairs.every((pair) => pair.one.same && pair.all.same)
  console.log(`Ratio: ${median(pairs.map(ratioOf)).toFixed(2)}x with ${cores} workers, the median of the rounds' ` +
    `${pairs.map((pair) => ratioOf(pair).toFixed(2)).join(", ")} (target >= 1.8x on 2 cores); ` +
    `snapshots ${same ? "byte-identical" : "DIFFER"}; load average now ${loadavg().map((n) => n.toFixed(2)).join(" ")}.`)
  console.log(formatSummary(pairs[0]!.all.summary).split("\n").map((line) => `  ${line}`).join("\n"))
  if (!same) process.exitCode = 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
