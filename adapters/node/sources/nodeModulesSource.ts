/**
 * The documentation installed packages carry, as documents: each package's
 * README (linked to its npm page) and the Markdown or HTML under its docs/
 * or doc/ folder (linked to the file on unpkg, where the published package
 * serves it). Markdown is rendered with marked, then read like any page.
 * Needs no network: everything is already in node_modules.
 */
import { readdir, readFile, stat } from "node:fs/promises"
import { join, relative, sep } from "node:path"
import { marked } from "marked"
import { decodeHtml } from "../../../core/ingest/HtmlBytes.ts"
import { htmlToDocument } from "../../../core/ingest/HtmlDocument.ts"
import { type DocumentSource, documentItem, failed, type SourceItem, skipped } from "../../../core/ingest/DocumentSource.ts"
import { asyncItems } from "./asyncItems.ts"

interface PackageInfo {
  readonly name: string
  readonly version: string
  readonly description: string
  readonly dir: string
}

const MAX_FILE_BYTES = 512 * 1024
const MAX_DOCS_PER_PACKAGE = 40
const DOC_FOLDERS = ["docs", "doc", "documentation"]
const README = /^readme(?:\.(?:md|markdown|txt))?$/i
const MARKDOWN = /\.(?:md|markdown)$/i
const HTML = /\.html?$/i
// Top-level Markdown that is not documentation of the package's use.
const NOT_DOCS = /^(?:changelog|changes|history|license|licence|contributing|code_of_conduct|security|authors|notice|funding|releases?)\b/i

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

export const npmPage = (name: string) => `https://www.npmjs.com/package/${name}`
const unpkgFile = (pkg: PackageInfo, path: string) =>
  `https://unpkg.com/${pkg.name}@${pkg.version}/${path.split(sep).map(encodeURIComponent).join("/")}`

const readPackage = async (dir: string): Promise<PackageInfo | undefined> => {
  try {
    const json = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as Record<string, unknown>
    const name = json["name"]
    const version = json["version"]
    if (typeof name !== "string" || name === "" || typeof version !== "string") return undefined
    const description = typeof json["description"] === "string" ? json["description"] : ""
    return { name, version, description, dir }
  } catch {
    return undefined
  }
}

/** Package folders directly in node_modules (scoped ones under @scope/), sorted. */
const packageDirs = async (root: string): Promise<Array<string>> => {
  const out: Array<string> = []
  for (const entry of (await readdir(root).catch(() => [] as Array<string>)).sort()) {
    if (entry.startsWith(".")) continue
    const path = join(root, entry)
    if (entry.startsWith("@")) {
      for (const scoped of (await readdir(path).catch(() => [] as Array<string>)).sort()) out.push(join(path, scoped))
    } else {
      out.push(path)
    }
  }
  return out
}

const filesUnder = async (dir: string, depth: number, out: Array<string>): Promise<void> => {
  if (depth > 3 || out.length >= MAX_DOCS_PER_PACKAGE) return
  for (const entry of (await readdir(dir).catch(() => [] as Array<string>)).sort()) {
    if (entry.startsWith(".") || entry === "node_modules") continue
    const path = join(dir, entry)
    const info = await stat(path).catch(() => undefined)
    if (info === undefined) continue
    if (info.isDirectory()) await filesUnder(path, depth + 1, out)
    else if (info.isFile() && (MARKDOWN.test(entry) || HTML.test(entry)) && out.length < MAX_DOCS_PER_PACKAGE) out.push(path)
  }
}

/** README first, then other top-level Markdown, then docs folders. */
const docFiles = async (pkg: PackageInfo): Promise<{ readme: string | undefined; docs: Array<string> }> => {
  const top = (await readdir(pkg.dir).catch(() => [] as Array<string>)).sort()
  const readmeName = top.find((f) => README.test(f))
  const docs: Array<string> = []
  for (const file of top) {
    if (file !== readmeName && MARKDOWN.test(file) && !NOT_DOCS.test(file)) docs.push(join(pkg.dir, file))
  }
  for (const folder of DOC_FOLDERS) if (top.includes(folder)) await filesUnder(join(pkg.dir, folder), 0, docs)
  return { readme: readmeName === undefined ? undefined : join(pkg.dir, readmeName), docs: docs.slice(0, MAX_DOCS_PER_PACKAGE) }
}

/**
 * A Markdown file as a page: `<title>` only when given (READMEs get the
 * package's name and description), the canonical link, and a base URL so
 * relative images resolve to the packaged files.
 */
const markdownPage = async (markdown: string, link: string, base: string, title: string | undefined): Promise<string> =>
  `<!doctype html><html><head>${title === undefined ? "" : `<title>${escapeHtml(title)}</title>`}` +
  `<link rel="canonical" href="${escapeHtml(link)}"><base href="${escapeHtml(base)}"></head>` +
  `<body><main>${await marked.parse(markdown, { async: true, gfm: true })}</main></body></html>`

/** The documentation of the packages in `root`, but for the packages named in `skip`. */
export const nodeModulesSource = (root: string, skip: ReadonlyArray<string> = []): DocumentSource => ({
  describe: `${root} (package documentation)`,
  items: asyncItems(root, async function*(): AsyncGenerator<SourceItem> {
    const seen = new Set<string>(skip)
    for (const dir of await packageDirs(root)) {
      const pkg = await readPackage(dir)
      if (pkg === undefined || seen.has(pkg.name)) continue
      seen.add(pkg.name)
      const { readme, docs } = await docFiles(pkg)
      const files: Array<{ file: string; link: string; title: string | undefined }> = []
      if (readme !== undefined) {
        const title = pkg.description === "" ? pkg.name : `${pkg.name}: ${pkg.description}`
        files.push({ file: readme, link: npmPage(pkg.name), title })
      }
      for (const file of docs) files.push({ file, link: unpkgFile(pkg, relative(pkg.dir, file)), title: undefined })
      for (const { file, link, title } of files) {
        const origin = relative(root, file)
        try {
          if ((await stat(file)).size > MAX_FILE_BYTES) {
            yield skipped(origin, "larger than 512 KiB")
            continue
          }
          const packaged = unpkgFile(pkg, relative(pkg.dir, file))
          const source = decodeHtml(await readFile(file))
          // Shipped HTML is read as the page it is; Markdown (and plain-text READMEs) is rendered first.
          const html = HTML.test(file) ? source : await markdownPage(source, link, packaged.replace(/[^/]*$/, ""), title)
          yield documentItem(origin, htmlToDocument(html, HTML.test(file) ? packaged : link))
        } catch (error) {
          yield failed(origin, error)
        }
      }
    }
  })
})
