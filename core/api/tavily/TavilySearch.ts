/**
 * POST /tavily/search over the services the REST API uses: the search through FederatedSearch
 * (the local index and the live providers, fused), pages through WebFetch (TavilyPages), the
 * answer through the chat gateway's grounding. What each Tavily option does here:
 * - max_results: how many results (0: none, only the answer);
 * - include_domains / exclude_domains: the search's includeDomains / excludeDomains (each
 *   source asked in its own terms, the results checked by host on our side);
 *   include_domains_mode prefer: those sites ranked first, the others kept;
 * - time_range, days, max_hours, start_date/end_date: the search's freshness; topic news with
 *   none of them: the last week (news means recent); finance searches as general;
 * - search_depth basic (and fast, ultra-fast): each result's content is its snippet;
 *   advanced: every result's page is read and its content is the `chunks_per_source` passages
 *   most relevant to the query (Chunks, over the shared Highlights);
 * - include_raw_content: each page's main content (Markdown or text), read under one deadline
 *   (fetch_timeout, default 10 s); a page not read has raw_content null and a note says so;
 * - include_answer: grounded chat with the server's default model, kept to include_domains;
 *   null with a note when no model is configured or it fails;
 * - include_images: an image search with the same query; country: the search's region;
 *   language: its language; exact_match: the query as one phrase.
 * A request with none of the page, answer or image options is one search and one mapping, as
 * fast as webSearch (test/bench/wires.ts).
 */
import { Clock, Effect } from "effect"
import type { ChatGateway } from "../../chat/ChatGateway.ts"
import { type ChatCompletionRequest, toChatRequest } from "../../chat/ChatRequest.ts"
import type { SiteFilter } from "../../index/QueryParser.ts"
import { type DomainFilter, onAnySite, passesDomainFilter, sitesOf, siteWord } from "../../search/DomainFilter.ts"
import type { FederatedSearch } from "../../search/FederatedSearch.ts"
import { highlightQuery } from "../../search/Highlights.ts"
import { dayOf } from "../../search/PublishedDate.ts"
import type { Freshness, SearchQuery } from "../../search/SearchQuery.ts"
import type { ImageResult, WebResult } from "../../search/SearchResult.ts"
import type { ApiError } from "../ApiError.ts"
import { fromFederationError } from "../DomainErrors.ts"
import { countryCodeOf } from "./Countries.ts"
import { chunksOf } from "./Chunks.ts"
import { plainText } from "../../search/MarkdownText.ts"
import { isRead, type PageOutcome, type PageReader } from "./TavilyPages.ts"
import { DEFAULT_MAX_RESULTS, type TavilySearchRequest, type TavilySearchResponse } from "./TavilyWire.ts"

const DAY_MS = 86_400_000
const DEFAULT_FETCH_TIMEOUT_MS = 10_000
const DEFAULT_CHUNKS = 3
/** With a domain filter on our side the sources are asked for more, so enough pass it. */
const OVERFETCH = 3

type Depth = "basic" | "advanced"

/** What one Tavily search asks for, in the terms of our services. */
interface SearchPlan {
  /** Undefined: max_results 0, nothing to search for results. */
  readonly query: SearchQuery | undefined
  readonly keywords: string
  readonly filter: DomainFilter
  readonly prefer: ReadonlyArray<SiteFilter>
  readonly maxResults: number
  readonly depth: Depth
  readonly chunks: number
  readonly raw: "markdown" | "text" | undefined
  readonly answer: Depth | undefined
  readonly images: boolean
  readonly notes: Array<string>
}

const TIME_RANGE = { d: "day", w: "week", m: "month", y: "year", day: "day", week: "week", month: "month", year: "year" } as const

/** The search's freshness from Tavily's date options, a relative window counted back from `nowMs`. */
const freshnessOf = (r: TavilySearchRequest, nowMs: number): Freshness | undefined => {
  const today = dayOf(nowMs)
  if (typeof r.start_date === "string" || typeof r.end_date === "string") {
    const from = r.start_date ?? "0001-01-01"
    const to = r.end_date ?? (today < from ? from : today)
    return { from, to }
  }
  if (typeof r.time_range === "string") return TIME_RANGE[r.time_range]
  if (typeof r.days === "number") return { from: dayOf(nowMs - r.days * DAY_MS), to: today }
  if (typeof r.max_hours === "number") return r.max_hours <= 24 ? "day" : { from: dayOf(nowMs - Math.ceil(r.max_hours / 24) * DAY_MS), to: today }
  return r.topic === "news" ? "week" : undefined
}

const depthOf = (r: TavilySearchRequest): Depth => (r.search_depth === "advanced" ? "advanced" : "basic")

const planOf = (r: TavilySearchRequest, nowMs: number): SearchPlan => {
  const notes: Array<string> = []
  const maxResults = r.max_results ?? DEFAULT_MAX_RESULTS
  const prefer = r.include_domains_mode === "prefer"
  const include = sitesOf(r.include_domains ?? [])
  const filter: DomainFilter = { include: prefer ? [] : include, exclude: sitesOf(r.exclude_domains ?? []) }
  const phrase = r.query.trim()
  const base = r.exact_match === true ? `"${phrase.replace(/"/g, " ").trim()}"` : phrase
  const keywords = base
  const filtered = filter.include.length > 0 || filter.exclude.length > 0 || (prefer && include.length > 0)
  const freshness = freshnessOf(r, nowMs)
  const region = typeof r.country === "string" ? countryCodeOf(r.country) : undefined
  const query: SearchQuery | undefined = maxResults === 0 ? undefined : {
    keywords,
    num: filtered ? Math.min(100, maxResults * OVERFETCH) : maxResults,
    ...(filter.include.length === 0 ? {} : { includeDomains: filter.include.map(siteWord) }),
    ...(filter.exclude.length === 0 ? {} : { excludeDomains: filter.exclude.map(siteWord) }),
    ...(freshness === undefined ? {} : { freshness }),
    ...(region === undefined ? {} : { region }),
    ...(typeof r.language === "string" ? { language: r.language.toLowerCase() } : {})
  }
  if (r.topic === "finance") notes.push("topic finance: searched as general (no finance source is configured)")
  if (r.filter_by_language === true) notes.push("filter_by_language: results are not filtered by language; language goes to the sources that take one")
  if (r.auto_parameters === true) notes.push("auto_parameters: the search ran with the parameters as sent")
  const raw = r.include_raw_content === true ? "markdown" : r.include_raw_content === false || r.include_raw_content == null ? undefined : r.include_raw_content
  const answer = r.include_answer === true ? "basic" : r.include_answer === false || r.include_answer == null ? undefined : r.include_answer
  return {
    query,
    keywords,
    filter,
    prefer: prefer ? include : [],
    maxResults,
    depth: depthOf(r),
    chunks: r.chunks_per_source ?? DEFAULT_CHUNKS,
    raw,
    answer,
    images: r.include_images === true,
    notes
  }
}

/** From the rank: 1 for the first result, down towards 0.5 for the last. */
const scoreOf = (index: number, count: number) => Math.round((1 - index / (2 * count)) * 10_000) / 10_000

/** The results a filter keeps, preferred sites first, at most `max`. */
const selectResults = (organic: ReadonlyArray<WebResult>, plan: SearchPlan): Array<WebResult> => {
  const kept = organic.filter((r) => passesDomainFilter(r.link, plan.filter))
  const ordered = plan.prefer.length === 0
    ? kept
    : [...kept.filter((r) => onAnySite(r.link, plan.prefer)), ...kept.filter((r) => !onAnySite(r.link, plan.prefer))]
  return ordered.slice(0, plan.maxResults)
}

type Result = TavilySearchResponse["results"][number]

const resultOf = (r: WebResult, index: number, count: number, content: string, raw: string | null, favicon: boolean): Result => ({
  title: r.title,
  url: r.link,
  content,
  score: scoreOf(index, count),
  raw_content: raw,
  ...(r.date === null ? {} : { published_date: r.date }),
  ...(favicon ? { favicon: null } : {})
})

export interface TavilySearchServices {
  readonly search: FederatedSearch["Service"]
  readonly pages: PageReader
  readonly chat: ChatGateway["Service"]
  /** Whether a chat model is configured (else include_answer is answered null with a note). */
  readonly hasModel: boolean
}

/** The answer's request: grounded chat with the default model, its search kept to include_domains. */
const answerRequest = (chat: ChatGateway["Service"], plan: SearchPlan, question: string) => {
  const body: ChatCompletionRequest = {
    messages: [{ role: "user", content: question }],
    max_tokens: plan.answer === "advanced" ? 1024 : 320,
    temperature: 0.2
  }
  const hosts = plan.filter.include.map((site) => site.host)
  return {
    ...toChatRequest(body, chat.defaultModel),
    web_search_options: {
      search_context_size: plan.answer === "advanced" ? "high" as const : "low" as const,
      ...(hosts.length === 0 ? {} : { allowed_domains: hosts })
    }
  }
}

export const makeTavilySearch = (services: TavilySearchServices) => {
  const { search, pages, chat, hasModel } = services

  const answerOf = (plan: SearchPlan, question: string): Effect.Effect<{ readonly answer: string | null; readonly note?: string }> => {
    if (plan.answer === undefined) return Effect.succeed({ answer: null })
    if (!hasModel) return Effect.succeed({ answer: null, note: "include_answer: no chat model is configured on this server, so answer is null" })
    return chat.complete(answerRequest(chat, plan, question)).pipe(
      Effect.map((result) => {
        const content = result.choices[0]?.message.content
        return typeof content === "string" && content.trim() !== ""
          ? { answer: content }
          : { answer: null, note: "include_answer: the model gave no answer" }
      }),
      Effect.catchTag("ChatModelError", (error) => Effect.succeed({ answer: null, note: `include_answer: no answer could be made (${error.message})` }))
    )
  }

  const imagesOf = (plan: SearchPlan): Effect.Effect<{ readonly images: ReadonlyArray<ImageResult>; readonly note?: string }> => {
    if (!plan.images) return Effect.succeed({ images: [] })
    return search.images({
      keywords: plan.keywords,
      num: Math.min(20, Math.max(plan.maxResults, DEFAULT_MAX_RESULTS)),
      ...(plan.query?.includeDomains === undefined ? {} : { includeDomains: plan.query.includeDomains }),
      ...(plan.query?.excludeDomains === undefined ? {} : { excludeDomains: plan.query.excludeDomains })
    }).pipe(
      Effect.map(({ data }) => ({ images: data.filter((image) => passesDomainFilter(image.refUrl, plan.filter)) })),
      Effect.catch((error) => Effect.succeed({ images: [], note: `include_images: the image search failed (${error.message})` }))
    )
  }

  /** The results with their content: snippets, or read pages for advanced depth and raw content. */
  const resultsOf = (plan: SearchPlan, question: string, favicon: boolean, fetchTimeoutMs: number): Effect.Effect<Array<Result>, ApiError> => {
    if (plan.query === undefined) return Effect.succeed([])
    const found = Effect.mapError(search.web(plan.query), fromFederationError)
    if (plan.depth === "basic" && plan.raw === undefined) {
      return Effect.map(found, ({ data }) => {
        const chosen = selectResults(data.organic, plan)
        return chosen.map((r, i) => resultOf(r, i, chosen.length, r.snippet, null, favicon))
      })
    }
    return Effect.flatMap(found, ({ data }) => {
      const chosen = selectResults(data.organic, plan)
      const format = plan.raw ?? "text"
      const chunkQuery = highlightQuery(question)
      return Effect.map(pages.readAll(chosen.map((r) => r.link), format, fetchTimeoutMs, true), (outcomes: ReadonlyArray<PageOutcome>) => {
        const unread = outcomes.filter((o) => !isRead(o)).length
        if (unread > 0) plan.notes.push(`${unread} of ${chosen.length} pages could not be read; their ${plan.raw === undefined ? "content is the snippet" : "raw_content is null"}`)
        return chosen.map((r, i) => {
          const outcome = outcomes[i]!
          const page = isRead(outcome) && outcome.content.trim() !== "" ? outcome.content : undefined
          const content = plan.depth === "advanced" && page !== undefined
            ? chunksOf(format === "markdown" ? plainText(page) : page, chunkQuery, plan.chunks) || r.snippet
            : r.snippet
          return resultOf(r, i, chosen.length, content, page ?? null, favicon)
        })
      })
    })
  }

  return (request: TavilySearchRequest): Effect.Effect<TavilySearchResponse, ApiError> => {
    const started = performance.now()
    const question = request.query.trim()
    const favicon = request.include_favicon === true
    const fetchTimeoutMs = request.fetch_timeout == null ? DEFAULT_FETCH_TIMEOUT_MS : request.fetch_timeout * 1000
    const respond = (plan: SearchPlan, results: ReadonlyArray<Result>, answer: string | null, images: ReadonlyArray<ImageResult>): TavilySearchResponse => ({
      query: question,
      answer,
      images: request.include_image_descriptions === true ? images.map((image) => ({ url: image.url, description: image.title })) : images.map((image) => image.url),
      results,
      follow_up_questions: null,
      response_time: Math.round(performance.now() - started) / 1000,
      request_id: crypto.randomUUID(),
      ...(request.include_usage === true ? { usage: { credits: 1 } } : {}),
      ...(plan.notes.length === 0 ? {} : { notes: plan.notes })
    })
    return Effect.flatMap(Effect.map(Clock.currentTimeMillis, (now) => planOf(request, now)), (plan) => {
      const results = resultsOf(plan, question, favicon, fetchTimeoutMs)
      if (plan.answer === undefined && !plan.images) return Effect.map(results, (r) => respond(plan, r, null, []))
      return Effect.map(
        Effect.all([results, answerOf(plan, question), imagesOf(plan)], { concurrency: "unbounded" }),
        ([r, answered, imaged]) => {
          if (answered.note !== undefined) plan.notes.push(answered.note)
          if (imaged.note !== undefined) plan.notes.push(imaged.note)
          return respond(plan, r, answered.answer, imaged.images)
        }
      )
    })
  }
}
