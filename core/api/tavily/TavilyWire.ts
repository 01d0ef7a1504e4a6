/**
 * Tavily's wire as its clients send and read it (@tavily/core, tavily-python, LangChain's
 * Tavily tools): the bodies of POST /tavily/search and /tavily/extract and their answers.
 * Fields are snake_case as Tavily names them; a field left null counts as left out (Python
 * callers send None). A key this wire does not know is refused, naming it: a misspelt option
 * (`include_domain`) would otherwise change the answer without a word.
 */
import { Schema } from "effect"
import { ruledNumber, ruledPattern, ruledString } from "../../schema/Rules.ts"
import { siteOf } from "../../search/DomainFilter.ts"
import { MAX_URL_LENGTH } from "../FetchWire.ts"
import { SearchBody } from "../SearchWire.ts"
import { countryCodeOf } from "./Countries.ts"

/** Bodies are small: a query, options and at most a few hundred domains or twenty URLs. */
export const TAVILY_BODY_LIMIT = 256 * 1024

export const MAX_RESULTS = 20
export const DEFAULT_MAX_RESULTS = 5
export const MAX_INCLUDE_DOMAINS = 300
export const MAX_EXCLUDE_DOMAINS = 150
export const MAX_EXTRACT_URLS = 20

const { optionalKey } = Schema

/** An optional field that may also be sent as null (left out); `rule` is the message of any failure. */
const nullable = <S extends Schema.Top>(schema: S, rule: string) =>
  optionalKey(Schema.NullOr(schema.annotate({ message: rule })).annotate({ message: rule }))

const flag = nullable(Schema.Boolean, "must be a boolean")

/** A boolean or one of `literals`, with `rule` on every branch. */
const either = <const L extends readonly [string, ...Array<string>]>(literals: L, rule: string) =>
  Schema.Union([Schema.Boolean.annotate({ message: rule }), Schema.Literals(literals).annotate({ message: rule })]).annotate({ message: rule })

const isoDay = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/
const dayRule = "must be a date YYYY-MM-DD"
const Day = ruledString(dayRule).check(ruledPattern(isoDay, dayRule))

const domainRule = "must be a domain such as example.com (optionally with a path: example.com/docs)"
const Domain = ruledString(domainRule).check(
  Schema.isMaxLength(253 + 1024, { message: domainRule }),
  Schema.makeFilter((domain: string) => (siteOf(domain) === undefined ? domainRule : undefined))
)
const domains = (max: number) => {
  const rule = `must be an array of at most ${max} domains`
  return nullable(Schema.Array(Domain).annotate({ message: rule }).check(Schema.isMaxLength(max, { message: rule })), rule)
}

const countryRule = "must be a country: its English name (united states) or its 2-letter code (US)"
const Country = ruledString(countryRule).check(Schema.makeFilter((name: string) => (countryCodeOf(name) === undefined ? countryRule : undefined)))

const languageRule = "must be a language code of 2 or 3 letters (ISO 639-1 or 639-2), e.g. en"

export const SEARCH_DEPTHS = ["basic", "advanced", "fast", "ultra-fast"] as const
export const TIME_RANGES = ["day", "week", "month", "year", "d", "w", "m", "y"] as const

export const TavilySearchRequest = Schema.Struct({
  query: SearchBody.fields.keywords,
  /** A Periscope key; older clients send it here instead of Authorization: Bearer. */
  api_key: nullable(Schema.String, "must be a string"),
  search_depth: nullable(Schema.Literals(SEARCH_DEPTHS), "must be basic, advanced, fast or ultra-fast"),
  topic: nullable(Schema.Literals(["general", "news", "finance"]), "must be general, news or finance"),
  max_results: nullable(
    ruledNumber(`must be an integer from 0 to ${MAX_RESULTS}`, { integer: true, min: 0, max: MAX_RESULTS }),
    `must be an integer from 0 to ${MAX_RESULTS}`
  ),
  chunks_per_source: nullable(ruledNumber("must be an integer from 1 to 3", { integer: true, min: 1, max: 3 }), "must be an integer from 1 to 3"),
  time_range: nullable(Schema.Literals(TIME_RANGES), "must be day, week, month, year (or d, w, m, y)"),
  days: nullable(ruledNumber("must be an integer from 1 to 3650", { integer: true, min: 1, max: 3650 }), "must be an integer from 1 to 3650"),
  max_hours: nullable(ruledNumber("must be an integer from 1 to 87600", { integer: true, min: 1, max: 87_600 }), "must be an integer from 1 to 87600"),
  start_date: nullable(Day, dayRule),
  end_date: nullable(Day, dayRule),
  include_answer: nullable(either(["basic", "advanced"], "must be a boolean, basic or advanced"), "must be a boolean, basic or advanced"),
  include_raw_content: nullable(either(["markdown", "text"], "must be a boolean, markdown or text"), "must be a boolean, markdown or text"),
  include_images: flag,
  include_image_descriptions: flag,
  include_favicon: flag,
  include_domains: domains(MAX_INCLUDE_DOMAINS),
  exclude_domains: domains(MAX_EXCLUDE_DOMAINS),
  include_domains_mode: nullable(Schema.Literals(["restrict", "prefer"]), "must be restrict or prefer"),
  country: nullable(Country, countryRule),
  language: nullable(ruledString(languageRule).check(ruledPattern(/^[A-Za-z]{2,3}$/, languageRule)), languageRule),
  filter_by_language: flag,
  exact_match: flag,
  auto_parameters: flag,
  include_usage: flag,
  cache_fallback: flag,
  fetch_timeout: nullable(ruledNumber("must be a number of seconds from 1 to 60", { min: 1, max: 60 }), "must be a number of seconds from 1 to 60")
}).annotate({ message: "must be a JSON object with query and optional Tavily search options" }).check(
  Schema.makeFilter((body) =>
    typeof body.start_date === "string" && typeof body.end_date === "string" && body.end_date < body.start_date
      ? { path: ["end_date"], issue: "must not be before start_date" }
      : undefined)
).annotate({
  identifier: "TavilySearchRequest",
  description: "Tavily's search body. Unknown keys are refused (400 naming the key); null counts as left out."
})
export type TavilySearchRequest = typeof TavilySearchRequest.Type

const urlRule = `must be an absolute http(s) URL of at most ${MAX_URL_LENGTH} characters`
const Url = ruledString(urlRule).check(Schema.isMinLength(1, { message: urlRule }), Schema.isMaxLength(MAX_URL_LENGTH, { message: urlRule }))
const urlsRule = `must be a URL or an array of 1 to ${MAX_EXTRACT_URLS} URLs`

export const TavilyExtractRequest = Schema.Struct({
  urls: Schema.Union([
    Url,
    Schema.Array(Url).annotate({ message: urlsRule }).check(Schema.isMinLength(1, { message: urlsRule }), Schema.isMaxLength(MAX_EXTRACT_URLS, { message: urlsRule }))
  ]).annotate({ message: urlsRule }),
  api_key: nullable(Schema.String, "must be a string"),
  extract_depth: nullable(Schema.Literals(["basic", "advanced"]), "must be basic or advanced"),
  format: nullable(Schema.Literals(["markdown", "text"]), "must be markdown or text"),
  include_images: flag,
  include_favicon: flag,
  include_usage: flag,
  /** Seconds the whole extraction may take. */
  timeout: nullable(ruledNumber("must be a number of seconds from 1 to 60", { min: 1, max: 60 }), "must be a number of seconds from 1 to 60"),
  /** With query: each page's content is its passages most relevant to it. */
  query: nullable(SearchBody.fields.keywords, "must be a non-empty string of at most 1000 characters"),
  chunks_per_source: nullable(ruledNumber("must be an integer from 1 to 5", { integer: true, min: 1, max: 5 }), "must be an integer from 1 to 5")
}).annotate({
  identifier: "TavilyExtractRequest",
  message: "must be a JSON object with urls and optional format, extract_depth, include_images, timeout",
  description: "Tavily's extract body. Unknown keys are refused (400 naming the key); null counts as left out."
})
export type TavilyExtractRequest = typeof TavilyExtractRequest.Type

// ---------------------------------------------------------------------------
// Answers

const TavilyImage = Schema.Union([Schema.String, Schema.Struct({ url: Schema.String, description: Schema.String })])

export const TavilyResult = Schema.Struct({
  title: Schema.String,
  url: Schema.String,
  /** The snippet (basic), or the page's passages most relevant to the query (advanced). */
  content: Schema.String,
  /** From the rank: 1 for the first result, falling towards 0.5 for the last. */
  score: Schema.Number,
  /** The page's main content when include_raw_content asked for it and the page could be read; else null. */
  raw_content: Schema.NullOr(Schema.String),
  /** YYYY-MM-DD or a full timestamp; only when the page states a date. */
  published_date: optionalKey(Schema.String),
  /** Only with include_favicon: null, Periscope does not read favicons. */
  favicon: optionalKey(Schema.Null)
})

const Usage = Schema.Struct({ credits: Schema.Int })

export const TavilySearchResponse = Schema.Struct({
  query: Schema.String,
  /** With include_answer and a chat model configured: an answer from the results; else null. */
  answer: Schema.NullOr(Schema.String),
  /** Image URLs with include_images ({url, description} with include_image_descriptions). */
  images: Schema.Array(TavilyImage),
  results: Schema.Array(TavilyResult),
  follow_up_questions: Schema.Null,
  /** Seconds. */
  response_time: Schema.Number,
  request_id: Schema.String,
  usage: optionalKey(Usage),
  /** What could not be done as asked (no chat model for the answer, a page not read), when anything. */
  notes: optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "TavilySearchResponse" })
export type TavilySearchResponse = typeof TavilySearchResponse.Type

export const TavilyExtractResponse = Schema.Struct({
  results: Schema.Array(Schema.Struct({
    url: Schema.String,
    title: Schema.String,
    raw_content: Schema.String,
    images: Schema.Array(Schema.String),
    favicon: optionalKey(Schema.Null)
  })),
  failed_results: Schema.Array(Schema.Struct({ url: Schema.String, error: Schema.String })),
  response_time: Schema.Number,
  request_id: Schema.String,
  usage: optionalKey(Usage)
}).annotate({ identifier: "TavilyExtractResponse" })
export type TavilyExtractResponse = typeof TavilyExtractResponse.Type
