/**
 * The ingest bench's end-to-end rows (test/bench/ingest.ts: read, extract, build, encode, write
 * a snapshot) for several checkouts side by side, on this checkout's Debian corpus: each tree's
 * own indexing pipeline (its adapters/node/indexCommand.ts and node_modules) indexes the same
 * pages, one thread and a worker per core, in a fresh process per run, the trees alternating
 * from round to round. Pages per second, and each tree's ratio to the first (the median of the
 * rounds' ratios).
 *
 *   node test/bench/ingestTrees.ts --tree /work/baseline            this checkout and another
 *   options: --pages N (5000), --rounds R (3)
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { type DocPage, largePackages, loadDebianDocs } from "../support/debianDocs.ts"
import { median } from "./support/stats.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? wholeNumberOption(name, process.argv[at + 1]) : fallback
}
const pageCount = option("--pages", 5000)

const pagesOf = (): Array<DocPage> => {
  const corpus = loadDebianDocs(largePackages)
  if (corpus._tag === "Missing") {
    console.error(`Debian documentation corpus unavailable: ${corpus.reason}`)
    process.exit(process.env.CI === "true" ? 1 : 0)
  }
  const target = Math.min(pageCount, corpus.pages.length)
  const stride = corpus.pages.length / target
  return Array.from({ length: target }, (_, i) => corpus.pages[Math.floor(i * stride)]!)
}

if (process.argv.includes("--child")) {
  // One run: this tree's pipeline over the pages, printed as JSON.
  const tree = process.argv[process.argv.indexOf("--child") + 1]!
  const workers = option("--workers", 1)
  const { Effect, Stream } = await import(pathToFileURL(join(tree, "node_modules/effect/dist/index.js")).href)
  const { indexSnapshot } = await import(pathToFileURL(join(tree, "adapters/node/indexCommand.ts")).href)
  const { extractedInPlace } = await import(pathToFileURL(join(tree, "adapters/node/sources/asyncItems.ts")).href)
  const files = pagesOf().map((page) => ({ page, bytes: readFileSync(page.file) }))
  const rawPages = Stream.fromIterable(files).pipe(
    Stream.map(({ page, bytes }: { page: DocPage; bytes: Buffer }) => ({ _tag: "Page", origin: page.file, page: { bytes, url: page.url } }))
  )
  const source = { describe: `${files.length} pages`, estimate: Effect.succeed(files.length), items: extractedInPlace(rawPages), pages: rawPages }
  const dir = mkdtempSync(join(tmpdir(), "periscope-ingest-trees-"))
  try {
    const started = performance.now()
    const cpu = process.cpuUsage()
    const summary = await Effect.runPromise(indexSnapshot({ sources: [source], out: join(dir, "index.snapshot"), fresh: true, workers }))
    const used = process.cpuUsage(cpu)
    console.log(JSON.stringify({ seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6, documents: summary.documents, pages: files.length }))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  process.exit(0)
}

const here = resolve(import.meta.dirname, "../..")
const trees = [here, ...process.argv.flatMap((arg, i) => (arg === "--tree" ? [resolve(process.argv[i + 1]!)] : []))]
const rounds = option("--rounds", 3)
const cores = availableParallelism()

interface Run {
  readonly seconds: number
  readonly cpuSeconds: number
  readonly documents: number
  readonly pages: number
}

const runOnce = (tree: string, workers: number): Run =>
  JSON.parse(execFileSync(process.execPath, [import.meta.filename, "--child", tree, "--workers", String(workers), "--pages", String(pageCount)], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024
  }).trim().split("\n").at(-1)!)

const pad = (s: string, n: number) => s.padEnd(n)
console.log(`Ingest end to end by checkout: ${pageCount} Debian documentation pages, ${rounds} rounds, trees alternating; ` +
  `Node ${process.version}, ${cores} cores, load average ${loadavg().map((n) => n.toFixed(2)).join(" ")}\n`)
for (const workers of [1, cores]) {
  const runs = new Map<string, Array<Run>>(trees.map((tree) => [tree, []]))
  for (let round = 0; round < rounds; round++) {
    for (const tree of round % 2 === 0 ? trees : [...trees].reverse()) runs.get(tree)!.push(runOnce(tree, workers))
  }
  console.log(`extraction on ${workers === 1 ? "1 thread (--workers 1)" : `${workers} workers (--workers ${workers})`}:`)
  console.log(`${pad("tree", 40)}${pad("pages/s (rounds)", 34)}${pad("CPU s", 8)}${pad("documents", 11)}vs first`)
  const first = runs.get(trees[0]!)!
  for (const tree of trees) {
    const mine = runs.get(tree)!
    const rate = (run: Run) => run.pages / run.seconds
    const ratios = mine.map((run, i) => rate(run) / rate(first[i]!))
    console.log(pad(tree, 40) + pad(`${median(mine.map(rate)).toFixed(1)} (${mine.map((run) => rate(run).toFixed(1)).join(", ")})`, 34) +
      pad(median(mine.map((run) => run.cpuSeconds)).toFixed(1), 8) + pad(String(mine[0]!.documents), 11) +
      `${median(ratios).toFixed(2)}x (${ratios.map((x) => x.toFixed(2)).join(", ")})`)
  }
  console.log("")
}
console.log(`Load average now ${loadavg().map((n) => n.toFixed(2)).join(" ")}.`)
