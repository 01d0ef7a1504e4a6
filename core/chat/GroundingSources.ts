/**
 * The sources a grounded answer may cite: chosen from search hits (one per page, in rank
 * order), numbered once per request (the same URL keeps its number, also when a tool call
 * finds it again), and shown to the model in one system message in OpenRouter's style.
 * One page is one source by UrlNormalizer's page key, the rule fusion uses too.
 * `selectSources` is the one source-selection rule: grounding and the relevance bench
 * (test/bench/relevance.ts, "retrieval for grounding") both call it.
 */
import { pageKey } from "../index/UrlNormalizer.ts"
import type { GroundingOptions, GroundingSource, SearchContextSize, WebSearchOptions } from "./ChatRequest.ts"

/** Results given to the model per search_context_size (OpenRouter gives 5 by default). */
export const DEFAULT_MAX_RESULTS: Readonly<Record<SearchContextSize, number>> = { low: 3, medium: 5, high: 8 }
/** Top pages fetched and read whole per size: low reads snippets only. */
export const DEFAULT_FETCH_TOP_PAGES: Readonly<Record<SearchContextSize, number>> = { low: 0, medium: 2, high: 4 }

export interface SourceHit {
  readonly title: string
  readonly link: string
  readonly snippet: string
  readonly date: string | null
}

/** The first `count` distinct pages of a ranked list; hits without an address are skipped. */
export const selectSources = <H extends SourceHit>(hits: ReadonlyArray<H>, count: number): Array<H> => {
  const seen = new Set<string>()
  const out: Array<H> = []
  for (const hit of hits) {
    if (out.length >= count) break
    if (hit.link.trim() === "") continue
    const key = pageKey(hit.link)
    if (seen.has(key)) continue
    seen.add(key)
    out.push(hit)
  }
  return out
}

/** The numbered sources of one request, in the order they were retrieved. */
export class SourceRegistry {
  private readonly byKey = new Map<string, GroundingSource>()
  private readonly list: Array<GroundingSource> = []

  /** Adds a page (or improves its text when it is already there) and returns its numbered source. */
  add(hit: SourceHit, text?: string): GroundingSource {
    const key = pageKey(hit.link)
    const known = this.byKey.get(key)
    if (known !== undefined) {
      if (text === undefined || text.length <= known.text.length) return known
      const better: GroundingSource = { ...known, text, title: known.title || hit.title, date: known.date ?? hit.date }
      this.byKey.set(key, better)
      this.list[known.number - 1] = better
      return better
    }
    const source: GroundingSource = {
      number: this.list.length + 1,
      title: hit.title,
      url: hit.link,
      snippet: hit.snippet,
      date: hit.date,
      text: text ?? hit.snippet
    }
    this.byKey.set(key, source)
    this.list.push(source)
    return source
  }

  get(number: number): GroundingSource | undefined {
    return Number.isInteger(number) && number >= 1 ? this.list[number - 1] : undefined
  }

  get sources(): ReadonlyArray<GroundingSource> {
    return this.list
  }
}

/** The top-level `search_results` of a grounded answer (Perplexity's shape). */
export interface SearchResultEntry {
  readonly title: string
  readonly url: string
  readonly snippet: string
  readonly date: string | null
}

export const searchResultsOf = (sources: ReadonlyArray<GroundingSource>): Array<SearchResultEntry> =>
  sources.map((s) => ({ title: s.title, url: s.url, snippet: s.snippet, date: s.date }))

/** One source as the model reads it. */
export const formatSource = (source: GroundingSource): string =>
  `[${source.number}] ${source.title || source.url}\nURL: ${source.url}\nDate: ${source.date ?? "unknown"}\n${source.text}`

const locationText = (options: WebSearchOptions | undefined): string | undefined => {
  const at = options?.user_location?.approximate
  if (at === undefined) return undefined
  const parts = [at.city, at.region, at.country].filter((p): p is string => p !== undefined && p !== "")
  const place = parts.join(", ")
  if (place === "" && at.timezone === undefined) return undefined
  return `${place}${at.timezone === undefined ? "" : `${place === "" ? "" : " "}(time zone ${at.timezone})`}`
}

/**
 * The system message grounding adds before the conversation; the web plugin's search_prompt,
 * when given, introduces the sources in place of ours.
 */
export const groundingMessage = (
  query: string,
  sources: ReadonlyArray<GroundingSource>,
  today: string,
  options: GroundingOptions | undefined,
  note?: string
): string => {
  const location = locationText(options)
  const where = location === undefined ? "" : ` The user is located approximately in ${location}.`
  if (sources.length > 0 && options?.search_prompt !== undefined) {
    return `${options.search_prompt.trim()}${where}\n\n${sources.map(formatSource).join("\n\n")}`
  }
  if (sources.length === 0) {
    return `A web search was conducted on ${today} for "${query}" and found no results${note === undefined ? "" : ` (${note})`}.${where} ` +
      "Answer from what you know, say that no sources were found, and do not cite sources."
  }
  return `A web search was conducted on ${today} for "${query}".${where} Incorporate the following web search results into your response. ` +
    "IMPORTANT: cite them by number in square brackets right after the statement they support, as [1] or [2][3]; " +
    "cite only the numbers listed here and never invent a source or a link.\n\n" +
    sources.map(formatSource).join("\n\n")
}
