/**
 * Many pages read at once (webFetch's `urls`, Tavily's extract): every URL fetched concurrently,
 * at most `perHost` of them to one host (host and port) at a time, so that a list of one site's
 * pages does not arrive at that site all together; each outcome in the order asked, a failure
 * as the error a fetch of that URL alone would have given, never failing the others. One
 * deadline bounds the whole: a page not read by then, waiting for its host's turn or not, is a
 * timeout.
 */
import { Effect, Semaphore } from "effect"
import { type FetchedPage, type FetchOutcome, type FetchRequest, WebFetchError } from "./WebFetch.ts"

export interface FetchManyOptions {
  /** Pages of one host read at once. */
  readonly perHost: number
  /** From the call until every page is done or answered as a timeout. */
  readonly deadlineMs: number
  /** The setting `perHost` comes from, named when a page timed out waiting for its turn. */
  readonly perHostSetting?: string | undefined
}

/** The host (and port) a URL is limited under; "" for a URL that does not parse (it fails at once). */
const hostKey = (url: string): string => {
  try {
    return new URL(url.trim()).host.toLowerCase()
  } catch {
    return ""
  }
}

/** Every request of `requests` through `fetchOne`, at most `perHost` per host at once, in their order. */
export const fetchMany = (
  fetchOne: (request: FetchRequest) => Effect.Effect<FetchedPage, WebFetchError>,
  requests: ReadonlyArray<FetchRequest>,
  options: FetchManyOptions
): Effect.Effect<Array<FetchOutcome>> =>
  Effect.suspend(() => {
    const perHost = Math.max(1, Math.floor(options.perHost))
    const turns = new Map<string, Semaphore.Semaphore>()
    const turnOf = (host: string) => {
      let turn = turns.get(host)
      if (turn === undefined) {
        turn = Semaphore.makeUnsafe(perHost)
        turns.set(host, turn)
      }
      return turn
    }
    const one = (request: FetchRequest): Effect.Effect<FetchOutcome> => {
      const host = hostKey(request.url)
      let started = false
      const fetch = Effect.suspend(() => {
        started = true
        return fetchOne(request)
      })
      return (host === "" ? fetch : turnOf(host).withPermit(fetch)).pipe(
        Effect.timeoutOrElse({
          duration: options.deadlineMs,
          orElse: () =>
            Effect.fail(
              new WebFetchError({
                reason: "timeout",
                url: request.url,
                message: started
                  ? `the page was not read within ${options.deadlineMs} ms`
                  : `the page was not read within ${options.deadlineMs} ms: it was still waiting for its host's turn ` +
                    `(${perHost} pages of one host are read at once${options.perHostSetting === undefined ? "" : `, ${options.perHostSetting}`})`
              })
            )
        }),
        Effect.result
      )
    }
    return Effect.forEach(requests, one, { concurrency: "unbounded" })
  })
