/**
 * One JSON POST to an embedding or rerank server over Effect's HttpClient: under a timeout
 * (the whole exchange, answer read included), retried on 429, 5xx and lost connections with
 * the wait the server asked for (RetryAfter.ts) or a doubling one, and read into JSON or a
 * ModelServerError. Interrupting the caller aborts the request in flight.
 */
import { Clock, Duration, Effect, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { ModelServerError } from "../../search/Embeddings.ts"
import { retryAfterMs } from "../RetryAfter.ts"
import { errorMessageOf, scrubText } from "../search/ProviderHttp.ts"

export interface ModelServerTarget {
  /** "embeddings" or "reranker", for messages. */
  readonly server: string
  readonly url: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly timeoutMs: number
  /** Retries after the first try. */
  readonly retries: number
  /** The first wait when the server named none; doubled each time. */
  readonly baseDelayMs?: number | undefined
}

/** A wait the server asks for longer than this is not waited: the call fails as rate limited. */
const MAX_WAIT_MS = 60_000

const retryable = (error: ModelServerError) => error.reason === "unavailable" || error.reason === "rate_limited" || error.reason === "timeout"

/** One try: the answer's JSON, or the error its status or failure means. */
const attempt = (target: ModelServerTarget, body: unknown): Effect.Effect<unknown, ModelServerError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const fail = (reason: ModelServerError["reason"], message: string, status?: number, wait?: number) =>
      new ModelServerError({
        server: target.server,
        reason,
        message: scrubText(message, target.apiKey),
        ...(status === undefined ? {} : { status }),
        ...(wait === undefined ? {} : { retryAfterMs: wait })
      })
    let request = HttpClientRequest.post(target.url).pipe(
      HttpClientRequest.acceptJson,
      HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
    )
    if (target.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, Redacted.value(target.apiKey))
    const exchange = Effect.gen(function*() {
      const response = yield* http.execute(request).pipe(
        Effect.mapError((error) => fail("unavailable", `the ${target.server} server at ${target.url} could not be reached (${error.reason})`))
      )
      const text = yield* response.text.pipe(Effect.mapError(() => fail("unavailable", `the ${target.server} server's answer broke off`, response.status)))
      return { status: response.status, headers: response.headers, text }
    })
    const { status, headers, text } = yield* exchange.pipe(
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.timeoutOrElse({
        duration: Duration.millis(target.timeoutMs),
        orElse: () => Effect.fail(fail("timeout", `the ${target.server} server did not answer within ${target.timeoutMs} ms`))
      })
    )
    if (status >= 200 && status < 300) {
      try {
        return JSON.parse(text) as unknown
      } catch {
        return yield* fail("bad_response", `the ${target.server} server's answer is not JSON`, status)
      }
    }
    const said = errorMessageOf(text)
    const detail = `the ${target.server} server answered ${status}${said === undefined ? "" : `: ${said}`}`
    if (status === 429) return yield* fail("rate_limited", detail, status, retryAfterMs(headers, yield* Clock.currentTimeMillis))
    if (status === 401 || status === 403) return yield* fail("unauthorized", `${detail}; check the key its apiKeyEnv names`, status)
    if (status >= 500) return yield* fail("unavailable", detail, status, retryAfterMs(headers, yield* Clock.currentTimeMillis))
    return yield* fail("refused", detail, status)
  })

/** The POST with its retries: the last failure when none succeeds. */
export const postJson = (target: ModelServerTarget, body: unknown): Effect.Effect<unknown, ModelServerError, HttpClient.HttpClient> => {
  const base = target.baseDelayMs ?? 250
  const loop = (tried: number): Effect.Effect<unknown, ModelServerError, HttpClient.HttpClient> =>
    Effect.catch(attempt(target, body), (error) => {
      if (tried >= target.retries || !retryable(error)) return Effect.fail(error)
      const wait = error.retryAfterMs ?? Math.min(10_000, base * 2 ** tried)
      if (wait > MAX_WAIT_MS) return Effect.fail(error)
      return Effect.andThen(Effect.sleep(Duration.millis(wait)), loop(tried + 1))
    })
  return loop(0)
}
