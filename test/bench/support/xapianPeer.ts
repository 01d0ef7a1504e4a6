/**
 * Runs xapianWorker.py (Xapian 1.4 through Debian's python3-xapian) for the search, scale and
 * relevance benches, with Periscope's k1, b and stop words, so the C++ engine ranks with the
 * same BM25 parameters and analysis choices as ours.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { englishStopWords } from "../../../core/index/analysis/StopWords.ts"
import { defaultEngineOptions } from "../../../core/index/EngineOptions.ts"
import { lastJsonLine } from "./jsonlLines.ts"
import type { WorkerFigures } from "./searchWorker.ts"

/** Debian's interpreter: the python3 first on PATH may lack Debian's modules. */
const python = "/usr/bin/python3"
const worker = resolve(import.meta.dirname, "xapianWorker.py")

/** Why Xapian cannot run here, or undefined when it can. */
export const xapianMissing = (): string | undefined => {
  if (!existsSync(python)) return `${python} not found`
  try {
    execFileSync(python, ["-c", "import xapian"], { stdio: "pipe" })
    return undefined
  } catch {
    return "python3-xapian is not installed (apt-get install python3-xapian)"
  }
}

const withStopWords = <A>(run: (stopWordsPath: string, dir: string) => A): A => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-xapian-"))
  try {
    const path = join(dir, "stopwords.json")
    writeFileSync(path, JSON.stringify([...englishStopWords]))
    return run(path, dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Builds and queries one Xapian backend over the corpus; the figures of searchWorker.ts. */
export const runXapianBench = (
  backend: "inmemory" | "glass",
  corpusPath: string,
  queriesPath: string,
  limit?: number
): WorkerFigures =>
  withStopWords((stopWords, dir) => {
    const { k1, b } = defaultEngineOptions
    const args = [worker, "bench", backend, corpusPath, queriesPath, join(dir, "glass"), String(k1), String(b), stopWords]
    if (limit !== undefined) args.push(String(limit))
    const out = execFileSync(python, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20, timeout: 3_600_000 })
    return lastJsonLine<WorkerFigures>(out)
  })

/**
 * Ranked document ids per query id, `depth` deep, from Xapian's BM25 over title (x titleWeight)
 * and text; with `feedback`, each query expanded by Xapian's ESet of its first documents' best
 * terms; with `spelling`, each query corrected by Xapian's spelling correction first.
 */
export const xapianRanking = (
  documents: ReadonlyArray<{ readonly id: string; readonly title: string; readonly text: string }>,
  queries: ReadonlyArray<{ readonly id: string; readonly text: string }>,
  titleWeight: number,
  depth: number,
  options: { readonly feedback?: { readonly documents: number; readonly terms: number }; readonly spelling?: boolean } = {}
): Map<string, Array<string>> =>
  withStopWords((stopWords, dir) => {
    const { k1, b } = defaultEngineOptions
    const docsPath = join(dir, "docs.jsonl")
    const queriesPath = join(dir, "queries.json")
    writeFileSync(docsPath, documents.map((d) => JSON.stringify({ id: d.id, title: d.title, text: d.text })).join("\n") + "\n")
    writeFileSync(queriesPath, JSON.stringify(queries.map((q) => ({ id: q.id, text: q.text }))))
    const extra = [
      ...(options.feedback === undefined ? [] : [`expand=${options.feedback.documents}:${options.feedback.terms}`]),
      ...(options.spelling === true ? [`spelling=${join(dir, "spelling-db")}`] : [])
    ]
    const out = execFileSync(python, [worker, "rank", docsPath, queriesPath, String(k1), String(b), String(titleWeight), stopWords, String(depth), ...extra], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 256 << 20
    })
    return new Map(Object.entries(JSON.parse(out) as Record<string, Array<string>>))
  })
