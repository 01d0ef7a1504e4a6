/**
 * Turns the CLI's source arguments into sources, checking them all before any
 * work starts (a typo should not surface an hour into a crawl):
 *
 * - `https://site/` : a crawl seed;  `https://site/sitemap.xml(.gz)`: a sitemap
 * - `folder` or `folder=https://docs.example.com/`: HTML files, with the URL
 *   they are published at (or --base-url)
 * - `file.warc`, `file.warc.gz`: WARC archive
 * - `file.jsonl`, `file.ndjson` (optionally .gz): ready documents
 * - `file.txt`: URLs to crawl, one a line (`#` comments; sitemap URLs allowed)
 *
 * All URLs given (seeds and sitemaps) make one crawl, so politeness is shared.
 */
import { readFileSync, statSync } from "node:fs"
import { Schema } from "effect"
import { type CrawlOptions, crawlSource } from "../../../core/ingest/crawl/Crawl.ts"
import type { DocumentSource } from "../../../core/ingest/DocumentSource.ts"
import { type AddressPolicy, defaultAddressPolicy } from "./crawl/AddressGuard.ts"
import { nodePageFetcher } from "./crawl/NodePageFetcher.ts"
import { directoryBaseUrl, htmlDirectorySource } from "./htmlDirectorySource.ts"
import { jsonlSource } from "./jsonlSource.ts"
import { warcSource } from "./warcSource.ts"

/** A source argument that cannot be used; thrown before any work starts. */
export class SourceSpecError extends Schema.TaggedError<SourceSpecError>()("SourceSpecError", {
  argument: Schema.String,
  message: Schema.String
}) {}

const specError = (argument: string, message: string) => new SourceSpecError({ argument, message })

export interface OpenSourcesOptions {
  /** Base URL for folders given without `=URL`. */
  readonly baseUrl?: string | undefined
  /** Crawl settings shared by every URL argument. */
  readonly crawl?: Omit<CrawlOptions, "seeds" | "sitemaps"> | undefined
  /** Hosts ("10.0.0.5:8080", "intranet.example") exempt from the private-address guard, or true for all. */
  readonly allowPrivate?: AddressPolicy["allow"] | undefined
  readonly maxFileBytes?: number | undefined
  /** Index generated index pages (Sphinx genindex, Javadoc index-all, ...) too; left out by default. */
  readonly keepGenerated?: boolean | undefined
}

const HTTP_URL = /^https?:\/\//i
const SITEMAP_URL = /sitemap[^/]*\.xml(?:\.gz)?(?:\?.*)?$|\.xml(?:\.gz)?(?:\?.*)?$/i

const checkedUrl = (argument: string, value: string): string => {
  try {
    const url = new URL(value)
    if (url.protocol === "http:" || url.protocol === "https:") return url.href
  } catch {
    // fall through
  }
  throw specError(argument, `${JSON.stringify(value)} is not an absolute http(s) URL`)
}

const kindOf = (path: string): "directory" | "file" | undefined => {
  const info = statSync(path, { throwIfNoEntry: false })
  if (info === undefined) return undefined
  return info.isDirectory() ? "directory" : info.isFile() ? "file" : undefined
}

export const openSources = (args: ReadonlyArray<string>, options: OpenSourcesOptions = {}): Array<DocumentSource> => {
  if (args.length === 0) throw specError("sources", "give at least one folder, file or URL to index")
  const sources: Array<DocumentSource> = []
  const seeds: Array<string> = []
  const sitemaps: Array<string> = []
  const addUrl = (argument: string, value: string) => {
    const url = checkedUrl(argument, value)
    if (SITEMAP_URL.test(new URL(url).pathname)) sitemaps.push(url)
    else seeds.push(url)
  }

  for (const argument of args) {
    if (HTTP_URL.test(argument)) {
      addUrl(argument, argument)
      continue
    }
    // "folder=https://..." names the URL a folder is published at.
    const split = /^(.*?)=(https?:\/\/.*)$/i.exec(argument)
    const path = split !== null && kindOf(split[1]!) === "directory" ? split[1]! : argument
    const kind = kindOf(path)
    if (kind === undefined) throw specError(argument, "no such file or folder")
    if (kind === "directory") {
      const base = split !== null && path === split[1] ? split[2]! : options.baseUrl
      if (base === undefined) {
        throw specError(
          argument,
          `a folder needs the URL it is published at, as ${path}=https://docs.example.com/ or --base-url, because results link to web addresses`
        )
      }
      try {
        directoryBaseUrl(base)
      } catch (error) {
        throw specError(argument, (error as Error).message)
      }
      sources.push(htmlDirectorySource(path, { baseUrl: base, maxBytes: options.maxFileBytes, keepGenerated: options.keepGenerated }))
    } else if (/\.warc(?:\.gz)?$/i.test(path)) {
      sources.push(warcSource(path, { maxBytes: options.maxFileBytes, keepGenerated: options.keepGenerated }))
    } else if (/\.(?:jsonl|ndjson)(?:\.gz)?$/i.test(path)) {
      sources.push(jsonlSource(path))
    } else if (/\.txt$/i.test(path)) {
      const lines = readFileSync(path, "utf8").split(/\r?\n/)
      lines.forEach((line, i) => {
        const value = line.trim()
        if (value !== "" && !value.startsWith("#")) addUrl(`${path}:${i + 1}`, value)
      })
    } else {
      throw specError(
        argument,
        "unknown kind of file; expected a folder, .warc, .warc.gz, .jsonl, .ndjson(.gz) or a .txt list of URLs"
      )
    }
  }
  if (seeds.length > 0 || sitemaps.length > 0) {
    const fetcher = nodePageFetcher({ ...defaultAddressPolicy, allow: options.allowPrivate ?? false })
    sources.push(crawlSource({ ...options.crawl, seeds, sitemaps, keepGenerated: options.keepGenerated }, fetcher))
  }
  return sources
}
