/**
 * Talking to one OpenSearch or Elasticsearch index over its REST API (the same
 * `_search`, `_bulk`, `_count` and index-create shapes in both): where it is,
 * the credentials (read from the environment by the caller, kept Redacted, sent
 * as HTTP Basic auth and never put in a message), and one request function
 * that answers parsed JSON or an OpenSearchError whose reason says what to do.
 */
import { Effect, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { transportText } from "./ProviderHttp.ts"

export interface OpenSearchConnection {
  /** Base URL of the cluster, http(s), without the index. */
  readonly url: string
  readonly index: string
  readonly username?: Redacted.Redacted<string> | undefined
  readonly password?: Redacted.Redacted<string> | undefined
  /** Per request; default 10 s. */
  readonly timeoutMs?: number | undefined
}

/**
 * Why a request gave no answer: `unreachable` (connection failed), `timeout`,
 * `unauthorized` (401/403), `not_found` (no such index), `rate_limited` (429),
 * `rejected` (another 4xx: a bad request or mapping), `failed` (5xx or an answer
 * that is not JSON).
 */
export class OpenSearchError extends Schema.TaggedError<OpenSearchError>()("OpenSearchError", {
  reason: Schema.Literals(["unreachable", "timeout", "unauthorized", "not_found", "rate_limited", "rejected", "failed"]),
  status: Schema.optional(Schema.Number),
  message: Schema.String
}) {}

const DEFAULT_TIMEOUT_MS = 10_000
const MAX_MESSAGE = 300

/** Index names OpenSearch accepts: lowercase, no `\ / * ? " < > | , #` or spaces, not starting with - _ +. */
export const INDEX_NAME = /^[a-z0-9][a-z0-9._-]{0,254}$/

/**
 * `opensearch://host:port/index` (http), `opensearch+https://host:port/index`, or a
 * plain `http(s)://host:port/index`, as a connection without credentials; a string
 * saying what is wrong otherwise.
 */
export const parseOpenSearchTarget = (target: string): { readonly url: string; readonly index: string } | string => {
  const match = /^(opensearch(?:\+https?)?|https?):\/\/(.+)$/i.exec(target.trim())
  if (match === null) return "must be opensearch://host:port/index, opensearch+https://host:port/index or http(s)://host:port/index"
  const scheme = match[1]!.toLowerCase()
  const protocol = scheme === "opensearch" || scheme === "opensearch+http" || scheme === "http" ? "http" : "https"
  let url: URL
  try {
    url = new URL(`${protocol}://${match[2]}`)
  } catch {
    return "is not a valid URL"
  }
  if (url.username !== "" || url.password !== "") return "must not carry credentials; set them in environment variables (OPENSEARCH_USERNAME, OPENSEARCH_PASSWORD)"
  const segments = url.pathname.split("/").filter((s) => s !== "")
  const index = segments.pop()
  if (index === undefined) return "must name the index after the host, e.g. opensearch://localhost:9200/periscope"
  if (!INDEX_NAME.test(index)) return `names the index ${JSON.stringify(index)}, which is not a valid index name (lowercase letters, digits, . _ -)`
  const base = `${url.protocol}//${url.host}${segments.length === 0 ? "" : `/${segments.join("/")}`}`
  return { url: base, index }
}

/** Cuts credentials out of text, collapses whitespace and caps the length. */
const scrub = (text: string, connection: OpenSearchConnection): string => {
  let out = text
  for (const secret of [connection.password, connection.username]) {
    const value = secret === undefined ? "" : Redacted.value(secret)
    if (value.length >= 3) out = out.split(value).join("[redacted]")
  }
  out = out.replace(/\bBasic\s+[A-Za-z0-9+/=]+/g, "Basic [redacted]").replace(/\s+/g, " ").trim()
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}...` : out
}

/** OpenSearch's error body `{error: {type, reason, root_cause}, status}` as one line. */
const errorText = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const error = (body as { error?: unknown }).error
  if (typeof error === "string") return error
  if (typeof error !== "object" || error === null) return undefined
  const e = error as { type?: unknown; reason?: unknown }
  const type = typeof e.type === "string" ? e.type : undefined
  const reason = typeof e.reason === "string" ? e.reason : undefined
  return [type, reason].filter((s) => s !== undefined).join(": ") || undefined
}

export interface OpenSearchAnswer {
  readonly status: number
  readonly body: unknown
}

export interface OpenSearchRequest {
  readonly method: "GET" | "POST" | "PUT" | "DELETE" | "HEAD"
  /** Path after the base URL, starting with "/". */
  readonly path: string
  /** A JSON body, or NDJSON text for `_bulk`. */
  readonly json?: unknown
  readonly ndjson?: string
  /** Statuses answered as values instead of errors (e.g. 404 for "does the index exist"). */
  readonly accept?: ReadonlyArray<number>
}

/** Sends one request over the HttpClient in context; JSON back, or an OpenSearchError. */
export const openSearchRequest = (connection: OpenSearchConnection, request: OpenSearchRequest) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const fail = (reason: OpenSearchError["reason"], message: string, status?: number) =>
      new OpenSearchError({ reason, message: scrub(message, connection), ...(status === undefined ? {} : { status }) })
    let outgoing = HttpClientRequest.make(request.method)(`${connection.url.replace(/\/+$/, "")}${request.path}`).pipe(
      HttpClientRequest.acceptJson
    )
    if (connection.username !== undefined || connection.password !== undefined) {
      const user = connection.username === undefined ? "" : Redacted.value(connection.username)
      const pass = connection.password === undefined ? "" : Redacted.value(connection.password)
      outgoing = HttpClientRequest.setHeader(outgoing, "authorization", `Basic ${btoa(`${user}:${pass}`)}`)
    }
    if (request.ndjson !== undefined) outgoing = HttpClientRequest.bodyText(outgoing, request.ndjson, "application/x-ndjson")
    else if (request.json !== undefined) outgoing = HttpClientRequest.bodyText(outgoing, JSON.stringify(request.json), "application/json")
    const timeoutMs = connection.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const response = yield* http.execute(outgoing).pipe(
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.mapError((error) => fail("unreachable", `could not reach OpenSearch at ${connection.url}: ${transportText(error)}`)),
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () => Effect.fail(fail("timeout", `OpenSearch at ${connection.url} did not answer within ${timeoutMs} ms`))
      })
    )
    const text = request.method === "HEAD" ? "" : yield* response.text.pipe(
      Effect.mapError(() => fail("failed", "the OpenSearch connection broke while sending the answer", response.status))
    )
    let body: unknown = null
    if (text.trim() !== "") {
      try {
        body = JSON.parse(text)
      } catch {
        if (response.status >= 200 && response.status < 300) return yield* fail("failed", "the OpenSearch answer is not JSON", response.status)
      }
    }
    const status = response.status
    if ((status >= 200 && status < 300) || request.accept?.includes(status)) return { status, body } satisfies OpenSearchAnswer
    const said = errorText(body) ?? (text.trim() === "" ? "" : text.trim())
    const detail = `OpenSearch answered ${status}${said === "" ? "" : ` (${said})`}`
    if (status === 401 || status === 403) return yield* fail("unauthorized", `${detail}; check the username and password variables`, status)
    if (status === 404) return yield* fail("not_found", detail, status)
    if (status === 429) return yield* fail("rate_limited", detail, status)
    if (status >= 400 && status < 500) return yield* fail("rejected", detail, status)
    return yield* fail("failed", detail, status)
  })
