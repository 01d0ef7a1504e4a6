/**
 * Reads a sitemap (sitemaps.org protocol): a `<urlset>` lists pages, a
 * `<sitemapindex>` lists more sitemaps. Locations are resolved against the
 * sitemap's own URL and kept only when they are http(s). `<lastmod>` is not
 * read: it is when a page last changed, not when it was published.
 */
import { DOMParser } from "linkedom"
import { absoluteHttpUrl } from "./PageLink.ts"

export interface SitemapEntries {
  readonly pages: ReadonlyArray<string>
  readonly sitemaps: ReadonlyArray<string>
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
  if (root === "urlset") return { pages: locations("url > loc"), sitemaps: [] }
  if (root === "sitemapindex") return { pages: [], sitemaps: locations("sitemap > loc") }
  return { error: `expected <urlset> or <sitemapindex>, found ${root === undefined ? "no root element" : `<${root}>`}` }
}
