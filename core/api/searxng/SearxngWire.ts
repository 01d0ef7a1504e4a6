/**
 * SearXNG's search API as its callers use it (Open WebUI, LangChain's SearxSearchWrapper,
 * scripts): GET /searxng/search?q=...&format=json, or the same parameters as a POST form.
 * A parameter given twice counts once, its first value (as SearXNG's Flask reads it); a POST
 * form's values win over the query string's. The answer is SearXNG's JSON; errors are its
 * `{"error": "..."}`. Parameters of SearXNG's that only shape its HTML pages (theme,
 * image_proxy, ...) are accepted and change nothing; any other unknown one is refused, named.
 */
import { Schema } from "effect"
import { ruledPattern, ruledString } from "../../schema/Rules.ts"
import { MAX_KEYWORDS_LENGTH } from "../SearchWire.ts"

/** A form body holds a query and a few options. */
export const SEARXNG_BODY_LIMIT = 64 * 1024

/** Results per page, as a SearXNG engine's page; `pageno` reaches as far as 100 results. */
export const PAGE_SIZE = 10
export const MAX_PAGE = 10

export const CATEGORIES = ["general", "images", "news"] as const
export type Category = typeof CATEGORIES[number]

const { optionalKey } = Schema

const queryRule = `must be a non-empty search query of at most ${MAX_KEYWORDS_LENGTH} characters`
const Query = ruledString(queryRule).check(
  Schema.makeFilter((q: string) => {
    const length = q.trim().length
    return length >= 1 && length <= MAX_KEYWORDS_LENGTH ? undefined : queryRule
  }, { toJsonSchema: () => ({ minLength: 1, maxLength: MAX_KEYWORDS_LENGTH, pattern: "\\S" }) })
).annotate({ messageMissingKey: "is required: the search query" })

const categoriesRule = `must be a comma-separated list of ${CATEGORIES.join(", ")}`
const Categories = ruledString(categoriesRule).check(
  Schema.makeFilter((value: string) =>
    value.split(",").map((c) => c.trim()).every((c) => c === "" || (CATEGORIES as ReadonlyArray<string>).includes(c)) ? undefined : categoriesRule)
)

const languageRule = "must be all, auto or a language code such as en or en-US"
const pagenoRule = `must be an integer from 1 to ${MAX_PAGE}`
const engineListRule = "must be a comma-separated list of source names"

/** Parameters of SearXNG's own pages and preferences: accepted, no effect on a JSON answer. */
export const PAGE_PREFERENCES = [
  "theme", "image_proxy", "results_on_new_tab", "autocomplete", "locale", "method", "doi_resolver", "favicon_resolver",
  "simple_style", "center_alignment", "query_in_title", "infinite_scroll", "search_on_category_select", "hotkeys",
  "url_formatting", "enabled_plugins", "disabled_plugins"
] as const

const preferenceFields = Object.fromEntries(PAGE_PREFERENCES.map((name) => [name, optionalKey(Schema.String)])) as {
  readonly [K in typeof PAGE_PREFERENCES[number]]: Schema.optionalKey<Schema.String>
}

const onOff = optionalKey(Schema.String.annotate({ description: "SearXNG's form checkbox: off leaves the category out, any other value adds it" }))

export const SearxngParams = Schema.Struct({
  q: Query.annotate({ description: "The search query (site: and -site: words narrow it to sites)." }),
  format: optionalKey(Schema.Literal("json").annotate({ message: "must be json, the one format this server answers" })),
  categories: optionalKey(Categories.annotate({ description: `${categoriesRule}; default general. news: general results of the last week unless time_range says otherwise.` })),
  category_general: onOff,
  category_images: onOff,
  category_news: onOff,
  engines: optionalKey(ruledString(engineListRule).annotate({ description: "Comma-separated source names (local and the configured providers); default all." })),
  language: optionalKey(ruledString(languageRule).check(ruledPattern(/^(?:|all|auto|[a-z]{2,3}(?:-[a-zA-Z]{2})?)$/, languageRule))),
  pageno: optionalKey(ruledString(pagenoRule).check(ruledPattern(/^(?:[1-9]|10)$/, pagenoRule)).annotate({ description: `${pagenoRule}; ${PAGE_SIZE} results a page` })),
  time_range: optionalKey(Schema.Literals(["", "None", "day", "week", "month", "year"]).annotate({ message: "must be day, week, month or year" })),
  safesearch: optionalKey(Schema.Literals(["0", "1", "2"]).annotate({ message: "must be 0, 1 or 2" })),
  ...preferenceFields
}).annotate({
  identifier: "SearxngSearchParameters",
  message: "must be SearXNG's search parameters",
  description: "SearXNG's search parameters. Unknown ones are refused (400 naming the parameter)."
})
export type SearxngParams = typeof SearxngParams.Type

/** The parameters of a query string and (for a POST) a form body: each name's first value, the form's first. */
export const paramsOf = (query: string, form: string | undefined): Record<string, string> => {
  const params: Record<string, string> = {}
  const take = (text: string) => {
    for (const [name, value] of new URLSearchParams(text)) if (!(name in params)) params[name] = value
  }
  if (form !== undefined) take(form)
  take(query)
  return params
}

// ---------------------------------------------------------------------------
// The answer

export const SearxngResult = Schema.Struct({
  url: Schema.String,
  title: Schema.String,
  content: Schema.String,
  /** ISO 8601 when the page states a date, else null. */
  publishedDate: Schema.NullOr(Schema.String),
  /** The source that ranked it highest (local, or a configured provider's name). */
  engine: Schema.String,
  engines: Schema.Array(Schema.String),
  /** Its rank in each of those sources' lists. */
  positions: Schema.Array(Schema.Int),
  /** The fused reciprocal-rank score, scaled so a first place in one source scores 1; higher ranks first. */
  score: Schema.Number,
  category: Schema.String,
  template: Schema.String,
  /** [scheme, host, path, params, query, fragment], as Python's urlparse gives them. */
  parsed_url: Schema.Array(Schema.String),
  img_src: Schema.String,
  thumbnail: Schema.String,
  priority: Schema.String,
  /** Images only. */
  thumbnail_src: optionalKey(Schema.String),
  resolution: optionalKey(Schema.String),
  img_format: optionalKey(Schema.String),
  source: optionalKey(Schema.String)
})
export type SearxngResult = typeof SearxngResult.Type

export const SearxngResponse = Schema.Struct({
  query: Schema.String,
  /** The results on this page. */
  number_of_results: Schema.Int,
  results: Schema.Array(SearxngResult),
  answers: Schema.Array(Schema.Unknown),
  corrections: Schema.Array(Schema.String),
  infoboxes: Schema.Array(Schema.Unknown),
  suggestions: Schema.Array(Schema.String),
  /** [source, what went wrong] for each source that failed or was suspended. */
  unresponsive_engines: Schema.Array(Schema.Tuple([Schema.String, Schema.String]))
}).annotate({ identifier: "SearxngResponse" })
export type SearxngResponse = typeof SearxngResponse.Type
