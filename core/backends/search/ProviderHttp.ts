/**
 * What every upstream search provider client shares: sending a request over Effect's
 * HttpClient (aborted when the fiber is interrupted), and reading the answer into JSON or
 * a ProviderError whose reason the federation acts on: 429 and quota answers are
 * rate_limited (with the wait RetryAfter reads from Retry-After or the provider's reset
 * header), 403 and CAPTCHA pages blocked, 401 unauthorized, 5xx and transport failures
 * unavailable. Messages carry the provider's explanation, never its key.
 */
import { Clock, Effect, Redacted } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { publishedDate } from "../../search/PublishedDate.ts"
import { ProviderError } from "../../search/SearchProvider.ts"
import type { WebHit } from "../../search/SearchResult.ts"
import { rateLimitResetMs, retryAfterMs } from "../RetryAfter.ts"

/** What a provider needs to be reached: its configured name, base URL and key. */
export interface ProviderConfig {
  readonly name: string
  readonly baseUrl: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
}

/** How long an error body may take to read before the status alone is reported. */
const ERROR_BODY_MS = 2_000
const MAX_MESSAGE = 300

/** The base URL without trailing slashes, joined to `path`. */
export const endpoint = (baseUrl: string, path: string): string => `${baseUrl.replace(/\/+$/, "")}${path}`

const INVALID_KEY = /SUBSCRIPTION_TOKEN_INVALID|invalid api key|"unauthorized\.?"|INVALID_API_KEY/i
const CAPTCHA = /captcha|are you a robot|unusual traffic|cf-challenge|challenge-platform/i

/** Cuts the key (and anything shaped like a bearer token) out of text, collapses whitespace, caps length. */
export const scrubText = (text: string, apiKey: Redacted.Redacted<string> | undefined): string => {
  let out = text
  if (apiKey !== undefined) {
    const key = Redacted.value(apiKey)
    if (key.length >= 4 && out.includes(key)) out = out.split(key).join("[redacted]")
  }
  out = out.replace(/\b(Bearer)\s+[^\s"',;]+/g, "$1 [redacted]").replace(/\btvly-[A-Za-z0-9_-]{6,}/g, "[redacted]")
  out = out.replace(/\s+/g, " ").trim()
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}...` : out
}

/** The message of a provider error body: Brave {error:{detail}}, Tavily {detail:{error}}, Serper {message}, ours {exception:{detail}}. */
export const errorMessageOf = (body: string): string | undefined => {
  const trimmed = body.trim()
  if (trimmed === "" || trimmed.startsWith("<")) return undefined
  let json: unknown
  try {
    json = JSON.parse(trimmed)
  } catch {
    return trimmed
  }
  const pick = (value: unknown, depth: number): string | undefined => {
    if (typeof value === "string") return value
    if (typeof value !== "object" || value === null || depth > 3) return undefined
    const r = value as Record<string, unknown>
    for (const field of ["detail", "message", "error", "exception", "msg"]) {
      const found = pick(r[field], depth + 1)
      if (found !== undefined) return found
    }
    return undefined
  }
  return pick(json, 0) ?? trimmed
}

/** A transport failure as the operator knows it: the OS error code (ECONNREFUSED) when there is one. */
export const transportText = (error: HttpClientError.HttpClientError): string => {
  let current: unknown = error.reason.cause ?? error.reason
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const r = current as { code?: unknown; cause?: unknown }
    if (typeof r.code === "string") return `connection failed (${r.code})`
    current = r.cause
  }
  return "connection failed"
}

export interface ProviderHttp {
  /** Sends `request`; a 2xx JSON answer comes back parsed, anything else as a ProviderError. */
  json(request: HttpClientRequest.HttpClientRequest): Effect.Effect<unknown, ProviderError>
  readonly fail: (reason: ProviderError["reason"], message: string, extra?: { status?: number; retryAfterMs?: number; captcha?: boolean }) => ProviderError
}

/** The request/answer plumbing of one provider over the HttpClient in context. */
export const makeProviderHttp = (config: ProviderConfig) =>
  Effect.map(Effect.service(HttpClient.HttpClient), (http): ProviderHttp => {
    const fail: ProviderHttp["fail"] = (reason, message, extra = {}) =>
      new ProviderError({
        provider: config.name,
        reason,
        message: scrubText(message, config.apiKey),
        ...(extra.status === undefined ? {} : { status: extra.status }),
        ...(extra.retryAfterMs === undefined ? {} : { retryAfterMs: extra.retryAfterMs }),
        ...(extra.captcha === undefined ? {} : { captcha: extra.captcha })
      })

    const statusError = (response: HttpClientResponse.HttpClientResponse) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const body = yield* response.text.pipe(
          Effect.timeoutOption(ERROR_BODY_MS),
          Effect.map((o) => (o._tag === "Some" ? o.value : "")),
          Effect.orElseSucceed(() => "")
        )
        const status = response.status
        const detail = errorMessageOf(body)
        const said = detail === undefined ? "" : `: ${detail}`
        if (CAPTCHA.test(body) && body.trimStart().startsWith("<")) {
          return fail("blocked", `the provider answered ${status} with a CAPTCHA page`, { status, captcha: true })
        }
        if (status === 429 || status === 432 || status === 433) {
          const retryAfter = retryAfterMs(response.headers, now) ?? rateLimitResetMs(response.headers)
          return fail("rate_limited", `the provider answered ${status}${said}`, retryAfter === undefined ? { status } : { status, retryAfterMs: retryAfter })
        }
        // Brave refuses a bad token with 422 SUBSCRIPTION_TOKEN_INVALID, Serper with 403 "Unauthorized".
        if (status === 401 || INVALID_KEY.test(body)) return fail("unauthorized", `the provider refused the key (${status})${said}`, { status })
        if (status === 403) return fail("blocked", `the provider answered 403${said}`, { status })
        if (status >= 500) return fail("unavailable", `the provider answered ${status}${said}`, { status })
        return fail("bad_response", `the provider refused the request (${status})${said}`, { status })
      })

    const json = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<unknown, ProviderError> =>
      http.execute(HttpClientRequest.acceptJson(request)).pipe(
        // Our trace ids are no business of a third-party search engine.
        Effect.provideService(HttpClient.TracerPropagationEnabled, false),
        Effect.mapError((error) => fail("unavailable", `could not reach the provider: ${transportText(error)}`)),
        Effect.flatMap((response) => {
          if (response.status < 200 || response.status >= 300) return Effect.flatMap(statusError(response), Effect.fail)
          return response.text.pipe(
            Effect.mapError(() => fail("unavailable", "the provider connection broke while sending the answer")),
            Effect.flatMap((text) => {
              try {
                return Effect.succeed(JSON.parse(text) as unknown)
              } catch {
                if (CAPTCHA.test(text)) return Effect.fail(fail("blocked", "the provider answered with a CAPTCHA page", { status: response.status, captcha: true }))
                return Effect.fail(fail("bad_response", "the provider answer is not JSON", { status: response.status }))
              }
            })
          )
        })
      )

    return { json, fail }
  })

/** Reads a field path of unknown JSON without trusting its shape. */
export const field = (value: unknown, ...path: ReadonlyArray<string>): unknown => {
  let current = value
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

export const str = (value: unknown): string => (typeof value === "string" ? value : "")
export const arr = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** Results in the `organic` shape Serper and our own wire share ({title, link, snippet, date}), at most `num`. */
export const organicHits = (organic: ReadonlyArray<unknown>, now: number, num: number): Array<WebHit> => {
  const hits: Array<WebHit> = []
  for (const r of organic) {
    const link = str(field(r, "link"))
    if (link === "") continue
    hits.push({ title: str(field(r, "title")), link, snippet: str(field(r, "snippet")), date: publishedDate(field(r, "date"), now) })
    if (hits.length === num) break
  }
  return hits
}
