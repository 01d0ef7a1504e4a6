/**
 * A search as every backend, provider and the federation run it: trimmed keywords, a result
 * count, and the options agents use on top of them (freshness, language, region, safeSearch,
 * sources, explain). The options are all optional, so a search without them is answered
 * exactly as a plain {keywords, num} one. Their rules are here, as schema fields the wire
 * body (core/api/SearchWire.ts) is made of.
 */
import { Schema } from "effect"
import { ruledPattern, ruledString } from "../schema/Rules.ts"

const { optionalKey } = Schema

export const FRESHNESS_WINDOWS = ["day", "week", "month", "year"] as const
export type FreshnessWindow = typeof FRESHNESS_WINDOWS[number]

export const SAFE_SEARCH = ["off", "moderate", "strict"] as const
export type SafeSearch = typeof SAFE_SEARCH[number]

/** At most this many names in `sources`. */
export const MAX_SOURCES = 16

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
  explain: optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
} as const

export const SearchOptions = Schema.Struct(SearchOptionFields)
export type SearchOptions = typeof SearchOptions.Type

/** One search: keywords trimmed (non-empty), `num` in 1..100, and its options. */
export interface SearchQuery extends SearchOptions {
  readonly keywords: string
  readonly num: number
}

/** The options a provider is asked to apply (explain and sources concern us, not it). */
export type ProviderOption = "freshness" | "language" | "region" | "safeSearch"
export const PROVIDER_OPTIONS: ReadonlyArray<ProviderOption> = ["freshness", "language", "region", "safeSearch"]

/** The options that matter to an answer, in a fixed order: part of the cache key. */
export const optionsKey = (query: SearchQuery): string => {
  const f = query.freshness
  const freshness = f === undefined ? "" : typeof f === "string" ? f : `${f.from}..${f.to}`
  const sources = query.sources === undefined ? "" : [...new Set(query.sources)].sort().join(",")
  return `${freshness}|${query.language?.toLowerCase() ?? ""}|${query.region?.toUpperCase() ?? ""}|${query.safeSearch ?? ""}|${sources}`
}
