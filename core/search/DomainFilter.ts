/**
 * Domain filters (results only from these sites, none from those), the one rule every path
 * shares: a search's includeDomains / excludeDomains, grounded chat's allowed domains, the
 * Tavily wire's include_domains. A site covers its subdomains (and, with a path, the pages
 * under it). The filter is asked of each source in its own terms (`site:` words for the local
 * engine and the providers that read them, a parameter for those that have one), and the
 * answer is checked on our side by host and path whatever a source did with it.
 */
import { parseSite, type SiteFilter } from "../index/QueryParser.ts"
import type { SearchQuery } from "./SearchQuery.ts"

export interface DomainFilter {
  /** Results must be on one of these (host or a subdomain of it, under its path); empty: any site. */
  readonly include: ReadonlyArray<SiteFilter>
  /** Results on one of these are left out. */
  readonly exclude: ReadonlyArray<SiteFilter>
}

export const noDomainFilter: DomainFilter = { include: [], exclude: [] }

/** A domain as a site (`example.com`, `*.example.com`, `docs.example.com/guide`, `https://example.com`), or undefined when it names no host. */
export const siteOf = (domain: string): SiteFilter | undefined => parseSite(domain.trim().replace(/^(?:[a-z][a-z0-9+.-]*:\/\/)?\*\./i, ""))

/** The sites of domains each of which names a host (siteOf); one that does not is left out. */
export const sitesOf = (domains: ReadonlyArray<string>): Array<SiteFilter> => domains.flatMap((domain) => siteOf(domain) ?? [])

/** The filter a search asks for (includeDomains, excludeDomains); undefined when it asks for none. */
export const domainFilterOf = (query: Pick<SearchQuery, "includeDomains" | "excludeDomains">): DomainFilter | undefined => {
  if (query.includeDomains === undefined && query.excludeDomains === undefined) return undefined
  return { include: sitesOf(query.includeDomains ?? []), exclude: sitesOf(query.excludeDomains ?? []) }
}

/** A site as a domain word: host and path (`docs.example.com/guide`). */
export const siteWord = (site: SiteFilter): string => `${site.host}${site.path}`

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

/** How much of a query a source reads: characters and words (undefined: no bound). */
export interface QueryLimits {
  readonly maxChars: number
  readonly maxWords?: number
}

/** Keywords with the filter's words, and which parts of the filter they carry. */
export interface SiteWords {
  readonly keywords: string
  /** Every include site is in the words (or there was none to include). */
  readonly includeSent: boolean
  /** How many exclude sites are in the words. */
  readonly excludeSent: number
}

const wordCount = (text: string) => text.trim() === "" ? 0 : text.trim().split(/\s+/).length

/**
 * The keywords with the filter as `site:` words, as web search engines and the local engine
 * read them: the include sites as `site:a OR site:b` (OR binds closer than the words around
 * it; the local engine widens with each site and drops the OR), then `-site:c` for each exclude site while the
 * query stays within `limits`. The include sites go all or none: a part of them would narrow
 * the search to those sites alone; what is left out is still filtered on our side.
 */
export const withSiteWords = (keywords: string, filter: DomainFilter, limits: QueryLimits): SiteWords => {
  let out = keywords
  let chars = keywords.length
  let words = wordCount(keywords)
  const maxWords = limits.maxWords ?? Number.MAX_SAFE_INTEGER
  const fits = (text: string, count: number) => chars + 1 + text.length <= limits.maxChars && words + count <= maxWords
  let includeSent = filter.include.length === 0
  if (!includeSent) {
    const terms = filter.include.map((site) => `site:${siteWord(site)}`)
    const group = terms.join(" OR ")
    const count = terms.length * 2 - 1
    if (fits(group, count)) {
      out += ` ${group}`
      chars += 1 + group.length
      words += count
      includeSent = true
    }
  }
  let excludeSent = 0
  for (const site of filter.exclude) {
    const term = `-site:${siteWord(site)}`
    if (!fits(term, 1)) break
    out += ` ${term}`
    chars += 1 + term.length
    words += 1
    excludeSent++
  }
  return { keywords: out, includeSent, excludeSent }
}
