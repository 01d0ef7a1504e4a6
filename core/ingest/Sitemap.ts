/**
 * Reads a sitemap (sitemaps.org protocol): a `<urlset>` lists pages, a
 * `<sitemapindex>` lists more sitemaps. Locations are resolved against the
 * sitemap's own URL and kept only when they are http(s). A page's `<lastmod>`
 * (when it last changed) is kept apart in `lastmod`: the crawler dates a page
 * with it only when the page states no date itself (FallbackDate).
 */
import { DOMParser } from "linkedom"
import { absoluteHttpUrl } from "./PageLink.ts"

export interface SitemapEntries {
  readonly pages: ReadonlyArray<string>
  readonly sitemaps: ReadonlyArray<string>
  /** `<lastmod>` of pages that have one, by page URL, as written. */
  readonly lastmod: ReadonlyMap<string, string>
}

/** The entries of a sitemap document; an unreadable document gives an error message. */
export const parseSitemap = (xml: string, sitemapUrl: string): SitemapEntries | { readonly error: string } => {
  let document: Document
  try {
    document = new DOMParser().parseFromString(xml, "text/xml") as unknown as Document
  } catch {
    return { error: "not well-formed XML" }
  }
  const root = document.documentElement?.localName
  const locations = (selector: string) => {
    const out: Array<string> = []
    for (const element of document.querySelectorAll(selector)) {
      const url = absoluteHttpUrl(element.textContent, sitemapUrl)
      if (url !== undefined) out.push(url)
    }
    return out
  }
  if (root === "urlset") {
    const lastmod = new Map<string, string>()
    for (const entry of document.querySelectorAll("url")) {
      const url = absoluteHttpUrl(entry.querySelector("loc")?.textContent, sitemapUrl)
      const changed = entry.querySelector("lastmod")?.textContent?.trim()
      if (url !== undefined && changed) lastmod.set(url, changed)
    }
    return { pages: locations("url > loc"), sitemaps: [], lastmod }
  }
  if (root === "sitemapindex") return { pages: [], sitemaps: locations("sitemap > loc"), lastmod: new Map() }
  return { error: `expected <urlset> or <sitemapindex>, found ${root === undefined ? "no root element" : `<${root}>`}` }
}
