/**
 * URL normalisation, so that one page is one document whatever spelling of its address
 * was crawled: scheme and host case, default ports, dot segments, a trailing slash,
 * tracking parameters and an empty query or fragment do not make a second page. The link
 * shown keeps the path as given (a server may redirect "/a" to "/a/"); the key drops it.
 *
 * The fragment is kept: a document may be one section of a page ("page.html#install"),
 * and two sections are two documents. Near-identical content at different addresses is
 * collapsed at query time instead (NearDuplicates).
 */

/** Query parameters that only track the visitor; they never change the page. */
const trackingParameter = /^(utm_[a-z_]+|fbclid|gclid|gclsrc|dclid|msclkid|mc_cid|mc_eid|yclid|_ga|_gl|igshid|oly_anon_id|oly_enc_id|vero_id|wickedid|_hsenc|_hsmi|mkt_tok|ref_src)$/i

export interface NormalizedUrl {
  /** The address to show and follow: parsed, credentials and tracking parameters removed, path as given. */
  readonly link: string
  /** The identity of the page: `link` without a trailing slash; equal keys are one page. */
  readonly key: string
}

/** The link and identity key of an absolute http(s) URL, or undefined when `raw` is not one. */
export const normalizeUrl = (raw: string): NormalizedUrl | undefined => {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    return undefined
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname.length === 0) return undefined
  // WHATWG parsing already lower-cases scheme and host, drops default ports and resolves "..".
  url.username = ""
  url.password = ""
  if (url.hostname.endsWith(".")) url.hostname = url.hostname.slice(0, -1)
  if (url.search.length > 0) {
    const kept = [...url.searchParams].filter(([name]) => !trackingParameter.test(name))
    url.search = kept.length === 0 ? "" : new URLSearchParams(kept).toString()
  }
  const link = trimEmpty(url.href)
  // Servers answer "/a" and "/a/" with the same page (one redirects): one key for both.
  if (url.pathname.length > 1 && url.pathname.endsWith("/")) url.pathname = url.pathname.replace(/\/+$/, "") || "/"
  return { link, key: trimEmpty(url.href) }
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
