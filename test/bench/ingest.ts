/**
 * Ingestion benchmark on real pages (Debian documentation: Python, PostgreSQL,
 * Django, GIMP, SciPy): HTML to document, pages per second, side by side with
 * the libraries it is built on, then the end-to-end time to index the same
 * pages into a snapshot through the indexing pipeline (read, extract, build,
 * encode, write).
 *
 *   node test/bench/ingest.ts            5,000 pages spread over the five packages
 *   node test/bench/ingest.ts --all      every page (about 8,400)
 *
 * Rows, all over the same pages, files read into memory first:
 * - linkedom parse only: the floor any DOM-based extractor pays.
 * - Readability over linkedom: the library alone (text and title, no dates, no images).
 * - Periscope htmlToDocument: title, link, date, language, main text and images.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readability } from "@mozilla/readability"
import { Effect, Stream } from "effect"
import { parseHTML } from "linkedom"
import { decodeHtml } from "../../core/ingest/HtmlBytes.ts"
import { extractPage, htmlToDocument } from "../../core/ingest/HtmlDocument.ts"
import { formatSummary, indexSnapshot } from "../../adapters/node/indexCommand.ts"
import { documentItem, type DocumentSource } from "../../core/ingest/DocumentSource.ts"
import { type DocPage, largePackages, loadDebianDocs } from "../support/debianDocs.ts"

const all = process.argv.includes("--all")
const corpus = loadDebianDocs(largePackages)
if (corpus._tag === "Missing") {
  console.error(`Debian documentation corpus unavailable: ${corpus.reason}`)
  process.exit(process.env.CI === "true" ? 1 : 0)
}
const target = all ? corpus.pages.length : Math.min(5000, corpus.pages.length)
// An even spread over the sorted list keeps every package's share.
const stride = corpus.pages.length / target
const pages: Array<DocPage> = Array.from({ length: target }, (_, i) => corpus.pages[Math.floor(i * stride)]!)
const files = pages.map((page) => ({ page, html: decodeHtml(readFileSync(page.file)) }))
const megabytes = files.reduce((sum, f) => sum + f.html.length, 0) / (1024 * 1024)
const perPackage = new Map<string, number>()
for (const { page } of files) perPackage.set(page.pkg, (perPackage.get(page.pkg) ?? 0) + 1)

console.log(`Ingestion benchmark: ${files.length} pages (${megabytes.toFixed(0)} MB of HTML) from ` +
  [...perPackage].map(([pkg, n]) => `${pkg} ${n}`).join(", "))
console.log(`Node ${process.version}, ${process.arch}; one process, pages in memory, single-threaded.\n`)

interface Row {
  readonly name: string
  readonly ms: Array<number>
  readonly note: string
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

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
rows.push(run("linkedom parse only", (html) => {
  parseHTML(html)
  return ""
}))

let readabilityEmpty = 0
rows.push(run("Readability over linkedom (library alone)", (html) => {
  const { document } = parseHTML(html)
  const article = new Readability(document as unknown as Document).parse()
  if ((article?.textContent ?? "").trim() === "") readabilityEmpty++
  return `${readabilityEmpty} pages without text`
}))

let empty = 0
let images = 0
let dated = 0
const methods = new Map<string, number>()
rows.push(run("Periscope htmlToDocument", (html, url) => {
  const { document, method } = extractPage(html, url)
  if (document.text === "") empty++
  if (document.date) dated++
  images += document.images?.length ?? 0
  methods.set(method, (methods.get(method) ?? 0) + 1)
  return `${empty} without text, ${images} images, ${dated} dated; main text by ` +
    [...methods].map(([m, n]) => `${m} ${n}`).join(", ")
}))

const pad = (s: string, n: number) => s.padEnd(n)
console.log(`${pad("HTML to document", 44)}${pad("pages/s", 10)}${pad("ms p50", 9)}${pad("ms p95", 9)}${pad("total s", 9)}notes`)
for (const row of rows) {
  const sorted = [...row.ms].sort((a, b) => a - b)
  const total = row.ms.reduce((a, b) => a + b, 0)
  console.log(
    pad(row.name, 44) + pad((row.ms.length / (total / 1000)).toFixed(1), 10) + pad(percentile(sorted, 0.5).toFixed(1), 9) +
      pad(percentile(sorted, 0.95).toFixed(1), 9) + pad((total / 1000).toFixed(1), 9) + row.note
  )
}

// End to end: the same pages through the indexing pipeline into a snapshot file.
const pageSource: DocumentSource = {
  describe: `${files.length} Debian documentation pages`,
  estimate: Effect.succeed(files.length),
  items: Stream.fromIterable(files).pipe(
    Stream.map(({ page }) => documentItem(page.file, htmlToDocument(decodeHtml(readFileSync(page.file)), page.url)))
  )
}
const dir = mkdtempSync(join(tmpdir(), "periscope-ingest-bench-"))
try {
  const started = performance.now()
  const summary = await Effect.runPromise(indexSnapshot({ sources: [pageSource], out: join(dir, "index.snapshot"), fresh: true }))
  const seconds = (performance.now() - started) / 1000
  console.log(`\nEnd to end (read files, extract, build, encode, write): ${files.length} pages in ${seconds.toFixed(1)} s ` +
    `= ${(files.length / seconds).toFixed(1)} pages/s`)
  console.log(formatSummary(summary).split("\n").map((line) => `  ${line}`).join("\n"))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
