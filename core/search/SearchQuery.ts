/**
 * A search as every backend, provider and the federation run it: trimmed keywords, a result
 * count, and the options agents use on top of them (freshness, language, region, safeSearch,
 * domains, sources, explain, query expansion, and the page content each result carries). The options are all
 * optional, so a search without them is answered exactly as a plain {keywords, num} one.
 * Their rules are here, as schema fields the wire body (core/api/SearchWire.ts) is made of.
 */
import { Schema } from "effect"
import { ruledNumber, ruledPattern, ruledString } from "../schema/Rules.ts"

const { optionalKey } = Schema

export const FRESHNESS_WINDOWS = ["day", "week", "month", "year"] as const
export type FreshnessWindow = typeof FRESHNESS_WINDOWS[number]

export const SAFE_SEARCH = ["off", "moderate", "strict"] as const
export type SafeSearch = typeof SAFE_SEARCH[number]

/** At most this many names in `sources`. */
export const MAX_SOURCES = 16
/** At most this many domains in `includeDomains`, and as many in `excludeDomains`. */
export const MAX_DOMAINS = 50

/** What each result carries besides its snippet: nothing more (snippet), the page's passages most relevant to the query, or its main content. */
export const CONTENT_MODES = ["snippet", "highlights", "markdown", "text"] as const
export type ContentMode = typeof CONTENT_MODES[number]
export const MAX_CHARS_PER_RESULT = 100_000
export const MAX_CONTENT_TOKENS = 200_000

const isoDay = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/
const dayRule = "must be a date YYYY-MM-DD"
const Day = ruledString(dayRule).check(ruledPattern(isoDay, dayRule))

/** A closed date range, both ends included. */
export const FreshnessRange = Schema.Struct({ from: Day, to: Day })
  .annotate({ message: "must be an object {from, to} of dates YYYY-MM-DD" })
  .check(Schema.makeFilter((range) => range.from <= range.to ? undefined : { path: ["to"], issue: "must not be before from" }))
export type FreshnessRange = typeof FreshnessRange.Type

const freshnessRule = "must be day, week, month, year or an object {from, to} of dates YYYY-MM-DD"
export const Freshness = Schema.Union([
  Schema.Literals(FRESHNESS_WINDOWS).annotate({ message: freshnessRule }),
  FreshnessRange
]).annotate({ message: freshnessRule })
export type Freshness = typeof Freshness.Type

const languageRule = "must be a language code of 2 or 3 letters (ISO 639-1 or 639-2), e.g. en"
const regionRule = "must be a country code of 2 letters (ISO 3166-1 alpha-2), e.g. US"
const sourceRule = "must be a source name: letters, digits, _ or -, at most 32 characters"
const sourcesRule = `must be an array of 1 to ${MAX_SOURCES} source names`
const domainRule = "must be a domain name such as example.com or docs.example.com/guide (it covers its subdomains), at most 253 characters"
const domainsRule = `must be an array of 1 to ${MAX_DOMAINS} domain names`

/**
 * A domain a search is kept to or kept from: a host name in ASCII (punycode for other
 * scripts), optionally with a path under it; `https://` and a leading `*.` are accepted and
 * mean the same. It covers its subdomains.
 */
export const DomainName = ruledString(domainRule).check(
  Schema.isMaxLength(253, { message: domainRule }),
  ruledPattern(
    /^(?:https?:\/\/)?(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?$/,
    domainRule
  )
)

/** A list of domains with its bound; `rule` names it. */
export const domainList = (max: number, rule = `must be an array of 1 to ${max} domain names`) =>
  Schema.Array(DomainName).annotate({ message: rule }).check(
    Schema.isMinLength(1, { message: rule }),
    Schema.isMaxLength(max, { message: rule })
  )

/** The options' fields, all optional: the wire body spreads them beside keywords and num. */
export const SearchOptionFields = {
  freshness: optionalKey(Freshness),
  language: optionalKey(ruledString(languageRule).check(ruledPattern(/^[A-Za-z]{2,3}$/, languageRule))),
  region: optionalKey(ruledString(regionRule).check(ruledPattern(/^[A-Za-z]{2}$/, regionRule))),
  safeSearch: optionalKey(Schema.Literals(SAFE_SEARCH).annotate({ message: "must be off, moderate or strict" })),
  sources: optionalKey(
    Schema.Array(ruledString(sourceRule).check(ruledPattern(/^[A-Za-z0-9_-]{1,32}$/, sourceRule)))
      .annotate({ message: sourcesRule })
      .check(
        Schema.isMinLength(1, { message: sourcesRule }),
        Schema.isMaxLength(MAX_SOURCES, { message: sourcesRule })
      )
  ),
  explain: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  /** Results only from these domains (and their subdomains). */
  includeDomains: optionalKey(domainList(MAX_DOMAINS, domainsRule)),
  /** No results from these domains (and their subdomains). */
  excludeDomains: optionalKey(domainList(MAX_DOMAINS, domainsRule)),
  /** snippet (default): the results as they are; highlights, markdown or text: each result also carries `content`. */
  content: optionalKey(Schema.Literals(CONTENT_MODES).annotate({ message: "must be snippet, highlights, markdown or text" })),
  maxCharsPerResult: optionalKey(ruledNumber(`must be an integer from 1 to ${MAX_CHARS_PER_RESULT}`, { integer: true, min: 1, max: MAX_CHARS_PER_RESULT })),
  maxTokens: optionalKey(ruledNumber(`must be an integer from 1 to ${MAX_CONTENT_TOKENS}`, { integer: true, min: 1, max: MAX_CONTENT_TOKENS })),
  /** The local index adds words its best pages for the query share (pseudo-relevance feedback) and ranks again; upstream providers are asked the query as it is. */
  expand: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
} as const

export const SearchOptions = Schema.Struct(SearchOptionFields)
export type SearchOptions = typeof SearchOptions.Type

/** One search: keywords trimmed (non-empty), `num` in 1..100, and its options. */
export interface SearchQuery extends SearchOptions {
  readonly keywords: string
  readonly num: number
}

/** The options a provider is asked to apply (explain, sources and content concern us, not it). */
export type ProviderOption = "freshness" | "language" | "region" | "safeSearch" | "includeDomains" | "excludeDomains"
export const PROVIDER_OPTIONS: ReadonlyArray<ProviderOption> = ["freshness", "language", "region", "safeSearch", "includeDomains", "excludeDomains"]

/** The options a result's content is made with: none of them changes which results there are. */
export const CONTENT_OPTIONS = ["content", "maxCharsPerResult", "maxTokens"] as const

/**
 * The rules between content options: maxCharsPerResult and maxTokens shape `content`, so they
 * need content highlights, markdown or text; images carry no page text, so an image search takes
 * none of them, nor `expand` (pages' words expand a web query). The field that breaks a rule
 * and the rule, or undefined.
 */
export const contentOptionsIssue = (query: SearchOptions, kind: "web" | "images"): { readonly path: string; readonly rule: string } | undefined => {
  if (kind === "images") {
    for (const field of CONTENT_OPTIONS) {
      if (query[field] !== undefined) return { path: field, rule: "applies to web search only (images carry no page text)" }
    }
    if (query.expand !== undefined) return { path: "expand", rule: "applies to web search only" }
    return undefined
  }
  const withContent = query.content !== undefined && query.content !== "snippet"
  for (const field of ["maxCharsPerResult", "maxTokens"] as const) {
    if (query[field] !== undefined && !withContent) return { path: field, rule: "applies only with content highlights, markdown or text" }
  }
  return undefined
}

const domainsKey = (domains: ReadonlyArray<string> | undefined) =>
  domains === undefined ? "" : [...new Set(domains.map((d) => d.toLowerCase()))].sort().join(",")

/** The options that matter to the results, in a fixed order: part of the cache key. */
export const optionsKey = (query: SearchQuery): string => {
  const f = query.freshness
  const freshness = f === undefined ? "" : typeof f === "string" ? f : `${f.from}..${f.to}`
  const sources = query.sources === undefined ? "" : [...new Set(query.sources)].sort().join(",")
  const base = `${freshness}|${query.language?.toLowerCase() ?? ""}|${query.region?.toUpperCase() ?? ""}|${query.safeSearch ?? ""}|${sources}${query.expand === true ? "|expand" : ""}`
  return query.includeDomains === undefined && query.excludeDomains === undefined
    ? base
    : `${base}|${domainsKey(query.includeDomains)}|${domainsKey(query.excludeDomains)}`
}
