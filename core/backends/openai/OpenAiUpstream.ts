/**
 * The client of OpenAI-compatible model servers (vLLM, Ollama, llama.cpp
 * server, OpenAI and alike): UpstreamClient over Effect's HttpClient, so it
 * runs wherever fetch does (Node, Deno, browsers).
 *
 * What it guarantees to the router and the pipeline:
 * - interrupting `complete` or the stream (a client went away) aborts the
 *   HTTP request, which closes the upstream connection at once;
 * - retries with backoff happen only before the first byte of an answer
 *   (streams: the first SSE data event; whole completions: the parsed body),
 *   and only for errors `isRetryable` accepts;
 * - connect, first-token and total deadlines each end in an UpstreamError of
 *   kind "timeout", and a stream never ends silently (StreamNormalizer);
 * - error messages carry the upstream's explanation but never a credential.
 */
import { Cause, Channel, Clock, Duration, Effect, Exit, type Fiber, Layer, Predicate, Pull, Result, Schedule, Scope, Stream } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { FetchHttpClient, HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { fromArrayPull } from "../../chat/ArrayStreams.ts"
import type { ChatChunk, ChatResult } from "../../chat/ChatCompletion.ts"
import type { ChatRequest } from "../../chat/ChatRequest.ts"
import { UpstreamClient, UpstreamError, type UpstreamTarget } from "../../chat/Upstream.ts"
import { spanned, spannedIn } from "../../store/Spans.ts"
import { retryAfterMs } from "../RetryAfter.ts"
import { errorBodyText, scrub, secretsOf } from "./ErrorText.ts"
import { upstreamBody } from "./RequestBody.ts"
import { type AnswerIssue, normalizeCompletion } from "./ResponseNormalizer.ts"
import { retrySchedule } from "./RetryPolicy.ts"
import { StreamDeadline } from "./StreamDeadline.ts"
import { StreamNormalizer } from "./StreamNormalizer.ts"

/** How long an error body may take to read before the status alone is reported. */
const ERROR_BODY_MS = 5_000
/**
 * How long the end of a stream's body may take after [DONE]. Read to its end, the connection goes
 * back to the client's pool; a request aborted before that closes it, and the next stream to
 * the upstream paid a new connection (a TCP connect, or a TLS handshake over the internet).
 */
const BODY_END_MS = 50

type Chunks = NonEmptyReadonlyArray<ChatChunk>

/** What is known about a failure; `fail` adds the target and scrubs the message. */
interface Failure {
  readonly kind: UpstreamError["kind"]
  readonly message: string
  readonly beforeFirstByte: boolean
  readonly status?: number | undefined
  readonly retryAfterSeconds?: number | undefined
}

/** The chat URL of a base URL and whether it parses, worked out once per base URL (targets are few and fixed). */
const urls = new Map<string, { readonly url: string; readonly valid: boolean }>()
const urlOf = (baseUrl: string) => {
  let known = urls.get(baseUrl)
  if (known === undefined) {
    const url = `${baseUrl.replace(/\/+$/, "")}/chat/completions`
    known = { url, valid: URL.canParse(url) }
    if (urls.size < 1024) urls.set(baseUrl, known)
  }
  return known
}
const completionsUrl = (baseUrl: string): string => urlOf(baseUrl).url

/**
 * What a 404 on the chat path means, for the operator: the URL asked (no
 * credentials, no query) and what to change. A base URL without a version
 * segment (/v1, /v1beta) most likely lacks the /v1 that OpenAI-compatible
 * servers serve chat under.
 */
const notFoundMessage = (target: UpstreamTarget, text: string | undefined): string => {
  const base = new URL(target.baseUrl)
  const path = base.pathname.replace(/\/+$/, "")
  const asked = `POST ${base.origin}${path}/chat/completions`
  const said = text === undefined ? "" : ` (${text})`
  const setting = `chat.upstreams.${target.name}.baseUrl`
  return path.split("/").some((segment) => /^v\d/.test(segment))
    ? `answered 404 Not Found to ${asked}${said}: check ${setting} and that the upstream serves the model ${JSON.stringify(target.model)}`
    : `answered 404 Not Found to ${asked}${said}: the base URL has no /v1, under which OpenAI-compatible servers serve chat; set ${setting} to ${base.origin}${path}/v1`
}

const codeText: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection closed",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  UND_ERR_SOCKET: "connection closed by the upstream",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out"
}

/**
 * A short description of a transport failure: the error code when there is
 * one (it names no host, unlike Node's messages), else the messages.
 */
const describeCause = (cause: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 4 && Predicate.isObject(current); depth++) {
    if (typeof current.code === "string") return `${codeText[current.code] ?? "transport error"} (${current.code})`
    if (typeof current.message === "string" && current.message !== "" && !parts.includes(current.message)) parts.push(current.message)
    current = current.cause
  }
  return parts.length > 0 ? parts.join(": ") : "unknown transport error"
}

const httpCause = (error: HttpClientError.HttpClientError): unknown => error.reason.cause ?? error.reason

const isJsonContent = (response: HttpClientResponse.HttpClientResponse): boolean =>
  (response.headers["content-type"] ?? "").includes("application/json")

export const make = Effect.gen(function*() {
  const base = yield* HttpClient.HttpClient

  const fail = (target: UpstreamTarget, failure: Failure): UpstreamError =>
    new UpstreamError({
      target: target.name,
      kind: failure.kind,
      status: failure.status,
      message: scrub(failure.message, secretsOf(target)),
      retryAfterSeconds: failure.retryAfterSeconds,
      beforeFirstByte: failure.beforeFirstByte
    })

  const fromIssue = (target: UpstreamTarget, issue: AnswerIssue, beforeFirstByte: boolean): UpstreamError =>
    fail(target, { kind: issue.kind, message: issue.message, status: issue.status, beforeFirstByte })

  /** A timeout of the target's, by which deadline passed (its length comes from the target's timeouts). */
  const timeout = (target: UpstreamTarget, which: "connect" | "first-token" | "total", beforeFirstByte: boolean) => {
    const ms = which === "connect" ? target.timeouts.connectMs : which === "first-token" ? target.timeouts.firstTokenMs : target.timeouts.totalMs
    return fail(target, {
      kind: "timeout",
      beforeFirstByte,
      message: which === "connect"
        ? `the upstream sent no response headers within ${ms} ms (connect timeout)`
        : which === "first-token"
        ? `the upstream sent no answer within ${ms} ms (first-token timeout)`
        : `the upstream answer took longer than ${ms} ms (total timeout)`
    })
  }

  const buildRequest = (target: UpstreamTarget, body: string, streaming: boolean): HttpClientRequest.HttpClientRequest => {
    let request = HttpClientRequest.post(completionsUrl(target.baseUrl)).pipe(
      HttpClientRequest.setHeaders(target.headers),
      HttpClientRequest.setHeader("accept", streaming ? "text/event-stream" : "application/json"),
      HttpClientRequest.bodyText(body, "application/json")
    )
    if (target.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, target.apiKey)
    return request
  }

  /**
   * Sends a request; fails with kind connect when no response comes. The
   * client aborts the request when the fiber is interrupted while waiting for
   * the answer or reading a whole body, and a body read as a stream when the
   * stream's scope closes (openIn reads it in the try's scope), so a client
   * that goes away, or a deadline that closes that scope, closes the upstream
   * connection (test/chat/upstreamCancel.test.ts, through fetch and Undici).
   */
  const send = (target: UpstreamTarget, request: HttpClientRequest.HttpClientRequest) =>
    base.execute(request).pipe(
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.mapError((error) =>
        fail(target, { kind: "connect", beforeFirstByte: true, message: `could not reach the upstream: ${describeCause(httpCause(error))}` })
      )
    )

  /** A non-2xx answer as kind status, with the upstream's message and Retry-After. */
  const statusFailure = Effect.fnUntraced(function*(target: UpstreamTarget, response: HttpClientResponse.HttpClientResponse) {
    const now = yield* Clock.currentTimeMillis
    const text = yield* response.text.pipe(
      Effect.timeoutOption(ERROR_BODY_MS),
      Effect.map((body) => (body._tag === "Some" ? errorBodyText(body.value) : undefined)),
      Effect.orElseSucceed(() => undefined)
    )
    const retryAfter = retryAfterMs(response.headers, now)
    return yield* Effect.fail(fail(target, {
      kind: "status",
      status: response.status,
      beforeFirstByte: true,
      retryAfterSeconds: retryAfter === undefined ? undefined : retryAfter / 1000,
      message: response.status === 404
        ? notFoundMessage(target, text)
        : `the upstream answered ${response.status}${text === undefined ? "" : `: ${text}`}`
    }))
  })

  /**
   * Runs `attempt` again while the retry schedule allows, within the total
   * deadline. The schedule is built only once a try has failed (otherwise every
   * request would pay for building it); that first failure is
   * replayed as the retry's first try, so the schedule sees every failure.
   */
  const withRetries = <A>(target: UpstreamTarget, deadline: number, attempt: Effect.Effect<A, UpstreamError>) =>
    Effect.catch(attempt, (first) => {
      let next: Effect.Effect<A, UpstreamError> = Effect.fail(first)
      const tries = Effect.suspend(() => {
        const current = next
        next = attempt
        return current
      })
      return Effect.retry(
        tries,
        retrySchedule(target.retries, deadline).pipe(Schedule.tap(({ input, attempt: retry, duration }) =>
          Effect.logDebug("retrying upstream", {
            target: target.name,
            retry,
            kind: input.kind,
            status: input.status,
            delayMs: Math.round(Duration.toMillis(duration))
          })
        ))
      )
    })

  const invalidUrl = (target: UpstreamTarget): Effect.Effect<never, UpstreamError> =>
    Effect.fail(fail(target, { kind: "connect", beforeFirstByte: true, message: "the upstream base URL is not a valid URL" }))
  const validUrl = (target: UpstreamTarget): Effect.Effect<void, UpstreamError> => urlOf(target.baseUrl).valid ? Effect.void : invalidUrl(target)

  // --- whole completions --------------------------------------------------------

  /**
   * One try. A server may hold its headers until the whole answer is ready,
   * so headers and body share the first-token deadline (connectMs would cut
   * long generations short). The try also ends at the request's total
   * `deadline` when that comes first: one timer per try, and the retries'
   * waits never pass the deadline (retrySchedule), so the total needs none of
   * its own (a timeout is a fiber and a timer: two per request were ten steps).
   */
  const completeOnce = Effect.fnUntraced(
    function*(target: UpstreamTarget, request: ChatRequest, body: string, _deadline: number): Effect.fn.Return<ChatResult, UpstreamError> {
      const response = yield* send(target, buildRequest(target, body, false))
      if (response.status < 200 || response.status >= 300) return yield* statusFailure(target, response)
      const text = yield* response.text.pipe(Effect.mapError((error) =>
        fail(target, { kind: "stream", beforeFirstByte: true, message: `the upstream connection broke while sending the answer: ${describeCause(httpCause(error))}` })
      ))
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return yield* Effect.fail(fail(target, { kind: "protocol", beforeFirstByte: true, message: "the upstream answer is not JSON" }))
      }
      const normalized = normalizeCompletion(json)
      if (Result.isFailure(normalized)) return yield* Effect.fail(fromIssue(target, normalized.failure, true))
      // Usage only when the upstream reported it: the pipeline counts it otherwise.
      const { choices, usage } = normalized.success
      const result: ChatResult = usage === undefined ? { model: request.model, choices } : { model: request.model, choices, usage }
      return result
    },
    (effect, target, _request, _body, deadline) =>
      Effect.withFiber((fiber) => {
        const left = deadline - fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
        const firstTokenMs = target.timeouts.firstTokenMs
        return left < firstTokenMs
          ? Effect.timeoutOrElse(effect, { duration: Math.max(0, left), orElse: () => Effect.fail(timeout(target, "total", true)) })
          : Effect.timeoutOrElse(effect, { duration: firstTokenMs, orElse: () => Effect.fail(timeout(target, "first-token", true)) })
      })
  )

  // Spans without Effect.fn: its call-site and span stack captures are two Errors per request. One
  // step up to the tries, the clock read from the fiber (each Effect step costs up to a microsecond).
  const complete = (target: UpstreamTarget, request: ChatRequest): Effect.Effect<ChatResult, UpstreamError> =>
    Effect.withFiber((fiber) => spannedIn(fiber, completeFrom(fiber, target, request), "OpenAiUpstream.complete"))

  const completeFrom = (fiber: Fiber.Fiber<unknown, unknown>, target: UpstreamTarget, request: ChatRequest): Effect.Effect<ChatResult, UpstreamError> => {
    if (!urlOf(target.baseUrl).valid) return invalidUrl(target)
    const deadline = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe() + target.timeouts.totalMs
    const body = JSON.stringify(upstreamBody(target.model, target.params, request, false, target.requestDefaults))
    return withRetries(target, deadline, completeOnce(target, request, body, deadline))
  }

  // --- streams ------------------------------------------------------------------

  /** An opened stream: the chunks of the first data events, and the rest to pull. */
  interface OpenedStream {
    readonly first: ReadonlyArray<ChatChunk>
    readonly rest: Pull.Pull<Chunks, UpstreamError>
  }

  /** Reads what is left of a body (after [DONE]: its end, as a rule), for at most BODY_END_MS; whatever happens, succeeds. */
  const bodyEnd = (bytes: Pull.Pull<NonEmptyReadonlyArray<Uint8Array>, HttpClientError.HttpClientError>, timer: StreamDeadline): Effect.Effect<void> =>
    Effect.suspend(() => {
      timer.set("body-end", BODY_END_MS)
      return Effect.forever(bytes).pipe(Pull.catchDone(() => Effect.void), Effect.ignore)
    })

  /**
   * Body bytes to chunks. Chunks already parsed go out before a failure
   * that follows them; after [DONE] no event is read, only the body's end (bodyEnd).
   */
  const chunkPull = (
    target: UpstreamTarget,
    bytes: Pull.Pull<NonEmptyReadonlyArray<Uint8Array>, HttpClientError.HttpClientError>,
    normalizer: StreamNormalizer,
    timer: StreamDeadline
  ): Pull.Pull<Chunks, UpstreamError> => {
    let buffer: Array<ChatChunk> = []
    let ended = false
    const expired = () => timer.passed !== undefined
    const expiredError = () => timeout(target, timer.passed === "first-token" ? "first-token" : "total", !normalizer.started)
    const loop = (): Pull.Pull<Chunks, UpstreamError> => {
      if (buffer.length > 0) {
        const out = buffer as unknown as Chunks
        buffer = []
        return Effect.succeed(out)
      }
      if (normalizer.issue !== undefined) return Effect.fail(fromIssue(target, normalizer.issue, !normalizer.started))
      if (ended) return Cause.done()
      if (normalizer.done) {
        ended = true
        return Effect.andThen(bodyEnd(bytes, timer), Cause.done())
      }
      // No race per read: a deadline closes the body's scope, which aborts the request, and an
      // aborted request ends a pending read on both clients (test/chat/upstreamFailures.test.ts
      // over fetch, test/fault/chatFaults.test.ts over Undici). A race was two fibers a read.
      return Pull.matchEffect(bytes, {
        onSuccess: (arrays) => {
          for (let i = 0; i < arrays.length; i++) normalizer.feed(arrays[i]!, buffer)
          return loop()
        },
        onFailure: (cause) => {
          if (Cause.hasInterruptsOnly(cause) && !expired()) return Effect.failCause(cause as Cause.Cause<never>)
          if (expired()) return Effect.fail(expiredError())
          const error = Cause.findErrorOption(cause)
          const detail = error._tag === "Some" ? describeCause(httpCause(error.value)) : "unknown failure"
          return Effect.fail(fail(target, {
            kind: "stream",
            beforeFirstByte: !normalizer.started,
            message: `the upstream connection broke mid-stream: ${detail}`
          }))
        },
        onDone: () => {
          if (expired()) return Effect.fail(expiredError())
          ended = true
          normalizer.end(buffer)
          return loop()
        }
      })
    }
    return Effect.suspend(loop)
  }

  /** One try at opening a stream, in a scope of its own under the stream's scope: closed (request aborted) on failure. */
  const openOnce = Effect.fnUntraced(function*(target: UpstreamTarget, body: string, streamScope: Scope.Scope, deadline: number) {
    const scope = yield* Scope.fork(streamScope)
    return yield* openIn(target, body, scope, deadline).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
  })

  /**
   * The response head within connectMs (or by the total `deadline`, when that comes first: the
   * one race a try has); then the first data event within firstTokenMs of the start and the rest
   * by the deadline, on the try's StreamDeadline.
   */
  const openIn = Effect.fnUntraced(function*(target: UpstreamTarget, body: string, scope: Scope.Closeable, deadline: number) {
    const startedAt = yield* Clock.currentTimeMillis
    const { connectMs, firstTokenMs } = target.timeouts
    // Each wait of the try ends by the total deadline when that comes first, and is reported as the total's.
    const headersMs = Math.min(connectMs, deadline - startedAt)
    const firstBy = Math.min(startedAt + firstTokenMs, deadline)
    const firstKind = firstBy < startedAt + firstTokenMs ? "total" : "first-token"
    const response = yield* send(target, buildRequest(target, body, true)).pipe(
      Effect.timeoutOrElse({
        duration: Math.max(0, headersMs),
        orElse: () => Effect.fail(timeout(target, headersMs < connectMs ? "total" : "connect", true))
      })
    )
    if (response.status < 200 || response.status >= 300) return yield* statusFailure(target, response)
    if (isJsonContent(response)) {
      // A server that ignored stream:true, or answered 200 with an error object.
      // Read within the first-token deadline: a server that sends JSON headers and then stalls is not waited for.
      const left = Math.max(0, firstBy - (yield* Clock.currentTimeMillis))
      const read = yield* response.text.pipe(Effect.timeoutOption(left), Effect.orElseSucceed(() => undefined))
      if (read !== undefined && read._tag === "None") return yield* Effect.fail(timeout(target, firstKind, true))
      const text = errorBodyText(read === undefined ? "" : read.value)
      return yield* Effect.fail(fail(target, {
        kind: "protocol",
        beforeFirstByte: true,
        message: `the upstream answered a streaming request with JSON instead of events${text === undefined ? "" : `: ${text}`}`
      }))
    }
    const normalizer = new StreamNormalizer()
    const timer = new StreamDeadline(scope)
    yield* Scope.addFinalizer(scope, Effect.sync(timer.clear))
    // The body's own pull: Stream.toPull wraps every read in a copy of the fiber's whole context
    // and a semaphore permit (Channel.toPull), for a pull only this stream's fiber takes.
    const bytes = yield* Channel.toPullScoped(response.stream.channel, scope)
    const rest = chunkPull(target, bytes, normalizer, timer)
    timer.set(firstKind, firstBy - (yield* Clock.currentTimeMillis))
    const first = yield* Pull.catchDone(rest, () => Effect.succeed<ReadonlyArray<ChatChunk>>([]))
    timer.set("total", deadline - (yield* Clock.currentTimeMillis))
    return { first, rest } satisfies OpenedStream
  })

  /** Until the first chunks are in: connect, retries and first token (the span ends there, nothing per chunk). */
  const open = (target: UpstreamTarget, request: ChatRequest) => spanned(openUntraced(target, request), "OpenAiUpstream.stream")

  const openUntraced = Effect.fnUntraced(function*(target: UpstreamTarget, request: ChatRequest) {
    yield* validUrl(target)
    const streamScope = yield* Effect.scope
    const { totalMs } = target.timeouts
    const deadline = (yield* Clock.currentTimeMillis) + totalMs
    const body = JSON.stringify(upstreamBody(target.model, target.params, request, true, target.requestDefaults))
    // Each try's waits end by the deadline, and the retries' waits never pass it (retrySchedule).
    const opened = yield* withRetries(target, deadline, openOnce(target, body, streamScope, deadline))
    return answerStream(opened)
  })

  /**
   * The first chunks, then the rest, from one pull that reaches the open answer only until the
   * stream's scope closes. Effect makes the closure of each stream stage in V8's old generation
   * (Channel.fromTransform writes a function literal to a property) and Stream.concat records its
   * parts in a long-lived WeakMap: either keeps what a stage's definition reaches alive through
   * young collections until a full one, and this one reached every chunk and the upstream body.
   */
  const answerStream = (opened: OpenedStream): Stream.Stream<ChatChunk, UpstreamError> => {
    let open: OpenedStream | undefined = opened
    let first = opened.first.length > 0
    const pull: Pull.Pull<Chunks, UpstreamError> = Effect.suspend(() => {
      if (open === undefined) return Cause.done()
      if (!first) return open.rest
      first = false
      return Effect.succeed(open.first as Chunks)
    })
    return fromArrayPull(pull, Effect.sync(() => {
      open = undefined
    }))
  }

  const stream = (target: UpstreamTarget, request: ChatRequest): Stream.Stream<ChatChunk, UpstreamError> => Stream.unwrap(open(target, request))

  return UpstreamClient.of({ complete, stream })
})

/** UpstreamClient for OpenAI-compatible servers over the HttpClient in context. */
export const layer: Layer.Layer<UpstreamClient, never, HttpClient.HttpClient> = Layer.effect(UpstreamClient, make)

/** The same over fetch (Node 18+, Deno, browsers): nothing else to provide. */
export const layerFetch: Layer.Layer<UpstreamClient> = layer.pipe(Layer.provide(FetchHttpClient.layer))

export const OpenAiUpstream = { make, layer, layerFetch } as const
