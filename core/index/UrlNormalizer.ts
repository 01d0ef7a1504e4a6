/**
 * URL normalisation, the one rule for "the same address" everywhere: the index's document
 * identity, fusion's duplicates and grounding's sources all read it, with one list of
 * tracking parameters. It lives in the index, the lowest room that search and chat may
 * import, and the first to need it.
 *
 * Two identities, because two questions are asked. `normalizeUrl(...).key` names a document
 * of the index: a fragment is a section ("page.html#install"), and two sections are two
 * documents; near-identical content at different addresses is collapsed at query time instead
 * (NearDuplicates). `pageKey` names a page as search engines list it: scheme, `www.`, fragment
 * and query order are spelling, so links of different engines to one page meet.
 */

/** Query parameters that only track the visitor; they never change the page. */
const TRACKING = /^(utm_[a-z_]+|fbclid|gclid|gclsrc|dclid|msclkid|mc_cid|mc_eid|yclid|_ga|_gl|igshid|oly_anon_id|oly_enc_id|vero_id|wickedid|_hsenc|_hsmi|mkt_tok|ref_src|spm)$/i

export interface NormalizedUrl {
  /** The address to show and follow: parsed, credentials and tracking parameters removed, path as given. */
  readonly link: string
  /** The identity of the document: `link` without a trailing slash; equal keys are one document. */
  readonly key: string
}

/**
 * An absolute http(s) URL, parsed, with credentials, a trailing dot of the host and tracking
 * parameters removed; undefined when `raw` is not one. WHATWG parsing already lower-cases scheme
 * and host, drops default ports and resolves "..".
 */
const parseClean = (raw: string): URL | undefined => {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    return undefined
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname.length === 0) return undefined
  url.username = ""
  url.password = ""
  if (url.hostname.endsWith(".")) url.hostname = url.hostname.slice(0, -1)
  if (url.search.length > 0) {
    const kept = [...url.searchParams].filter(([name]) => !TRACKING.test(name))
    url.search = kept.length === 0 ? "" : new URLSearchParams(kept).toString()
  }
  return url
}

/** Servers answer "/a" and "/a/" with the same page (one redirects): identities drop the slash. */
const withoutTrailingSlash = (path: string): string =>
  path.length > 1 && path.endsWith("/") ? path.replace(/\/+$/, "") || "/" : path

/** The link and document key of an absolute http(s) URL, or undefined when `raw` is not one. */
export const normalizeUrl = (raw: string): NormalizedUrl | undefined => {
  const url = parseClean(raw)
  if (url === undefined) return undefined
  const link = trimEmpty(url.href)
  url.pathname = withoutTrailingSlash(url.pathname)
  return { link, key: trimEmpty(url.href) }
}

/**
 * The identity of a page however an engine spelt its address: scheme, `www.`, default ports
 * (80 and 443 alike, the scheme being ignored), fragment, tracking parameters, query order and
 * a trailing slash do not count. A string that is not an http(s) URL is its own key, trimmed.
 */
export const pageKey = (raw: string): string => {
  const url = parseClean(raw)
  if (url === undefined) return raw.trim()
  let host = url.hostname
  if (host.startsWith("www.")) host = host.slice(4)
  const port = url.port === "" || url.port === "80" || url.port === "443" ? "" : `:${url.port}`
  const path = withoutTrailingSlash(url.pathname)
  let query = ""
  if (url.search.length > 1) {
    const pairs = [...url.searchParams].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    query = `?${new URLSearchParams(pairs).toString()}`
  }
  return `${host}${port}${path === "/" ? "" : path}${query}`
}

/** How many tracking parameters a URL carries (0 for what is not a URL). */
const trackingCount = (raw: string): number => {
  const hash = raw.indexOf("#")
  const end = hash < 0 ? raw.length : hash
  const mark = raw.indexOf("?")
  if (mark < 0 || mark > end) return 0
  let count = 0
  for (const name of new URLSearchParams(raw.slice(mark + 1, end)).keys()) if (TRACKING.test(name)) count++
  return count
}

/**
 * The cleaner of two spellings of one page, as given (neither is rewritten): https over http,
 * then the one with fewer tracking parameters; `a` on a tie, so the first source seen keeps its link.
 */
export const cleanerUrl = (a: string, b: string): string => {
  const secureA = a.startsWith("https:"), secureB = b.startsWith("https:")
  if (secureA !== secureB) return secureA ? a : b
  return trackingCount(b) < trackingCount(a) ? b : a
}

/** Drops an empty fragment or query marker ("a#", "a?"). */
const trimEmpty = (href: string): string => {
  let out = href
  if (out.endsWith("#")) out = out.slice(0, -1)
  if (out.endsWith("?")) out = out.slice(0, -1)
  return out
}

/** Host labels reversed ("docs.python.org" -> "org.python.docs"), so a site's subdomains sort together. */
export const reversedHost = (host: string): string => host.toLowerCase().split(".").reverse().join(".")

/**
 * The words of a URL that are worth searching: host labels (without "www"), path segments
 * and the fragment, with separators turned into spaces ("docs python org library os html").
 */
export const urlWords = (href: string): string => {
  let url: URL
  try {
    url = new URL(href)
  } catch {
    return ""
  }
  const host = url.hostname.replace(/^www\./, "").replace(/\./g, " ")
  let path = url.pathname
  try {
    path = decodeURIComponent(path)
  } catch {
    // A malformed escape stays as it is; its letters are still words.
  }
  const rest = `${path} ${url.hash.slice(1)}`.replace(/[/._\-~+=%?#&]+/g, " ")
  return `${host} ${rest}`.trim()
}
