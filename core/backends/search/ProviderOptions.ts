/**
 * The options a provider cannot apply itself, as notes for `extra`: freshness is then
 * filtered our side by publish date, domains by host; anything else is reported as ignored,
 * never dropped silently. And the domain filter as `site:` words for the providers whose
 * query reads them, within each one's query limits.
 */
import { domainFilterOf, type QueryLimits, withSiteWords } from "../../search/DomainFilter.ts"
import { PROVIDER_OPTIONS, type ProviderOption, type SearchQuery } from "../../search/SearchQuery.ts"
import type { UnappliedOption } from "../../search/SearchProvider.ts"

/** Options we apply to any provider's results ourselves when it could not. */
const FILTERED: Partial<Record<ProviderOption, string>> = {
  freshness: "filtered our side by publish date; undated results left out",
  includeDomains: "filtered our side by host: only results on those sites are kept",
  excludeDomains: "filtered our side by host: results on those sites are left out"
}

/**
 * Notes for every option the query sets that is not in `applied`; `why` explains each
 * ignored one (e.g. "Tavily has no language parameter").
 */
export const unappliedOptions = (
  query: SearchQuery,
  applied: ReadonlySet<ProviderOption>,
  why: Partial<Record<ProviderOption, string>> = {}
): Array<UnappliedOption> => {
  const out: Array<UnappliedOption> = []
  for (const option of PROVIDER_OPTIONS) {
    if (query[option] === undefined || applied.has(option)) continue
    const filtered = FILTERED[option]
    out.push(filtered !== undefined
      ? { option, handling: "filtered", detail: why[option] ?? filtered }
      : { option, handling: "ignored", detail: why[option] ?? "the provider has no such parameter" })
  }
  return out
}

/**
 * The query's keywords with its domain filter as `site:` words, within what `provider`'s query
 * takes (`limits`). The parts that fit are marked in `applied`; for a part that does not, `why`
 * says so (its results are filtered on our side all the same).
 */
export const siteKeywords = (
  query: SearchQuery,
  provider: string,
  limits: QueryLimits,
  applied: Set<ProviderOption>,
  why: Partial<Record<ProviderOption, string>>
): string => {
  const filter = domainFilterOf(query)
  if (filter === undefined) return query.keywords
  const words = withSiteWords(query.keywords, filter, limits)
  const bound = `${limits.maxChars} characters${limits.maxWords === undefined ? "" : ` and ${limits.maxWords} words`}`
  if (query.includeDomains !== undefined) {
    if (words.includeSent) applied.add("includeDomains")
    else why.includeDomains = `${provider}'s query takes at most ${bound}: the sites did not fit and were not sent; its results are filtered our side by host`
  }
  if (query.excludeDomains !== undefined) {
    if (words.excludeSent === filter.exclude.length) applied.add("excludeDomains")
    else why.excludeDomains = `${provider}'s query takes at most ${bound}: ${words.excludeSent} of ${filter.exclude.length} sites were sent as -site:; its results are filtered our side by host`
  }
  return words.keywords
}

/** `M/D/YYYY` of an ISO day, as Google's tbs ranges want it. */
export const usDate = (isoDay: string): string => {
  const [y, m, d] = isoDay.split("-")
  return `${Number(m)}/${Number(d)}/${y}`
}

/** Strips the highlight tags some providers put in snippets (<strong>) and decodes the common entities. */
export const plainText = (html: string): string =>
  html.includes("<") || html.includes("&")
    ? html.replace(/<[^>]*>/g, "").replace(/&quot;/g, "\"").replace(/&#39;|&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
    : html

/** Images carry no publish date: a freshness the provider could not apply cannot be filtered either (domains are, by the page). */
export const forImages = (unapplied: ReadonlyArray<UnappliedOption>): Array<UnappliedOption> =>
  unapplied.map((u) =>
    u.option === "freshness" && u.handling === "filtered"
      ? { option: "freshness", handling: "ignored", detail: "images carry no publish date to filter by" }
      : u
  )

/**
 * The domain filter as a provider's own include/exclude parameters, which take host names: an
 * include site with a path is asked for by its host (the path is checked on our side), an
 * exclude site with a path is not sent (excluding its host would drop more than asked).
 */
export const domainParams = (
  query: SearchQuery,
  provider: string,
  applied: Set<ProviderOption>,
  why: Partial<Record<ProviderOption, string>>
): { readonly include?: Array<string>; readonly exclude?: Array<string> } => {
  const filter = domainFilterOf(query)
  if (filter === undefined) return {}
  const out: { include?: Array<string>; exclude?: Array<string> } = {}
  if (query.includeDomains !== undefined && filter.include.length > 0) {
    out.include = [...new Set(filter.include.map((site) => site.host))]
    if (filter.include.every((site) => site.path === "")) applied.add("includeDomains")
    else why.includeDomains = `${provider} takes host names: the sites with a path were asked for by their host and filtered our side by path`
  }
  if (query.excludeDomains !== undefined && filter.exclude.length > 0) {
    const hosts = filter.exclude.filter((site) => site.path === "").map((site) => site.host)
    if (hosts.length > 0) out.exclude = [...new Set(hosts)]
    if (hosts.length === filter.exclude.length) applied.add("excludeDomains")
    else why.excludeDomains = `${provider} takes host names: the sites with a path were left out on our side`
  }
  return out
}
