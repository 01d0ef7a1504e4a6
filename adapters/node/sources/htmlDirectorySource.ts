/**
 * A directory tree of .html files as documents. Each file's link is its path
 * under the directory resolved against a base URL (`docs/a/b.html` with base
 * `https://example.com/docs/` gives `https://example.com/docs/a/b.html`).
 * Files are read in sorted order so runs are repeatable.
 *
 * A file whose bytes are not HTML (an image or random bytes under an .html
 * name) is an error, not a page; a folder with no .html file at all is one
 * error too, so a wrong path cannot pass for an empty site. Generated index
 * pages (genindex, index-all, ...) are skipped unless `keepGenerated`. A page
 * stating no date gets none: file times are checkout or build stamps
 * (core/ingest/FallbackDate.ts).
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises"
import { join, relative, sep } from "node:path"
import { type DocumentSource, failed, formatBytes, type PageItem, type SourceItem, skipped } from "../../../core/ingest/DocumentSource.ts"
import { generatedPageKind, generatedPageReason } from "../../../core/ingest/GeneratedPage.ts"
import { notHtml } from "../../../core/ingest/NotHtml.ts"
import { asyncEstimate, asyncItems, extractedInPlace } from "./asyncItems.ts"

export interface HtmlDirectoryOptions {
  /** URL the directory is published at (http or https): links in results must be web addresses. */
  readonly baseUrl: string
  /** Files larger than this are skipped (default 10 MiB). */
  readonly maxBytes?: number | undefined
  /** Index generated index pages (genindex, index-all, ...) too; left out by default. */
  readonly keepGenerated?: boolean | undefined
}

const HTML_FILE = /\.(?:html?|xhtml)$/i
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024

/** The base URL with a trailing slash, so relative paths resolve inside it; throws on a non-http(s) URL. */
export const directoryBaseUrl = (baseUrl: string): string => {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new Error(`base URL: must be an absolute http(s) URL, got ${JSON.stringify(baseUrl)}`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`base URL: must be an http(s) URL, got ${JSON.stringify(baseUrl)}`)
  }
  url.hash = ""
  url.search = ""
  if (!url.pathname.endsWith("/")) url.pathname += "/"
  return url.href
}

/** The link of `file` inside `directory`: its relative path, URL-encoded per segment, under the base. */
export const fileLink = (directory: string, file: string, base: string): string => {
  const path = relative(directory, file).split(sep).map(encodeURIComponent).join("/")
  return new URL(path, base).href
}

async function* htmlFiles(directory: string, seen: Set<string>): AsyncGenerator<string> {
  // Symlinked folders can loop back on themselves; each real folder is walked once.
  const real = await realpath(directory)
  if (seen.has(real)) return
  seen.add(real)
  const entries = (await readdir(directory)).sort()
  for (const entry of entries) {
    const path = join(directory, entry)
    const info = await stat(path).catch(() => undefined) // dangling symlinks exist in real trees
    if (info === undefined) continue
    if (info.isDirectory()) yield* htmlFiles(path, seen)
    else if (info.isFile() && HTML_FILE.test(entry)) yield path
  }
}

export const htmlDirectorySource = (directory: string, options: HtmlDirectoryOptions): DocumentSource => {
  const base = directoryBaseUrl(options.baseUrl)
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_FILE_BYTES
  const pages = asyncItems(directory, async function*(): AsyncGenerator<SourceItem | PageItem> {
    let files = 0
    for await (const file of htmlFiles(directory, new Set())) {
      files++
      const origin = relative(directory, file)
      try {
        const link = fileLink(directory, file, base)
        const generated = options.keepGenerated === true ? undefined : generatedPageKind(link)
        if (generated !== undefined) {
          yield skipped(origin, generatedPageReason(generated))
          continue
        }
        const info = await stat(file)
        if (info.size > maxBytes) {
          yield skipped(origin, `larger than ${formatBytes(maxBytes)}`)
          continue
        }
        const bytes = await readFile(file)
        const binary = notHtml(bytes)
        if (binary !== undefined) {
          yield failed(origin, binary)
          continue
        }
        yield { _tag: "Page", origin, page: { bytes, url: link } }
      } catch (error) {
        yield failed(origin, error)
      }
    }
    if (files === 0) yield failed(directory, "no .html, .htm or .xhtml files in this folder")
  })
  return {
    describe: `${directory} (HTML files as ${base})`,
    estimate: asyncEstimate(async () => {
      let count = 0
      for await (const _ of htmlFiles(directory, new Set())) count++
      return count
    }),
    items: extractedInPlace(pages),
    pages
  }
}
