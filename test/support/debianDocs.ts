/**
 * Real HTML for tests and benchmarks: Debian documentation packages, fetched
 * with apt at run time into .cache/debian-docs (never committed).
 *
 * On a machine without apt or network the corpus is missing: callers skip
 * with the printed reason, except under CI=true, where a missing corpus fails.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"

/** A documentation package and where its HTML is published on the web. */
export interface DocPackage {
  readonly name: string
  /** Folder inside the package that holds the HTML tree. */
  readonly htmlRoot: string
  /** Public URL of that folder, so links in results are real addresses. */
  readonly baseUrl: string
}

/** The four packages named in the brief: python, postgresql, django, gimp. */
export const corePackages: ReadonlyArray<DocPackage> = [
  { name: "python3.11-doc", htmlRoot: "usr/share/doc/python3.11/html", baseUrl: "https://docs.python.org/3.11/" },
  { name: "postgresql-doc-15", htmlRoot: "usr/share/doc/postgresql-doc-15/html", baseUrl: "https://www.postgresql.org/docs/15/" },
  { name: "python-django-doc", htmlRoot: "usr/share/doc/python-django-doc/html", baseUrl: "https://docs.djangoproject.com/en/3.2/" },
  { name: "gimp-help-en", htmlRoot: "usr/share/gimp/2.0/help/en", baseUrl: "https://docs.gimp.org/2.10/en/" }
]

/** Adds SciPy's reference (4,300 pages) for runs that need more than 5,000 pages. */
export const largePackages: ReadonlyArray<DocPackage> = [
  ...corePackages,
  { name: "python-scipy-doc", htmlRoot: "usr/share/doc/python-scipy-doc/html", baseUrl: "https://docs.scipy.org/doc/scipy-1.10.1/" }
]

/**
 * GIMP's help in other languages: the same manual as gimp-help-en, translated, as HTML pages that
 * declare their language. What the languages bench measures analysis by language on.
 */
export const translatedPackages: ReadonlyArray<DocPackage & { readonly language: string }> = ["de", "fr", "es", "it", "ru"].map((language) => ({
  name: `gimp-help-${language}`,
  htmlRoot: `usr/share/gimp/2.0/help/${language}`,
  baseUrl: `https://docs.gimp.org/2.10/${language}/`,
  language
}))

export interface DocPage {
  readonly pkg: string
  /** Absolute path of the HTML file on disk. */
  readonly file: string
  /** The page's public URL. */
  readonly url: string
}

export type Corpus =
  | { readonly _tag: "Ready"; readonly pages: ReadonlyArray<DocPage> }
  | { readonly _tag: "Missing"; readonly reason: string }

export const cacheDir = resolve(import.meta.dirname, "../../.cache/debian-docs")

const isCI = () => process.env.CI === "true"

/** Downloads and unpacks the packages (once), then lists their HTML pages. */
export const loadDebianDocs = (packages: ReadonlyArray<DocPackage> = corePackages): Corpus => {
  const pages: Array<DocPage> = []
  for (const pkg of packages) {
    const dir = join(cacheDir, pkg.name)
    const ready = join(dir, ".ready")
    if (!existsSync(ready)) {
      const failure = fetchPackage(pkg.name, dir)
      if (failure !== undefined) return { _tag: "Missing", reason: `${pkg.name}: ${failure}` }
      writeFileSync(ready, new Date().toISOString())
    }
    const root = join(dir, pkg.htmlRoot)
    for (const file of listHtml(root)) {
      pages.push({ pkg: pkg.name, file, url: new URL(relative(root, file), pkg.baseUrl).href })
    }
  }
  pages.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
  return { _tag: "Ready", pages }
}

/**
 * For tests: the corpus, or undefined after printing why it is skipped.
 * Under CI=true a missing corpus throws instead, so CI cannot pass by skipping.
 */
export const debianDocsOrSkip = (packages?: ReadonlyArray<DocPackage>): ReadonlyArray<DocPage> | undefined => {
  const corpus = loadDebianDocs(packages)
  if (corpus._tag === "Ready") return corpus.pages
  if (isCI()) throw new Error(`Debian documentation corpus missing under CI=true: ${corpus.reason}`)
  console.warn(`[skip] Debian documentation corpus unavailable: ${corpus.reason}`)
  return undefined
}

export const readPage = (page: DocPage): string => readFileSync(page.file, "utf8")

const fetchPackage = (name: string, dir: string): string | undefined => {
  const download = join(cacheDir, ".download", name)
  rmSync(download, { recursive: true, force: true })
  mkdirSync(download, { recursive: true })
  try {
    execFileSync("apt-get", ["download", name], { cwd: download, stdio: "pipe", timeout: 300_000 })
  } catch (first) {
    // A fresh machine has no package lists yet; refresh once and retry.
    try {
      execFileSync("apt-get", ["update"], { stdio: "pipe", timeout: 300_000 })
      execFileSync("apt-get", ["download", name], { cwd: download, stdio: "pipe", timeout: 300_000 })
    } catch (error) {
      return `apt-get download failed (${describe(error ?? first)})`
    }
  }
  const debs = readdirSync(download).filter((f) => f.endsWith(".deb"))
  if (debs.length === 0) return "apt-get download produced no .deb file"
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  try {
    for (const deb of debs) execFileSync("dpkg-deb", ["-x", join(download, deb), dir], { stdio: "pipe" })
  } catch (error) {
    return `dpkg-deb -x failed (${describe(error)})`
  }
  rmSync(download, { recursive: true, force: true })
  return undefined
}

const describe = (error: unknown): string => {
  const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim()
  if (stderr) return stderr.split("\n").slice(-1)[0]!
  return error instanceof Error ? error.message : String(error)
}

const listHtml = (root: string): Array<string> => {
  const out: Array<string> = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry)
      const stat = statSync(path, { throwIfNoEntry: false }) // dangling symlinks exist in some packages
      if (stat === undefined) continue
      if (stat.isDirectory()) walk(path)
      else if (stat.isFile() && entry.endsWith(".html")) out.push(path)
    }
  }
  if (existsSync(root)) walk(root)
  return out
}
