/**
 * Pages read for a Tavily answer, all at once under one deadline: a page the local index holds
 * is read from its stored text (as grounded chat reads it), the others through WebFetch's
 * many-URL fetch (the guarded fetcher, its extractor and its cache, a few pages of one host at
 * a time as webFetch's urls reads them). A page that fails or misses the deadline gives its
 * reason, never failing the others.
 */
import { Effect, Result } from "effect"
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
  const storedText = (url: string): Effect.Effect<PageOutcome | undefined> =>
    stored === undefined
      ? Effect.succeed(undefined)
      : Effect.map(stored.page(url, STORED_CHARS), (page) => (page === undefined || page.text.trim() === "" ? undefined : { title: page.title, content: page.text }))

  /**
   * Every URL read at once; each outcome in the order of `urls`. `storedFirst`: the local
   * index's copy when it has one (search results), else always the live page (extract).
   */
  const readAll = (urls: ReadonlyArray<string>, format: FetchFormat, deadlineMs: number, storedFirst: boolean): Effect.Effect<Array<PageOutcome>> =>
    Effect.gen(function*() {
      const started = Date.now()
      const fromIndex = storedFirst ? yield* Effect.forEach(urls, storedText, { concurrency: "unbounded" }) : urls.map(() => undefined)
      const live = urls.filter((_, i) => fromIndex[i] === undefined)
      const fetched = live.length === 0 ? [] : yield* fetcher.fetchMany({
        urls: live,
        format,
        deadlineMs: Math.max(1, deadlineMs - (Date.now() - started))
      })
      let next = 0
      return urls.map((_, i): PageOutcome => {
        const kept = fromIndex[i]
        if (kept !== undefined) return kept
        const outcome = fetched[next++]!
        if (Result.isSuccess(outcome)) return { title: outcome.success.title, content: outcome.success.content }
        return { error: outcome.failure.reason === "timeout" && Date.now() - started >= deadlineMs ? `the page was not read within ${deadlineMs / 1000} s` : fetchFailure(outcome.failure) }
      })
    })

  return { readAll }
}

export type PageReader = ReturnType<typeof makePageReader>
