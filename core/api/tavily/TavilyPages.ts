/**
 * Pages read for a Tavily answer, all at once under one deadline: a page the local index holds
 * is read from its stored text (as grounded chat reads it), any other through WebFetch (the
 * guarded fetcher, its extractor and its cache). A page that fails or misses the deadline
 * gives its reason, never failing the others.
 */
import { Effect } from "effect"
import type { StoredPages } from "../../search/StoredPages.ts"
import type { FetchFormat, WebFetch, WebFetchError } from "../../search/WebFetch.ts"

/** The longest text a stored page gives (the index keeps pages whole; an answer does not need more). */
const STORED_CHARS = 200_000

export interface ReadPage {
  readonly title: string
  readonly content: string
}

export type PageOutcome = ReadPage | { readonly error: string }

export const isRead = (outcome: PageOutcome): outcome is ReadPage => !("error" in outcome)

const fetchFailure = (error: WebFetchError): string => error.message

export const makePageReader = (fetcher: WebFetch["Service"], stored: StoredPages["Service"] | undefined) => {
  const fetchPage = (url: string, format: FetchFormat): Effect.Effect<PageOutcome> =>
    fetcher.fetch({ url, format }).pipe(
      Effect.map((page): PageOutcome => ({ title: page.title, content: page.content })),
      Effect.catchTag("WebFetchError", (error) => Effect.succeed<PageOutcome>({ error: fetchFailure(error) }))
    )
  const readOne = (url: string, format: FetchFormat, storedFirst: boolean): Effect.Effect<PageOutcome> =>
    stored === undefined || !storedFirst
      ? fetchPage(url, format)
      : Effect.flatMap(stored.page(url, STORED_CHARS), (page) =>
        page === undefined || page.text.trim() === "" ? fetchPage(url, format) : Effect.succeed<PageOutcome>({ title: page.title, content: page.text }))

  /**
   * Every URL read at once; each outcome in the order of `urls`. `storedFirst`: the local
   * index's copy when it has one (search results), else always the live page (extract).
   */
  const readAll = (urls: ReadonlyArray<string>, format: FetchFormat, deadlineMs: number, storedFirst: boolean): Effect.Effect<Array<PageOutcome>> =>
    Effect.forEach(urls, (url) =>
      readOne(url, format, storedFirst).pipe(
        Effect.timeoutOrElse({
          duration: deadlineMs,
          orElse: () => Effect.succeed<PageOutcome>({ error: `the page was not read within ${deadlineMs / 1000} s` })
        })
      ), { concurrency: "unbounded" })

  return { readAll }
}

export type PageReader = ReturnType<typeof makePageReader>
