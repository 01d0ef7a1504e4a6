/**
 * What a crawler needs from a page besides its document: the links it may
 * follow and the page's robots directives (`<meta name="robots">` and the
 * crawler-specific `<meta name="periscopebot">`): `noindex` keeps the page out
 * of the index, `nofollow` (on the page or on a link) stops links being followed.
 * Read from the whole page before boilerplate removal: navigation is how a site is crawled.
 */
import { absoluteHttpUrl } from "./PageLink.ts"

export interface RobotsDirectives {
  readonly noindex: boolean
  readonly nofollow: boolean
}

export const robotsDirectives = (document: Document, botName = "periscopebot"): RobotsDirectives => {
  let noindex = false
  let nofollow = false
  for (const meta of document.querySelectorAll("meta[name][content]")) {
    const name = (meta.getAttribute("name") ?? "").trim().toLowerCase()
    if (name !== "robots" && name !== botName) continue
    const values = (meta.getAttribute("content") ?? "").toLowerCase().split(/[\s,]+/)
    if (values.includes("noindex") || values.includes("none")) noindex = true
    if (values.includes("nofollow") || values.includes("none")) nofollow = true
  }
  return { noindex, nofollow }
}

/** Absolute http(s) links of the page, without fragments, in page order, each once; none under nofollow. */
export const followableLinks = (document: Document, base: string, directives: RobotsDirectives): Array<string> => {
  if (directives.nofollow) return []
  const seen = new Set<string>()
  for (const anchor of document.querySelectorAll("a[href], area[href]")) {
    const rel = (anchor.getAttribute("rel") ?? "").toLowerCase().split(/\s+/)
    if (rel.includes("nofollow")) continue
    const url = absoluteHttpUrl(anchor.getAttribute("href"), base)
    if (url !== undefined) seen.add(url)
  }
  return [...seen]
}
