/**
 * Search results that carry their page (`content`: highlights, markdown or text), for an agent
 * that wants to search and read in one call. A page the local index holds is read from its
 * stored text (no fetch); one a live provider listed is read through WebFetch (the guarded
 * fetcher, its extractor and its cache), all at once, within the time the request has left. A
 * page not read keeps its snippet as its content and `extra.unread` says why. `maxTokens`
 * shares one token budget among the results: each keeps its content whole while it fits in an
 * equal share, the longer ones are cut to what is left (whole sentences or lines where it can).
 */
import { Effect, Option } from "effect"
import { highlightQuery, highlights } from "./Highlights.ts"
import type { ContentMode, SearchQuery } from "./SearchQuery.ts"
import type { WebResult } from "./SearchResult.ts"
import type { StoredPages } from "./StoredPages.ts"
import { type Encoding, o200kEncoding } from "./TokenEncoding.ts"
import type { WebFetch } from "./WebFetch.ts"

/** Characters of highlights per result when the request gives no maxCharsPerResult: about three passages. */
export const DEFAULT_HIGHLIGHT_CHARS = 1_500
/** Characters of a page's markdown or text per result when the request gives no maxCharsPerResult. */
export const DEFAULT_PAGE_CHARS = 10_000
/** Characters of a page highlights are chosen from. */
const HIGHLIGHT_SOURCE_CHARS = 100_000
/** Pages read at once for one request. */
const READ_CONCURRENCY = 16

/** Why a result's content is its snippet. */
export type UnreadReason =
  | "timeout"
  | "not_indexed"
  | "no_fetch"
  | "empty"
  | "invalid_url"
  | "refused"
  | "too_large"
  | "unsupported_type"
  | "http_status"
  | "failed"
  | "render_unavailable"
  | "busy"

/** One result whose page could not be read, for the envelope's `extra.unread`. */
export interface UnreadReport {
  readonly position: number
  readonly link: string
  readonly reason: UnreadReason
  readonly message: string
}

export interface ContentReaders {
  /** The local index's stored text, when the search backend keeps it. */
  readonly stored: StoredPages["Service"] | undefined
  /** The guarded web fetch, when the server reads pages from the web. */
  readonly fetcher: WebFetch["Service"] | undefined
}

/** The mode a search asks for, when it asks results to carry content. */
export const contentModeOf = (query: SearchQuery): Exclude<ContentMode, "snippet"> | undefined =>
  query.content === undefined || query.content === "snippet" ? undefined : query.content

type Read = { readonly text: string } | { readonly unread: UnreadReason; readonly message: string }

/** The results with `content`, and the reports of those whose page was not read. */
export interface WithContent {
  readonly organic: Array<WebResult>
  readonly unread: Array<UnreadReport>
}

/**
 * `organic` with content as `query` asks (contentModeOf must be defined); `listedLive(i)`:
 * whether a live provider listed result i (only those are fetched); `timeLeftMs`: until the
 * request's deadline.
 */
export const withContent = (
  readers: ContentReaders,
  organic: ReadonlyArray<WebResult>,
  listedLive: (index: number) => boolean,
  query: SearchQuery,
  timeLeftMs: number
): Effect.Effect<WithContent> => {
  const mode = contentModeOf(query)!
  const maxChars = query.maxCharsPerResult ?? (mode === "highlights" ? DEFAULT_HIGHLIGHT_CHARS : DEFAULT_PAGE_CHARS)
  const readChars = mode === "highlights" ? Math.max(HIGHLIGHT_SOURCE_CHARS, maxChars) : maxChars
  const format = mode === "markdown" ? "markdown" : "text"

  const fetchPage = (link: string): Effect.Effect<Read> => {
    const fetcher = readers.fetcher
    if (fetcher === undefined) return Effect.succeed({ unread: "no_fetch", message: "this server reads no pages from the web" })
    return fetcher.fetch({ url: link, format, maxChars: readChars }).pipe(
      Effect.map((page): Read => ({ text: page.content })),
      Effect.catchTag("WebFetchError", (error) => Effect.succeed<Read>({ unread: error.reason, message: error.message }))
    )
  }

  /** The local index's text of each result, read one after another (an in-memory read: no fiber or timer each). */
  const fromIndex: Effect.Effect<ReadonlyArray<string | undefined>> = readers.stored === undefined
    ? Effect.succeed(organic.map(() => undefined))
    : Effect.forEach(organic, (result) =>
      Effect.map(readers.stored!.page(result.link, readChars), (page) => (page === undefined || page.text.trim() === "" ? undefined : page.text)))

  /** A page the index does not hold: fetched when a live provider listed it, within the time left. */
  const fromWeb = (result: WebResult, index: number): Effect.Effect<Read> => {
    if (!listedLive(index)) return Effect.succeed({ unread: "not_indexed", message: "the local index holds no text for this page and no live source listed it" })
    if (timeLeftMs <= 0) return Effect.succeed({ unread: "timeout", message: "the search used the whole request deadline; the page was not read" })
    return fetchPage(result.link).pipe(
      Effect.timeoutOption(timeLeftMs),
      Effect.map(Option.getOrElse((): Read => ({ unread: "timeout", message: `the page was not read within the request's deadline (${Math.round(timeLeftMs)} ms left)` })))
    )
  }

  const readAll: Effect.Effect<ReadonlyArray<Read>> = Effect.flatMap(fromIndex, (texts) => {
    const missing = texts.flatMap((text, i) => (text === undefined ? [i] : []))
    if (missing.length === 0) return Effect.succeed(texts.map((text): Read => ({ text: text! })))
    return Effect.map(
      Effect.forEach(missing, (i) => fromWeb(organic[i]!, i), { concurrency: READ_CONCURRENCY }),
      (fetched) => {
        const reads: Array<Read> = texts.map((text) => ({ text: text ?? "" }))
        missing.forEach((i, k) => {
          reads[i] = fetched[k]!
        })
        return reads
      }
    )
  })

  const hq = mode === "highlights" ? highlightQuery(query.keywords) : undefined
  const contentOf = (text: string): string =>
    hq !== undefined ? highlights(text, hq, { maxChars }) : cutAt(text.trim(), maxChars)

  return Effect.flatMap(
    readAll,
    (reads) => {
      const unread: Array<UnreadReport> = []
      const contents = reads.map((read, i) => {
        const result = organic[i]!
        if ("text" in read) {
          const content = contentOf(read.text)
          if (content !== "") return content
          unread.push({ position: result.position, link: result.link, reason: "empty", message: "the page has no text" })
        } else unread.push({ position: result.position, link: result.link, reason: read.unread, message: read.message })
        return result.snippet
      })
      const done = (budgeted: ReadonlyArray<string>): WithContent => ({
        organic: organic.map((result, i) => ({ ...result, content: budgeted[i]! })),
        unread
      })
      if (query.maxTokens === undefined) return Effect.succeed(done(contents))
      const budget = query.maxTokens
      return Effect.map(o200kEncoding, (encoding) => done(withinTokens(encoding, contents, budget, mode === "highlights")))
    }
  )
}

/** `text` cut to at most `max` characters, at a line end or a space in the last fifth when there is one. */
const cutAt = (text: string, max: number): string => {
  if (text.length <= max) return text
  const floor = Math.floor(max * 0.8)
  const line = text.lastIndexOf("\n", max)
  if (line >= floor) return text.slice(0, line).trimEnd()
  const space = text.lastIndexOf(" ", max)
  return (space >= floor ? text.slice(0, space) : text.slice(0, max)).trimEnd()
}

/**
 * The contents within `budget` tokens together: the largest equal share `cap` such that every
 * content cut to `cap` tokens fits, so short ones stay whole and the long ones share the rest.
 */
export const withinTokens = (encoding: Encoding, contents: ReadonlyArray<string>, budget: number, sentences: boolean): Array<string> => {
  const counts = contents.map(encoding.count)
  let total = 0
  for (const c of counts) total += c
  if (total <= budget) return [...contents]
  const sorted = [...counts].sort((a, b) => a - b)
  let left = budget
  let cap = 0
  for (let i = 0; i < sorted.length; i++) {
    const share = Math.floor(left / (sorted.length - i))
    if (sorted[i]! > share) {
      cap = share
      break
    }
    left -= sorted[i]!
    cap = sorted[i]!
  }
  return contents.map((content, i) => (counts[i]! <= cap ? content : tokenCut(encoding, content, cap, sentences)))
}

/** The longest prefix within `max` tokens, pulled back to a sentence end (highlights) or a line or space. */
const tokenCut = (encoding: Encoding, text: string, max: number, sentences: boolean): string => {
  if (max <= 0) return ""
  const prefix = encoding.truncate(text, max)
  if (sentences) {
    const ends = [...prefix.matchAll(/[.!?…]["'”’)\]]*(?=\s|$)/g)]
    const last = ends.at(-1)
    if (last !== undefined && last.index! + last[0].length >= prefix.length * 0.5) return prefix.slice(0, last.index! + last[0].length).trim()
  }
  const line = prefix.lastIndexOf("\n")
  if (line >= prefix.length * 0.5) return prefix.slice(0, line).trimEnd()
  const space = prefix.lastIndexOf(" ")
  return (space >= prefix.length * 0.5 ? prefix.slice(0, space) : prefix).trimEnd()
}
