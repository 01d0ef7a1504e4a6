/**
 * Per request, around every route (a global middleware, outside the error
 * boundary so it sees the status the client gets): the server span
 * "<METHOD> <route>" whose children are the auth, search and upstream spans
 * (when a tracer is configured; W3C traceparent continues a caller's trace).
 * Sampling is parent-based: a caller's traceparent flag decides, else a share
 * `traceSampleRatio` of requests is traced. An unsampled request runs with the
 * tracer off (no span objects but no-op ones, nothing exported, no traceparent
 * sent upstream): tracing every request costs much of the throughput
 * (test/bench/http.ts --only observability).
 * Then:
 * Prometheus metrics by method, route and status, and one JSON access-log line
 * (time, method, route, status, ms, key name - never the key - and request id).
 * Latency is to the response head: a chat stream is timed by the model metrics.
 * Plain code on the hot path: the counts are plain numbers (RequestMetrics), and
 * with metrics alone (no access log, no tracer) nothing else is done per request.
 */
import { type Cause, Context, Effect, type Exit, type Option, References, Tracer, type Types } from "effect"
import { type Headers, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse, HttpTraceContext } from "effect/http"
import { type PrincipalCell, RequestPrincipal } from "../auth/RequestPrincipal.ts"
import { allowedMethods } from "./Api.ts"
import { pathOfUrl } from "./ApiError.ts"
import { recordRequest } from "./RequestMetrics.ts"
import { SampledTracing } from "./SampledTracing.ts"

export interface TelemetryOptionsShape {
  /** One JSON line per request on stdout (the `logRequests` setting). */
  readonly accessLog: boolean
  /** Count requests for GET /metrics. */
  readonly metrics: boolean
  /** Serve GET /metrics without an API key. */
  readonly metricsPublic: boolean
  /** Share (0 to 1) of requests without a caller's sampling decision that are traced. */
  readonly traceSampleRatio: number
}

/**
 * Share of requests traced when the caller sent no sampling decision. 1%: tracing every request
 * costs much of the webSearch throughput (test/bench/http.ts --only observability); a caller's
 * sampled traceparent is always followed, so one request can still be traced on demand.
 */
export const DEFAULT_TRACE_SAMPLE_RATIO = 0.01

export const TelemetryOptions = Context.Reference<TelemetryOptionsShape>("periscope/api/TelemetryOptions", {
  defaultValue: () => ({ accessLog: false, metrics: true, metricsPublic: false, traceSampleRatio: DEFAULT_TRACE_SAMPLE_RATIO })
})

/**
 * Runs an unsampled request with tracing off: spans become shared-shape no-op
 * objects and the HTTP client neither makes client spans nor sends a traceparent.
 * The application's layers turn tracing off by default (core/app/Tracing.ts),
 * and then nothing is done: this is for a context that did not.
 */
const untracedContext = Context.make(References.TracerEnabled, false).pipe(Context.add(Tracer.DisablePropagation, true))
const untraced = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.provideContext(effect, untracedContext)

/** The Prometheus scrape: a plain route beside the contract (MetricsRoute), labelled as itself. */
export const METRICS_PATH = "/metrics"

/** Paths outside the contract are one label, so that scanning for URLs cannot grow the series. */
const routeOf = (url: string): string => {
  const path = pathOfUrl(url)
  return allowedMethods.has(path) || path === METRICS_PATH ? path : "unmatched"
}

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])

/**
 * The status an answer that ended in failure is logged and counted with, by the rule Effect's server
 * answers it with (and its span records): 499 when the client went away (an interrupt marked
 * ClientAbort), 503 when the server stopped it, else 500.
 */
export const failureStatus = (cause: Cause.Cause<unknown>): number => {
  const reasons = cause.reasons
  if (reasons.length === 0 || !reasons.every((reason) => reason._tag === "Interrupt")) return 500
  return reasons.some((reason) => reason.annotations.has(HttpServerError.ClientAbort.key)) ? 499 : 503
}

/** The status of an answer's exit. */
export const exitStatus = <A, E>(exit: Exit.Exit<A, E>, statusOf: (answer: A) => number): number =>
  exit._tag === "Success" ? statusOf(exit.value) : failureStatus(exit.cause)

/** Counts one answered request by method, route and status, timed from `startedAt` (performance.now()). */
const countRequest = (request: RequestHead, status: number, startedAt: number, context: Context.Context<never>) =>
  recordRequest(METHODS.has(request.method) ? request.method : "OTHER", routeOf(request.url), status, (performance.now() - startedAt) / 1000, context)

/**
 * New request ids: a random per-process prefix and a counter. Unique across instances and
 * restarts (64 random bits), and cheap: random bytes drawn per request show in a webSearch's
 * CPU (test/bench/http.ts).
 */
const idPrefix = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("")
let idCounter = 0

/** The caller's X-Request-Id when it is a plain token, else a new one. */
const requestIdOf = (header: string | undefined): string =>
  header !== undefined && /^[A-Za-z0-9._:-]{1,128}$/.test(header)
    ? header
    : `${idPrefix}${(idCounter++).toString(16).padStart(8, "0")}`

/** What telemetry reads of a request: Effect's server request and the express lane's alike. */
export interface RequestHead {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The connecting peer's IP address (not a forwarded one), where the server knows it: HttpServerRequest's own field. */
  readonly peerAddress?: Option.Option<string> | undefined
}

/** How telemetry reads and marks an answer of type A. */
export interface AnswerOps<A> {
  readonly status: (answer: A) => number
  readonly withRequestId: (answer: A, requestId: string) => A
}

export interface RequestInstrument {
  /** False when there is nothing to do (no metrics, no access log, no tracer): callers skip the wrap. */
  readonly active: boolean
  /** `effect`, the answer to `request`, counted, timed, logged and traced as configured. */
  readonly around: <A, E, R>(request: RequestHead, effect: Effect.Effect<A, E, R>, ops: AnswerOps<A>) => Effect.Effect<A, E, R>
  /**
   * Set when counting is all there is to do (metrics on; no access log, no tracer): a caller that
   * watches the answer's fiber (the express lane) counts the answer's status and time, from
   * `startedAt` (performance.now()), with this plain call instead of wrapping it in `around`.
   */
  readonly count: ((request: RequestHead, status: number, startedAt: number) => void) | undefined
}

/** Reads the options and the tracer once; the returned instrument does the per-request work. */
export const makeRequestInstrument: Effect.Effect<RequestInstrument> = Effect.gen(function*() {
  const options = yield* TelemetryOptions
  // The application's tracer (OTLP when configured), whatever the server's own context holds.
  const tracer = yield* Tracer.Tracer
  const tracing = tracer !== Tracer.nativeTracer
  // Tracing off by default: unsampled requests run as they are (swapping a context in and out
  // was most of tracing's cost); sampled ones turn it on, and HttpApi handlers, which run under
  // their group's context, turn it on again from SampledTracing (core/api/SampledTracing.ts).
  const unsampled: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = (yield* References.TracerEnabled) ? untraced : (effect) => effect
  const sampledBase = Context.make(Tracer.Tracer, tracer).pipe(
    Context.add(References.TracerEnabled, true),
    Context.add(Tracer.DisablePropagation, false)
  )
  const sampledContext = Context.add(sampledBase, SampledTracing, sampledBase)
  const context = yield* Effect.context<never>()
  const count = (request: RequestHead, status: number, startedAt: number) => countRequest(request, status, startedAt, context)
  const around = <A, E, R>(request: RequestHead, answer: Effect.Effect<A, E, R>, ops: AnswerOps<A>): Effect.Effect<A, E, R> => {
    // Metrics alone (the default, and every unsampled request without an access log): count and
    // time, nothing else. A request id, the principal cell and the response header serve logs and
    // traces only, and what they cost shows in a webSearch's CPU (test/bench/http.ts --only observability).
    const measured = (effect: Effect.Effect<A, E, R>) =>
      Effect.withFiber((fiber) => {
        const start = performance.now()
        return Effect.onExit(effect, (exit) => {
          if (options.metrics) countRequest(request, exitStatus(exit, ops.status), start, fiber.context)
          return Effect.void
        })
      })
    if (!options.accessLog && !tracing) return measured(answer)
    return Effect.withFiber((fiber) => {
      const parent = tracing ? HttpTraceContext.fromHeaders(request.headers as Headers.Headers) : undefined
      const sampled = parent === undefined
        ? false
        : parent._tag === "Some" ? parent.value.sampled : Math.random() < options.traceSampleRatio
      if (tracing && !sampled && !options.accessLog) return unsampled(measured(answer))
      const start = performance.now()
      const method = METHODS.has(request.method) ? request.method : "OTHER"
      const route = routeOf(request.url)
      const requestId = requestIdOf(request.headers["x-request-id"])
      const cell: PrincipalCell = { keyName: undefined }
      let traceId: string | undefined
      const finish = (status: number) => {
        const ms = performance.now() - start
        if (options.metrics) recordRequest(method, route, status, ms / 1000, fiber.context)
        if (options.accessLog) {
          globalThis.console.log(JSON.stringify({
            time: new Date().toISOString(),
            method,
            route,
            status,
            ms: Math.round(ms * 100) / 100,
            key: cell.keyName ?? null,
            requestId,
            ...(traceId === undefined ? {} : { traceId })
          }))
        }
      }
      let effect = answer.pipe(
        Effect.map((value) => ops.withRequestId(value, requestId)),
        Effect.onExit((exit) => Effect.sync(() => finish(exitStatus(exit, ops.status)))),
        Effect.provideService(RequestPrincipal, cell)
      )
      if (parent !== undefined) {
        if (!sampled) return unsampled(effect)
        effect = effect.pipe(
          Effect.tap(() => Effect.map(Effect.currentSpan, (span) => void (traceId = span.traceId)).pipe(Effect.ignore)),
          Effect.withSpan(`${method} ${route}`, {
            kind: "server",
            ...(parent._tag === "Some" ? { parent: parent.value } : {}),
            attributes: { "http.request.method": request.method, "http.route": route, "periscope.request_id": requestId }
          }),
          Effect.provideContext(sampledContext)
        )
      }
      return effect
    })
  }
  return { active: options.metrics || options.accessLog || tracing, around, count: options.metrics && !options.accessLog && !tracing ? count : undefined }
})

const responseOps: AnswerOps<HttpServerResponse.HttpServerResponse> = {
  status: (response) => response.status,
  withRequestId: (response, requestId) => HttpServerResponse.setHeader(response, "x-request-id", requestId)
}

export const RequestTelemetry = HttpRouter.middleware()(
  Effect.map(makeRequestInstrument, (instrument) =>
    (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled> =>
      instrument.active
        ? Effect.withFiber((fiber) => instrument.around(Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest), httpEffect, responseOps))
        : httpEffect),
  { global: true }
)
