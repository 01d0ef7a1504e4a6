/**
 * Retrieval for grounded chat: the configured web search (FederatedSearch: the local index
 * fused with the upstream providers) asked once per request, the sources chosen by
 * `selectSources`, and for medium and high context the top pages read. A page the local
 * index holds is read from its stored text (StoredPages); only a page a live provider listed
 * is fetched through WebFetch, so a server with no provider never leaves the machine. The
 * model is given a read page's passages most relevant to the query (Highlights), or the page
 * whole when it fits. The whole retrieval has one deadline: a page not read by then keeps its
 * snippet, a search not answered by then leaves the model without sources (and says so). It
 * never fails the request: a failed search is reported in the answer's `periscope_grounding`.
 *
 * The request's controls go to the search: allowed domains (includeDomains: each source asked
 * in its own terms, hits elsewhere left out), recency (freshness), max_results, and the web
 * plugin's engine (one configured source); with `expand` set, the local index expands the search
 * made from the user's message.
 *
 * It also runs the server tools (web_search, web_fetch) the model calls; their results are
 * numbered in the same registry, so citations of them are verified the same way. A web_search
 * call may narrow its search (domains, freshness) within what the request allows.
 * Interrupting any of it (the client went away) interrupts the search and the fetches.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { passesDomainFilter, siteOf, sitesOf } from "../search/DomainFilter.ts"
import { FederatedSearch, LOCAL_SOURCE } from "../search/FederatedSearch.ts"
import { highlightQuery, type HighlightQuery, highlights } from "../search/Highlights.ts"
import type { FreshnessWindow } from "../search/SearchQuery.ts"
import { StoredPages } from "../search/StoredPages.ts"
import { WebFetch } from "../search/WebFetch.ts"
import type { GroundingOptions, GroundingSource, SearchContextSize, WebSearchOptions } from "./ChatRequest.ts"
import { DEFAULT_FETCH_TOP_PAGES, DEFAULT_MAX_RESULTS, formatSource, selectSources, type SourceHit, type SourceRegistry } from "./GroundingSources.ts"

export interface GroundingSettings {
  /** Used when a grounded request names no search_context_size. */
  readonly contextSize: SearchContextSize
  readonly maxResults: Readonly<Record<SearchContextSize, number>>
  /** Top pages read whole per size (0: snippets only). */
  readonly fetchTopPages: Readonly<Record<SearchContextSize, number>>
  /** Characters of a read page the model is given. */
  readonly pageChars: number
  /** The whole retrieval (search and page reads). */
  readonly deadlineMs: number
  /** Rounds of server tool calls before the gateway stops the loop. */
  readonly maxToolRounds: number
  /** Offer web_search and web_fetch to the model on every request. */
  readonly serverTools: boolean
  /** Expand the search made from the user's message (the local index's query expansion, webSearch's `expand`). */
  readonly expand: boolean
}

export const defaultGroundingSettings: GroundingSettings = {
  contextSize: "medium",
  maxResults: DEFAULT_MAX_RESULTS,
  fetchTopPages: DEFAULT_FETCH_TOP_PAGES,
  pageChars: 4_000,
  deadlineMs: 8_000,
  maxToolRounds: 3,
  serverTools: false,
  expand: false
}

/** How the retrieval went, shown in `periscope_grounding.retrieval`. */
export type RetrievalStatus = "ok" | "no_results" | "timeout" | "failed"

export interface Retrieval {
  readonly query: string
  readonly size: SearchContextSize
  readonly status: RetrievalStatus
  /** Why search failed or timed out, for the note. */
  readonly detail?: string
  /** Pages read whole (the others were given as snippets). */
  readonly pagesRead: number
}

const MAX_QUERY = 400
/** Results a web_search tool call returns to the model. */
const TOOL_RESULTS = 5
/** Characters of a page its highlights are chosen from. */
const PAGE_SOURCE_CHARS = 100_000

/** What a web_search call asks beyond its query: the model's own narrowing of the search. */
export interface ToolSearch {
  /** Only these sites (within the ones the request allows). */
  readonly allowedDomains?: ReadonlyArray<string>
  /** None of these sites. */
  readonly blockedDomains?: ReadonlyArray<string>
  readonly freshness?: FreshnessWindow
}

export class Grounding extends Context.Service<Grounding, {
  readonly settings: GroundingSettings
  /**
   * Searches for the query and numbers the chosen sources in `registry`. Never fails.
   * Allowed domains (allowed_domains, filters.allowed_domains) keep the search to those sites,
   * search_recency_filter to recent pages, max_results sets how many sources; engine names
   * the one source to search.
   */
  retrieve(query: string, size: SearchContextSize, options: GroundingOptions | undefined, registry: SourceRegistry): Effect.Effect<Retrieval>
  /**
   * The text a web_search call returns to the model (sources numbered in `registry`): `narrow`
   * is what the call asked, kept within the request's `options` (its allowed domains bound the
   * call's; its recency and engine apply unless the call gives its own freshness).
   */
  webSearch(query: string, registry: SourceRegistry, narrow?: ToolSearch, options?: GroundingOptions): Effect.Effect<string>
  /** The text a web_fetch call returns to the model; the page is numbered in `registry`. */
  webFetch(url: string, registry: SourceRegistry): Effect.Effect<string>
}>()("periscope/chat/Grounding") {
  /**
   * Over FederatedSearch. Pages are read from StoredPages (the local index) and fetched through
   * WebFetch when those services are there; without them the sources are snippets.
   */
  static readonly layer = (settings: GroundingSettings = defaultGroundingSettings): Layer.Layer<Grounding, never, FederatedSearch> =>
    Layer.effect(
      Grounding,
      Effect.gen(function*() {
        const search = yield* FederatedSearch
        const fetcher = yield* Effect.serviceOption(WebFetch)
        const stored = yield* Effect.serviceOption(StoredPages)
        return makeGrounding(settings, search, Option.getOrUndefined(fetcher), Option.getOrUndefined(stored))
      })
    )
}

const regionOf = (options: WebSearchOptions | undefined): string | undefined => {
  const country = options?.user_location?.approximate.country
  return country !== undefined && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : undefined
}

type SearchRequest = Parameters<FederatedSearch["Service"]["web"]>[0]

/** The domains a request keeps its search to: the wire's allowed_domains and OpenAI's filters.allowed_domains together. */
export const allowedDomainsOf = (options: GroundingOptions | undefined): ReadonlyArray<string> => {
  const listed = [...(options?.allowed_domains ?? []), ...(options?.filters?.allowed_domains ?? [])]
  return [...new Set(listed.map((d) => d.trim().toLowerCase()).filter((d) => d !== ""))]
}

/** Whether `domain` lies within one of `allowed` (the same site, a subdomain of it, a path under it). */
const within = (domain: string, allowed: ReadonlyArray<string>): boolean => {
  const site = siteOf(domain)
  return site !== undefined && passesDomainFilter(`https://${site.host}${site.path}/`, { include: sitesOf(allowed), exclude: [] })
}

/** A search hit, and whether a live provider listed it (else only the local index did). */
interface FoundHit extends SourceHit {
  readonly live: boolean
}

/** A page's text for the model. */
interface PageText {
  readonly title: string
  readonly content: string
  readonly date: string | null
}

const makeGrounding = (
  settings: GroundingSettings,
  search: FederatedSearch["Service"],
  fetcher: WebFetch["Service"] | undefined,
  stored: StoredPages["Service"] | undefined
): Grounding["Service"] => {
  /** The search's sources: the web plugin's engine when it names one of them, else all; a note when it names none. */
  const sourcesOf = (options: GroundingOptions | undefined): { readonly sources?: ReadonlyArray<string>; readonly note?: string } => {
    const engine = options?.engine
    if (engine === undefined || engine === "native") return {}
    if (search.sourceNames.includes(engine)) return { sources: [engine] }
    return { note: `engine ${engine} is not a search source here (${search.sourceNames.join(", ")}); every source was searched` }
  }

  /** The hits in rank order; the answer's provenance (explain) says which sources listed each. */
  const searchHits = (query: SearchRequest) =>
    Effect.map(search.web({ ...query, explain: true }), (answer): ReadonlyArray<FoundHit> => {
      const results = answer.extra !== null && "results" in answer.extra ? answer.extra.results : []
      return answer.data.organic.map((hit, i) => ({
        title: hit.title,
        link: hit.link,
        snippet: hit.snippet,
        date: hit.date,
        live: results[i]?.sources.some((s) => s.source !== LOCAL_SOURCE) ?? false
      }))
    })

  /** The local index's copy of a page (its first `chars`), or undefined when it has none. */
  const storedPage = (url: string, chars: number): Effect.Effect<PageText | undefined> =>
    stored === undefined
      ? Effect.succeed(undefined)
      : Effect.map(stored.page(url, chars), (page) => page === undefined ? undefined : { title: page.title, content: page.text, date: page.date })

  /** A page fetched from the web as text, or undefined when it could not be read in time. */
  const fetchPage = (url: string, timeoutMs: number): Effect.Effect<PageText | undefined> =>
    fetcher === undefined || timeoutMs <= 0
      ? Effect.succeed(undefined)
      : fetcher.fetch({ url, format: "text", maxChars: PAGE_SOURCE_CHARS }).pipe(
        Effect.timeoutOption(timeoutMs),
        Effect.map(Option.getOrUndefined),
        Effect.catch(() => Effect.succeed(undefined))
      )

  /** A hit's page as the model reads it, its highlights for the query: from the local index when it holds it; fetched only when a live provider listed it. */
  const readPage = (hit: FoundHit, timeoutMs: number, query: HighlightQuery): Effect.Effect<PageText | undefined> =>
    Effect.map(
      Effect.flatMap(storedPage(hit.link, PAGE_SOURCE_CHARS), (page) => page !== undefined || !hit.live ? Effect.succeed(page) : fetchPage(hit.link, timeoutMs)),
      (page) => page === undefined ? undefined : { ...page, content: highlights(page.content, query, { maxChars: settings.pageChars }) }
    )

  const retrieve = Effect.fn("Grounding.retrieve")(function*(
    query: string,
    size: SearchContextSize,
    options: GroundingOptions | undefined,
    registry: SourceRegistry
  ): Effect.fn.Return<Retrieval> {
    const started = yield* Clock.currentTimeMillis
    const count = options?.max_results ?? settings.maxResults[size]
    const region = regionOf(options)
    const domains = allowedDomainsOf(options)
    const { sources, note } = sourcesOf(options)
    // More hits when some may be filtered out: a source that could not apply the domains answers for any site.
    const num = Math.min(100, count * (domains.length === 0 ? 2 : 4))
    const found = yield* searchHits({
      keywords: query.slice(0, MAX_QUERY),
      num,
      ...(region === undefined ? {} : { region }),
      ...(domains.length === 0 ? {} : { includeDomains: domains }),
      ...(options?.search_recency_filter === undefined ? {} : { freshness: options.search_recency_filter }),
      ...(sources === undefined ? {} : { sources }),
      ...(settings.expand ? { expand: true } : {})
    }).pipe(
      Effect.timeoutOption(settings.deadlineMs),
      Effect.result
    )
    if (found._tag === "Failure") return { query, size, status: "failed", detail: found.failure.message, pagesRead: 0 }
    if (found.success._tag === "None") return { query, size, status: "timeout", detail: `no search answer within ${settings.deadlineMs} ms`, pagesRead: 0 }
    const chosen = selectSources(found.success.value, count)
    if (chosen.length === 0) return { query, size, status: "no_results", ...(note === undefined ? {} : { detail: note }), pagesRead: 0 }
    const left = settings.deadlineMs - ((yield* Clock.currentTimeMillis) - started)
    const reads = Math.min(settings.fetchTopPages[size], chosen.length)
    const wanted = highlightQuery(query.slice(0, MAX_QUERY))
    const texts = yield* Effect.forEach(chosen.slice(0, reads), (hit) => readPage(hit, left, wanted), { concurrency: "unbounded" })
    let pagesRead = 0
    chosen.forEach((hit, i) => {
      const page = texts[i]
      if (page !== undefined && page.content.trim() !== "") pagesRead++
      registry.add(
        { title: hit.title || (page?.title ?? ""), link: hit.link, snippet: hit.snippet, date: hit.date ?? page?.date ?? null },
        page !== undefined && page.content.trim() !== "" ? page.content : undefined
      )
    })
    return { query, size, status: "ok", ...(note === undefined ? {} : { detail: note }), pagesRead }
  })

  const webSearch = Effect.fn("Grounding.webSearch")(function*(
    query: string,
    registry: SourceRegistry,
    narrow: ToolSearch = {},
    options?: GroundingOptions
  ): Effect.fn.Return<string> {
    const q = query.replace(/\s+/g, " ").trim().slice(0, MAX_QUERY)
    if (q === "") return "web_search needs a non-empty query."
    const allowed = allowedDomainsOf(options)
    let include = allowed
    if (narrow.allowedDomains !== undefined && narrow.allowedDomains.length > 0) {
      include = allowed.length === 0 ? narrow.allowedDomains : narrow.allowedDomains.filter((d) => within(d, allowed))
      if (include.length === 0) return `allowed_domains: none of these is among the sites this conversation may search (${allowed.join(", ")}).`
    }
    const exclude = narrow.blockedDomains ?? []
    const freshness = narrow.freshness ?? options?.search_recency_filter
    const { sources } = sourcesOf(options)
    const found = yield* searchHits({
      keywords: q,
      num: TOOL_RESULTS * (include.length === 0 ? 2 : 4),
      ...(include.length === 0 ? {} : { includeDomains: include }),
      ...(exclude.length === 0 ? {} : { excludeDomains: exclude }),
      ...(freshness === undefined ? {} : { freshness }),
      ...(sources === undefined ? {} : { sources })
    }).pipe(Effect.timeoutOption(settings.deadlineMs), Effect.result)
    if (found._tag === "Failure") return `The search failed: ${found.failure.message}`
    if (found.success._tag === "None") return `The search gave no answer within ${settings.deadlineMs} ms.`
    const kept = [
      ...(include.length === 0 ? [] : [`on ${include.join(", ")}`]),
      ...(exclude.length === 0 ? [] : [`not on ${exclude.join(", ")}`]),
      ...(freshness === undefined ? [] : [`from the past ${freshness}`])
    ]
    const what = `"${q}"${kept.length === 0 ? "" : ` (${kept.join("; ")})`}`
    const hits = selectSources(found.success.value, TOOL_RESULTS).map((hit) => registry.add(hit))
    if (hits.length === 0) return `No results for ${what}.`
    return `Results for ${what}; cite them by number as [k]:\n\n${hits.map(formatSnippet).join("\n\n")}`
  })

  const webFetch = Effect.fn("Grounding.webFetch")(function*(url: string, registry: SourceRegistry): Effect.fn.Return<string> {
    const local = yield* storedPage(url, settings.pageChars)
    if (local !== undefined) {
      const source = registry.add({ title: local.title, link: url, snippet: local.content.slice(0, 300), date: local.date }, local.content)
      return `Page read from the local index; cite it as [${source.number}]:\n\n${formatSource(source)}`
    }
    if (fetcher === undefined) return "web_fetch is not available on this server."
    const page = yield* fetcher.fetch({ url, format: "markdown", maxChars: settings.pageChars }).pipe(
      Effect.timeoutOption(settings.deadlineMs),
      Effect.result
    )
    if (page._tag === "Failure") return `The page could not be fetched: ${page.failure.message}`
    if (page.success._tag === "None") return `The page gave no answer within ${settings.deadlineMs} ms.`
    const p = page.success.value
    const source = registry.add({ title: p.title, link: p.url, snippet: p.content.slice(0, 300), date: p.date }, p.content)
    return `Page fetched; cite it as [${source.number}]:\n\n${formatSource(source)}`
  })

  return Grounding.of({ settings, retrieve, webSearch, webFetch })
}

const formatSnippet = (source: GroundingSource): string =>
  `[${source.number}] ${source.title || source.url}\nURL: ${source.url}\nDate: ${source.date ?? "unknown"}\n${source.snippet}`
