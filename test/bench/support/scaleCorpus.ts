/**
 * The scaling benchmark's corpus: at least 1,000,000 passages of real Debian documentation,
 * the search bench's 56k passages plus the big API references (Rust, the JDK, Qt, libstdc++,
 * pandas, scikit-learn, SymPy, Astropy, Boost, SageMath), split as passageCorpus.ts splits them.
 *
 * Each package's passages are cached in .cache/bench/scale/<package>.jsonl (parsing them all
 * takes a quarter of an hour); the merged corpus is shuffled by a hash of the URL so that any
 * prefix is an even sample of every package: the 100k and 300k rows of the table read the
 * first lines of the same file, and the 100k rows are a subset of the 1M.
 *
 * Run alone to build the cache: node test/bench/support/scaleCorpus.ts
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs"
import { join, resolve } from "node:path"
import { type DocPackage, loadDebianDocs, readPage } from "../../support/debianDocs.ts"
import { ensurePassageCorpus, pagePassages } from "./passageCorpus.ts"

export const scaleDir = resolve(import.meta.dirname, "../../../.cache/bench/scale")
export const scaleTarget = 1_000_000

/** The big documentation packages of Debian 12 and where their HTML is published. */
export const scalePackages: ReadonlyArray<DocPackage> = [
  { name: "rust-doc", htmlRoot: "usr/share/doc/rust-doc/html", baseUrl: "https://doc.rust-lang.org/1.63.0/" },
  { name: "openjdk-17-doc", htmlRoot: "usr/share/doc/openjdk-17-jre-headless/api", baseUrl: "https://docs.oracle.com/en/java/javase/17/docs/api/" },
  { name: "python-pandas-doc", htmlRoot: "usr/share/doc/python-pandas-doc/html", baseUrl: "https://pandas.pydata.org/pandas-docs/version/1.5.3/" },
  { name: "qtbase5-doc-html", htmlRoot: "usr/share/qt5/doc", baseUrl: "https://doc.qt.io/qt-5.15/" },
  { name: "libstdc++-12-doc", htmlRoot: "usr/share/doc/gcc-12-base/libstdc++", baseUrl: "https://gcc.gnu.org/onlinedocs/gcc-12.2.0/libstdc++/" },
  { name: "python-sklearn-doc", htmlRoot: "usr/share/doc/python-sklearn-doc/html", baseUrl: "https://scikit-learn.org/1.2/" },
  { name: "python-sympy-doc", htmlRoot: "usr/share/doc/python-sympy-doc/html", baseUrl: "https://docs.sympy.org/1.11/" },
  { name: "python-astropy-doc", htmlRoot: "usr/share/doc/python-astropy-doc/html", baseUrl: "https://docs.astropy.org/en/v5.2.1/" },
  { name: "boost1.81-doc", htmlRoot: "usr/share/doc/libboost1.81-doc", baseUrl: "https://www.boost.org/doc/libs/1_81_0/" },
  { name: "sagemath-doc", htmlRoot: "usr/share/doc/sagemath/html/en", baseUrl: "https://doc.sagemath.org/html/en/" },
  { name: "erlang-doc", htmlRoot: "usr/share/doc/erlang-doc", baseUrl: "https://www.erlang.org/docs/25/" },
  { name: "ghc-doc", htmlRoot: "usr/share/doc/ghc-doc/html", baseUrl: "https://downloads.haskell.org/ghc/9.0.2/docs/html/" },
  { name: "wx3.2-doc", htmlRoot: "usr/share/doc/wx3.2-doc/html", baseUrl: "https://docs.wxwidgets.org/3.2/" },
  { name: "libpcl-doc", htmlRoot: "usr/share/doc/libpcl-dev/html", baseUrl: "https://pointclouds.org/documentation/" },
  { name: "libgtkmm-3.0-doc", htmlRoot: "usr/share/doc/libgtkmm-3.0-doc/reference", baseUrl: "https://gnome.pages.gitlab.gnome.org/gtkmm/3.24/" },
  { name: "vtk9-doc", htmlRoot: "usr/share/doc/vtk9/html", baseUrl: "https://vtk.org/doc/release/9.1/html/" }
]

export type ScaleCorpus =
  | { readonly _tag: "Ready"; readonly path: string; readonly count: number; readonly perPackage: Readonly<Record<string, number>> }
  | { readonly _tag: "Missing"; readonly reason: string }

/** Passages of one package as JSONL lines, parsed once and cached. */
const packageLines = (pkg: DocPackage): Array<string> | string => {
  const file = join(scaleDir, `${pkg.name}.jsonl`)
  if (!existsSync(file)) {
    const corpus = loadDebianDocs([pkg])
    if (corpus._tag === "Missing") return corpus.reason
    const lines: Array<string> = []
    for (const page of corpus.pages) {
      let html: string
      try {
        html = readPage(page)
      } catch {
        continue // an unreadable file in a package is not worth failing the run
      }
      for (const passage of pagePassages(page, html)) lines.push(JSON.stringify(passage))
    }
    writeFileSync(`${file}.tmp`, lines.length > 0 ? lines.join("\n") + "\n" : "")
    renameSync(`${file}.tmp`, file)
    console.error(`[scale corpus] ${pkg.name}: ${corpus.pages.length} pages, ${lines.length} passages`)
  }
  return readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0)
}

/** FNV-1a over the line's URL part: a fixed, even shuffle that does not depend on file order. */
const urlHash = (line: string): number => {
  const end = line.indexOf("\",", 8)
  let h = 0x811c9dc5
  for (let i = 0; i < (end < 0 ? line.length : end); i++) h = Math.imul(h ^ line.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** Builds (once) and returns the shuffled corpus of `scaleTarget` passages. */
export const ensureScaleCorpus = (): ScaleCorpus => {
  const path = join(scaleDir, `passages-${scaleTarget}.jsonl`)
  const meta = `${path}.json`
  if (existsSync(path) && existsSync(meta)) {
    const { count, perPackage } = JSON.parse(readFileSync(meta, "utf8")) as { count: number; perPackage: Record<string, number> }
    return { _tag: "Ready", path, count, perPackage }
  }
  mkdirSync(scaleDir, { recursive: true })
  const base = ensurePassageCorpus()
  if (base._tag === "Missing") return base
  const perPackage: Record<string, number> = {}
  let all: Array<string> = readFileSync(base.path, "utf8").split("\n").filter((l) => l.length > 0)
  perPackage["search bench corpus"] = all.length
  for (const pkg of scalePackages) {
    const lines = packageLines(pkg)
    if (typeof lines === "string") return { _tag: "Missing", reason: `${pkg.name}: ${lines}` }
    perPackage[pkg.name] = lines.length
    all = all.concat(lines)
  }
  if (all.length < scaleTarget) return { _tag: "Missing", reason: `only ${all.length} passages from the packages, fewer than ${scaleTarget}` }
  const keyed = all.map((line) => ({ line, key: urlHash(line) }))
  keyed.sort((a, b) => a.key - b.key || (a.line < b.line ? -1 : 1))
  const fd = openSync(`${path}.tmp`, "w")
  const chunk = 10_000
  for (let i = 0; i < scaleTarget; i += chunk) {
    writeSync(fd, keyed.slice(i, Math.min(scaleTarget, i + chunk)).map((k) => k.line).join("\n") + "\n")
  }
  closeSync(fd)
  renameSync(`${path}.tmp`, path)
  writeFileSync(meta, JSON.stringify({ count: scaleTarget, available: all.length, perPackage }))
  return { _tag: "Ready", path, count: scaleTarget, perPackage }
}

if (import.meta.main) {
  const corpus = ensureScaleCorpus()
  console.log(JSON.stringify(corpus))
}
