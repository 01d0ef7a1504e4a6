/**
 * A SearXNG search answered by FederatedSearch: categories general and news are the web search
 * (news: the last week unless time_range says otherwise), images the image search, both at once
 * when both are asked. `engines` selects sources by name; `pageno` pages through the fused list
 * ten at a time; time_range, language (en, en-US: language and region) and safesearch are the
 * search's options. With more than one source the search is asked with provenance, so each
 * result names the sources that found it and its ranks there, and a source that failed or is
 * suspended is listed in unresponsive_engines, as SearXNG lists its engines.
 */
import { Effect } from "effect"
import { type FederatedSearch, LOCAL_SOURCE } from "../../search/FederatedSearch.ts"
import type { ExplainExtra, SearchExtra, SourceReport } from "../../search/Provenance.ts"
import type { Freshness, SafeSearch, SearchQuery } from "../../search/SearchQuery.ts"
import type { ImageResult, WebResult } from "../../search/SearchResult.ts"
import { ApiError } from "../ApiError.ts"
import { fromFederationError } from "../DomainErrors.ts"
import { CATEGORIES, type Category, MAX_PAGE, PAGE_SIZE, type SearxngParams, type SearxngResponse, type SearxngResult } from "./SearxngWire.ts"

/** RRF's k (core/search/Fusion.ts): a first place in one source of weight 1 scores 1/(k+1), shown as 1. */
const RRF_K = 60

const SAFE: Readonly<Record<string, SafeSearch>> = { "0": "off", "1": "moderate", "2": "strict" }

/** SearXNG's words for an engine's failure (searx/webutils.py), by our reason. */
const failureText = (report: SourceReport): string => {
  const text = (() => {
    switch (report.error?.reason) {
      case "timeout":
        return "timeout"
      case "rate_limited":
        return "too many requests"
      case "blocked":
        return /captcha/i.test(report.error.message) ? "CAPTCHA" : "access denied"
      case "unauthorized":
        return "access denied"
      case "bad_response":
        return "parsing error"
      case "unavailable":
        return "HTTP error"
      default:
        return "unexpected crash"
    }
  })()
  return report.status === "suspended" ? `Suspended: ${text}` : text
}

/** The categories asked: `categories`, then `category_<name>` checkboxes (off removes); general when none. */
const categoriesOf = (params: SearxngParams): Set<Category> => {
  const chosen = new Set<Category>()
  for (const name of (params.categories ?? "").split(",")) {
    const c = name.trim()
    if ((CATEGORIES as ReadonlyArray<string>).includes(c)) chosen.add(c as Category)
  }
  for (const c of CATEGORIES) {
    const box = params[`category_${c}`]
    if (box === undefined) continue
    if (box === "off") chosen.delete(c)
    else chosen.add(c)
  }
  if (chosen.size === 0) chosen.add("general")
  return chosen
}

/** scheme://host path ?query #fragment: the links are already normal URLs, so a pattern splits them (a URL object per result cost more than the search's own mapping). */
const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/

/** [scheme, host, path, params, query, fragment], as Python's urlparse gives them. */
const parsedUrl = (link: string): Array<string> => {
  const m = URL_PARTS.exec(link)
  return m === null ? ["", "", link, "", "", ""] : [m[1]!.toLowerCase(), m[2]!, m[3]!, "", m[4] ?? "", m[5] ?? ""]
}

const hostOf = (link: string): string => URL_PARTS.exec(link)?.[2]?.replace(/^[^@]*@/, "").replace(/:\d+$/, "") ?? ""

const round4 = (x: number) => Math.round(x * 10_000) / 10_000

const explained = (extra: SearchExtra): ExplainExtra | undefined => (extra !== null && "sources" in extra ? extra : undefined)

/** Who found the hit at `index` of the fused list, its ranks there and its score. */
const provenanceOf = (extra: ExplainExtra | undefined, index: number, single: string) => {
  const report = extra?.results[index]
  if (report === undefined || report.sources.length === 0) {
    return { engines: [single], positions: [index + 1], score: round4((RRF_K + 1) / (RRF_K + index + 1)) }
  }
  const best = [...report.sources].sort((a, b) => a.rank - b.rank)
  return { engines: best.map((s) => s.source), positions: best.map((s) => s.rank), score: round4(report.score * (RRF_K + 1)) }
}

const webResult = (hit: WebResult, index: number, category: string, extra: ExplainExtra | undefined, single: string): SearxngResult => {
  const { engines, positions, score } = provenanceOf(extra, index, single)
  return {
    url: hit.link,
    title: hit.title,
    content: hit.snippet,
    publishedDate: hit.date,
    engine: engines[0]!,
    engines,
    positions,
    score,
    category,
    template: "default.html",
    parsed_url: parsedUrl(hit.link),
    img_src: "",
    thumbnail: "",
    priority: ""
  }
}

const imageResult = (image: ImageResult, index: number, extra: ExplainExtra | undefined, single: string): SearxngResult => {
  const { engines, positions, score } = provenanceOf(extra, index, single)
  return {
    url: image.refUrl,
    title: image.title,
    content: "",
    publishedDate: null,
    engine: engines[0]!,
    engines,
    positions,
    score,
    category: "images",
    template: "images.html",
    parsed_url: parsedUrl(image.refUrl),
    img_src: image.url,
    thumbnail: "",
    priority: "",
    thumbnail_src: image.url,
    resolution: image.width !== undefined && image.height !== undefined ? `${image.width} x ${image.height}` : "",
    img_format: "",
    source: hostOf(image.refUrl)
  }
}

const engineError = (message: string) => new ApiError({ kind: "invalid_request", message, param: "engines" })

/** The search a request asks for; an ApiError for an engine that names no source. */
const queryOf = (params: SearxngParams, news: boolean, sourceNames: ReadonlyArray<string>, explain: boolean): SearchQuery | ApiError => {
  const page = params.pageno === undefined ? 1 : Number(params.pageno)
  const window = params.time_range === undefined || params.time_range === "" || params.time_range === "None" ? undefined : params.time_range
  const freshness: Freshness | undefined = window ?? (news ? "week" : undefined)
  const language = params.language === undefined || params.language === "" || params.language === "all" || params.language === "auto" ? undefined : params.language
  const [lang, region] = language === undefined ? [] : language.split("-")
  let sources: Array<string> | undefined
  if (params.engines !== undefined && params.engines.trim() !== "") {
    sources = []
    for (const raw of params.engines.split(",")) {
      const name = raw.trim()
      if (name === "") continue
      if (!sourceNames.includes(name)) return engineError(`engines: names no configured source, got ${JSON.stringify(name)}; configured: ${sourceNames.join(", ")}`)
      if (!sources.includes(name)) sources.push(name)
    }
    if (sources.length === 0) sources = undefined
  }
  return {
    keywords: params.q.trim(),
    num: Math.min(MAX_PAGE * PAGE_SIZE, page * PAGE_SIZE),
    ...(freshness === undefined ? {} : { freshness }),
    ...(lang === undefined ? {} : { language: lang }),
    ...(region === undefined ? {} : { region: region.toUpperCase() }),
    ...(params.safesearch === undefined ? {} : { safeSearch: SAFE[params.safesearch]! }),
    ...(sources === undefined ? {} : { sources }),
    ...(explain ? { explain: true } : {})
  }
}

const unresponsive = (extras: ReadonlyArray<ExplainExtra | undefined>): Array<readonly [string, string]> => {
  const failed = new Map<string, string>()
  for (const extra of extras) {
    for (const report of extra?.sources ?? []) {
      if ((report.status === "failed" || report.status === "suspended") && !failed.has(report.name)) failed.set(report.name, failureText(report))
    }
  }
  return [...failed].sort((a, b) => a[0].localeCompare(b[0]))
}

export const makeSearxngSearch = (search: FederatedSearch["Service"]) => {
  // One source: every result is its; provenance would only cost time.
  const explain = search.sourceNames.length > 1
  const single = search.sourceNames[0] ?? LOCAL_SOURCE

  return (params: SearxngParams): Effect.Effect<SearxngResponse, ApiError> => {
    const categories = categoriesOf(params)
    const web = categories.has("general") || categories.has("news")
    const category = categories.has("general") ? "general" : "news"
    const page = params.pageno === undefined ? 1 : Number(params.pageno)
    const from = (page - 1) * PAGE_SIZE
    const query = queryOf(params, category === "news" && web, search.sourceNames, explain)
    if (query instanceof ApiError) return Effect.fail(query)
    const respond = (results: Array<SearxngResult>, extras: ReadonlyArray<ExplainExtra | undefined>, corrected?: string): SearxngResponse => ({
      query: query.keywords,
      number_of_results: results.length,
      results,
      answers: [],
      corrections: corrected === undefined ? [] : [corrected],
      infoboxes: [],
      suggestions: [],
      unresponsive_engines: unresponsive(extras)
    })
    const webPage = Effect.map(Effect.mapError(search.web(query), fromFederationError), ({ data, extra }) => {
      const info = explained(extra)
      return {
        results: data.organic.slice(from, from + PAGE_SIZE).map((hit, i) => webResult(hit, from + i, category, info, single)),
        extra: info,
        // The local index's Did you mean: the corrected query, as SearXNG lists corrections.
        corrected: extra !== null && "corrections" in extra ? extra.corrections?.query : undefined
      }
    })
    if (!categories.has("images")) return Effect.map(webPage, ({ results, extra, corrected }) => respond(results, [extra], corrected))
    const imagePage = Effect.map(Effect.mapError(search.images(query), fromFederationError), ({ data, extra }) => {
      const info = explained(extra)
      return { results: data.slice(from, from + PAGE_SIZE).map((image, i) => imageResult(image, from + i, info, single)), extra: info }
    })
    if (!web) return Effect.map(imagePage, ({ results, extra }) => respond(results, [extra]))
    return Effect.map(
      Effect.all([webPage, imagePage], { concurrency: "unbounded" }),
      ([w, i]) => respond([...w.results, ...i.results], [w.extra, i.extra], w.corrected)
    )
  }
}
