/**
 * The URLs a site lists, as jobs (parsing XML and HTML is the CPU-heavy half of mapping a site,
 * run off the answering thread): a sitemap's pages and nested sitemaps (Sitemap.ts), and the
 * links a page lets a crawler follow (PageLinks.ts: none under `nofollow`, `rel=nofollow` links
 * left out), its structure bounded first as webFetch bounds a page (PageLimits).
 */
import { parseHTML } from "linkedom"
import { defineJob } from "../../jobs/Job.ts"
import { decodeHtml } from "../HtmlBytes.ts"
import { htmlShape } from "../HtmlShape.ts"
import { baseUrl } from "../PageLink.ts"
import { followableLinks, robotsDirectives } from "../PageLinks.ts"
import type { PageLimits } from "../PageLimits.ts"
import { parseSitemap } from "../Sitemap.ts"

export interface SitemapRequest {
  /** The sitemap's bytes, decompressed. */
  readonly bytes: Uint8Array
  /** Where it was read from: relative locations resolve against it. */
  readonly url: string
}

export type SitemapUrls =
  | { readonly pages: ReadonlyArray<string>; readonly sitemaps: ReadonlyArray<string> }
  | { readonly error: string }

/** A sitemap's page URLs and nested sitemaps, or why it could not be read. */
export const sitemapUrlsJob = defineJob<SitemapRequest, SitemapUrls>(import.meta.url, "sitemapUrls", (request) => {
  const entries = parseSitemap(new TextDecoder().decode(request.bytes), request.url)
  return "error" in entries ? { error: entries.error } : { pages: entries.pages, sitemaps: entries.sitemaps }
})

export interface LinksRequest {
  readonly bytes: Uint8Array
  readonly contentType: string
  readonly url: string
  readonly limits: Pick<PageLimits, "maxHtmlDepth" | "maxHtmlElements">
}

export type PageUrls =
  | { readonly links: ReadonlyArray<string> }
  | { readonly refused: "maxHtmlDepth" | "maxHtmlElements"; readonly max: number }

/** The absolute http(s) links of an HTML page a crawler may follow, in page order, each once. */
export const pageLinksJob = defineJob<LinksRequest, PageUrls>(import.meta.url, "pageLinks", (request) => {
  const html = decodeHtml(request.bytes, request.contentType)
  const shape = htmlShape(html, { maxDepth: request.limits.maxHtmlDepth, maxElements: request.limits.maxHtmlElements })
  if (shape.over === "depth") return { refused: "maxHtmlDepth", max: request.limits.maxHtmlDepth }
  if (shape.over === "elements") return { refused: "maxHtmlElements", max: request.limits.maxHtmlElements }
  const { document } = parseHTML(html) as unknown as { document: Document }
  return { links: followableLinks(document, baseUrl(document, request.url), robotsDirectives(document)) }
})
