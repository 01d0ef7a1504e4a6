/**
 * Domain filters a caller asks for (include these sites, leave those out), applied twice:
 * as `site:` and `-site:` words in the keywords, so that the local engine (core/index/
 * QueryParser.ts) and the providers that read the same syntax search only there, and on the
 * fused results by host and path, so that the answer holds them whatever a source did with
 * the words.
 */
import { parseSite, type SiteFilter } from "../index/QueryParser.ts"

export interface DomainFilter {
  /** Results must be on one of these (host or a subdomain of it, under its path); empty: any site. */
  readonly include: ReadonlyArray<SiteFilter>
  /** Results on one of these are left out. */
  readonly exclude: ReadonlyArray<SiteFilter>
}

/** A domain as a site (`example.com`, `docs.example.com/guide`, `https://example.com`), or undefined when it names no host. */
export const siteOf = (domain: string): SiteFilter | undefined => parseSite(domain.trim())

/** The sites of domains each of which names a host (siteOf); one that does not is left out. */
export const sitesOf = (domains: ReadonlyArray<string>): Array<SiteFilter> => domains.flatMap((domain) => siteOf(domain) ?? [])

const hostMatches = (host: string, site: SiteFilter) => host === site.host || host.endsWith(`.${site.host}`)

const pathMatches = (path: string, site: SiteFilter) =>
  site.path === "" || path === site.path || path.startsWith(site.path.endsWith("/") ? site.path : `${site.path}/`)

const matchesAny = (url: URL, sites: ReadonlyArray<SiteFilter>): boolean => {
  const host = url.hostname.toLowerCase().replace(/\.$/, "")
  for (const site of sites) if (hostMatches(host, site) && pathMatches(url.pathname, site)) return true
  return false
}

/** Whether a result's URL passes the filter; a URL that does not parse passes only a filter with no sites to include. */
export const passesDomainFilter = (link: string, filter: DomainFilter): boolean => {
  if (filter.include.length === 0 && filter.exclude.length === 0) return true
  let url: URL
  try {
    url = new URL(link)
  } catch {
    return filter.include.length === 0
  }
  if (filter.include.length > 0 && !matchesAny(url, filter.include)) return false
  return !matchesAny(url, filter.exclude)
}

/** Whether a URL is on one of `sites` (for ranking those first without leaving the others out). */
export const onAnySite = (link: string, sites: ReadonlyArray<SiteFilter>): boolean => {
  try {
    return matchesAny(new URL(link), sites)
  } catch {
    return false
  }
}

const siteWord = (site: SiteFilter) => `${site.host}${site.path}`

/**
 * The keywords with the filter's `site:` and `-site:` words after them, as many as fit in
 * `budget` characters: the filter on the results still holds for the sites left out of the
 * words, the sources are only asked more broadly.
 */
export const withSiteWords = (keywords: string, filter: DomainFilter, budget: number): string => {
  let out = keywords
  let left = budget
  const add = (word: string) => {
    if (word.length + 1 > left) return false
    out += ` ${word}`
    left -= word.length + 1
    return true
  }
  // Every include word or none: a part of the list would narrow the search to those sites alone.
  const includeWords = filter.include.map((site) => `site:${siteWord(site)}`)
  const includeLength = includeWords.reduce((n, word) => n + word.length + 1, 0)
  if (includeLength <= left) for (const word of includeWords) add(word)
  for (const site of filter.exclude) if (!add(`-site:${siteWord(site)}`)) break
  return out
}
