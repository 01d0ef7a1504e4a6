/**
 * Where a page lives: its base URL for resolving relative references, and the
 * canonical link a search result points to (`rel=canonical`, then `og:url`,
 * then the URL it was read from). Fragments are dropped: they name a place in
 * a page, not a page.
 */
import type { PageMeta } from "./PageMeta.ts"

/** `href` resolved against `base` as an absolute http(s) URL without fragment, or undefined. */
export const absoluteHttpUrl = (href: string | null | undefined, base: string): string | undefined => {
  if (href === null || href === undefined) return undefined
  const trimmed = href.trim()
  if (trimmed === "") return undefined
  try {
    const url = new URL(trimmed, base)
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
    url.hash = ""
    return url.href
  } catch {
    return undefined
  }
}

/** The URL relative references resolve against: `<base href>` when present, else the source URL. */
export const baseUrl = (document: Document, sourceUrl: string): string => {
  const href = document.querySelector("base[href]")?.getAttribute("href")
  return absoluteHttpUrl(href, sourceUrl) ?? sourceUrl
}

export const canonicalLink = (document: Document, meta: PageMeta, base: string, sourceUrl: string): string => {
  for (const link of document.querySelectorAll("link[rel][href]")) {
    const rel = (link.getAttribute("rel") ?? "").toLowerCase().split(/\s+/)
    if (!rel.includes("canonical")) continue
    const url = absoluteHttpUrl(link.getAttribute("href"), base)
    if (url !== undefined) return url
  }
  return absoluteHttpUrl(meta.get("og:url"), base) ?? absoluteHttpUrl(sourceUrl, sourceUrl) ?? sourceUrl
}
