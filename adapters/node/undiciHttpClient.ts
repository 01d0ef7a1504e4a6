/**
 * The Node platform's HttpClient (model servers, search providers, snapshot
 * URLs, trace export) over Undici's `dispatch` and a response handler of ours,
 * in place of @effect/platform-node's client over Undici's `request` API (a
 * Readable per body, a promise per request, a cached effect per body read).
 * Kept because it pays: with it the gateway streams more requests per second
 * on less CPU than with NodeHttpClient.layerUndici (test/bench/gateway.ts).
 *
 * A traced request goes through Effect's HttpClient.make, for its span,
 * propagation headers and redaction. An untraced one (the server's default:
 * core/app/Tracing.ts turns propagation off) is sent directly: make wraps
 * every response to abort its controller when the body is done, and an
 * AbortController's abort() builds a DOMException with a stack, a large share
 * of a streamed answer's CPU. Here an interruption aborts the exchange
 * (the request's callback, a whole read's onInterrupt, a stream's close), and
 * a response collected unread aborts it too, as make's registry does. Not
 * carried over: HttpClient.withScope's abort when its scope closes (and
 * followRedirects' of a redirect's response), whose controllers sit in a map
 * private to make. No code of ours uses either; an untraced response under
 * withScope left unread is aborted when collected.
 *
 * A body is kept as the chunks Undici hands over. Read whole (text, json,
 * arrayBuffer) it is joined once, when it has ended; read as a stream, each
 * pull takes the chunks that have arrived, and the connection is paused while
 * more than 64 KiB wait unread. A body is read one way, once. Closing a
 * stream before its body ended aborts the request (the connection closes), as
 * does the client's abort signal (an interrupted request). HTTP upgrades are
 * not handed over: `upgrade` fails as it does over fetch.
 */
import type { IncomingHttpHeaders } from "node:http"
import type { Readable } from "node:stream"
import { NodeStream } from "@effect/platform-node"
import { Cause, Effect, Layer, Option, Pipeable, Result, type Schema, type Stream, Tracer } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { Cookies, Headers, HttpClient, HttpClientError, type HttpClientRequest, HttpClientResponse, HttpIncomingMessage, Url, UrlParams } from "effect/http"
import { NodeInspectSymbol } from "effect/Inspectable"
import { Agent, type Dispatcher, FormData as UndiciFormData } from "undici"
import { fromArrayPull } from "../../core/chat/ArrayStreams.ts"
import { joinChunks } from "../../core/ingest/crawl/ByteChunks.ts"

/** Unread bytes above which a streamed body's connection is paused until the reader catches up. */
const HIGH_WATER_BYTES = 64 * 1024

const utf8 = new TextDecoder()

/** A response collected before its body was read aborts its request: a paused body would otherwise hold its connection. */
const unread = new FinalizationRegistry<Exchange>((exchange) => exchange.closeEarly())

/** One request's Undici handler: the response head, then its body as it arrives. */
class Exchange implements Dispatcher.DispatchHandler {
  controller: Dispatcher.DispatchController | undefined
  status = 0
  headers: IncomingHttpHeaders = {}
  chunks: Array<Uint8Array> = []
  buffered = 0
  ended = false
  failure: Error | undefined = undefined
  /** Read whole: never paused. */
  whole = false
  /** Set before the response starts: the request failed, or its head came. */
  onHead: ((error: Error | undefined) => void) | undefined
  /** A reader waiting for a chunk, the end or a failure. */
  wake: (() => void) | undefined
  private abortReason: Error | undefined
  private signal: AbortSignal | undefined

  /**
   * Aborts on `signal` until the response ends. The listener is removed then: Effect's client
   * holds the signal's controller (for a FinalizationRegistry) until the response is collected,
   * and the body need not live that long.
   */
  listenTo(signal: AbortSignal) {
    this.signal = signal
    signal.addEventListener("abort", this)
  }
  handleEvent() {
    this.abort(this.signal!.reason)
  }
  private unlisten() {
    this.signal?.removeEventListener("abort", this)
    this.signal = undefined
  }

  /** The body ended or failed: nothing is left to abort. */
  private get settled(): boolean {
    return this.ended || this.failure !== undefined
  }

  abort(reason: Error) {
    if (this.settled) return
    if (this.controller === undefined) this.abortReason ??= reason
    else this.controller.abort(reason)
  }

  /** A reader stopped before the body ended: the request is aborted. The reason (an Error, whose stack is costly) is made only then. */
  closeEarly() {
    if (!this.settled) this.abort(new Error("the response body was closed before it ended"))
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller
    if (this.abortReason !== undefined) controller.abort(this.abortReason)
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders) {
    if (status < 200) return // 1xx informational: the real head follows
    this.status = status
    this.headers = headers
    const onHead = this.onHead
    this.onHead = undefined
    onHead?.(undefined)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Uint8Array) {
    this.chunks.push(chunk)
    this.buffered += chunk.length
    if (this.wake !== undefined) this.wakeReader()
    else if (!this.whole && this.buffered > HIGH_WATER_BYTES && !controller.paused) controller.pause()
  }

  onResponseEnd() {
    this.ended = true
    this.unlisten()
    this.wakeReader()
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    this.failure = error
    this.unlisten()
    const onHead = this.onHead
    this.onHead = undefined
    if (onHead !== undefined) onHead(error)
    else this.wakeReader()
  }

  /** The chunks that arrived, handed to a reader; a paused connection resumes. */
  take(): NonEmptyReadonlyArray<Uint8Array> {
    const taken = this.chunks as unknown as NonEmptyReadonlyArray<Uint8Array>
    this.chunks = []
    this.buffered = 0
    if (this.controller?.paused === true) this.controller.resume()
    return taken
  }

  private wakeReader() {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }
}

/** Waits until the exchange has news for a reader (a chunk, the end or a failure). */
const news = (exchange: Exchange): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const wake = () => resume(Effect.void)
    exchange.wake = wake
    return Effect.sync(() => {
      exchange.wake = undefined
    })
  })

class UndiciResponse implements HttpClientResponse.HttpClientResponse {
  readonly [HttpClientResponse.TypeId] = HttpClientResponse.TypeId
  readonly [HttpIncomingMessage.TypeId] = HttpIncomingMessage.TypeId
  private cachedHeaders: Headers.Headers | undefined
  private cachedCookies: Cookies.Cookies | undefined
  private body: Effect.Effect<Uint8Array, HttpClientError.HttpClientError> | undefined

  readonly request: HttpClientRequest.HttpClientRequest
  readonly url: string
  private readonly exchange: Exchange

  constructor(request: HttpClientRequest.HttpClientRequest, exchange: Exchange, url: string) {
    this.request = request
    this.exchange = exchange
    this.url = url
    unread.register(this, exchange, exchange)
  }

  get status() {
    return this.exchange.status
  }
  get headers(): Headers.Headers {
    return (this.cachedHeaders ??= Headers.fromInput(this.exchange.headers as Record<string, string | ReadonlyArray<string> | undefined>))
  }
  get cookies(): Cookies.Cookies {
    const header = this.exchange.headers["set-cookie"]
    return (this.cachedCookies ??= header === undefined ? Cookies.empty : Cookies.fromSetCookie(header))
  }
  get remoteAddress() {
    return Option.none<string>()
  }

  private decodeError(cause: unknown): HttpClientError.HttpClientError {
    return new HttpClientError.HttpClientError({ reason: new HttpClientError.DecodeError({ request: this.request, response: this, cause }) })
  }

  /** The whole body, once it has ended (joined once; later reads get the same bytes). */
  private get bytes(): Effect.Effect<Uint8Array, HttpClientError.HttpClientError> {
    if (this.body !== undefined) return this.body
    const exchange = this.exchange
    unread.unregister(exchange)
    exchange.whole = true
    if (exchange.controller?.paused === true) exchange.controller.resume()
    const collect: Effect.Effect<Uint8Array, HttpClientError.HttpClientError> = Effect.suspend(() => {
      if (exchange.failure !== undefined) return Effect.fail(this.decodeError(exchange.failure))
      if (!exchange.ended) return Effect.andThen(news(exchange), collect)
      const bytes = joinChunks(exchange.chunks, exchange.buffered)
      exchange.chunks = []
      this.body = Effect.succeed(bytes)
      return this.body
    })
    return Effect.onInterrupt(collect, () => Effect.sync(() => exchange.closeEarly()))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    return Effect.map(this.bytes, (bytes) =>
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
        ? bytes.buffer
        : bytes.slice().buffer as ArrayBuffer)
  }
  get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    return Effect.map(this.bytes, (bytes) => utf8.decode(bytes))
  }
  get json(): Effect.Effect<Schema.Json, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => (text === "" ? null : JSON.parse(text)), catch: (cause) => this.decodeError(cause) }))
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        // A leading "?" is form data; URLSearchParams would drop it as a query prefix (as Effect's clients read it).
        try: () => UrlParams.fromInput(new URLSearchParams(text.replace(/^\?/, "%3F"))),
        catch: (cause) => this.decodeError(cause)
      }))
  }
  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.bytes, (bytes) =>
      Effect.tryPromise({
        try: () => new Response(bytes as Uint8Array<ArrayBuffer>, { headers: this.headers as Record<string, string> }).formData(),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  /** Chunks as they arrive; the request is aborted when the stream closes before the body ended. */
  get stream(): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> {
    const exchange = this.exchange
    unread.unregister(exchange)
    const pull: Effect.Effect<NonEmptyReadonlyArray<Uint8Array>, HttpClientError.HttpClientError | Cause.Done> = Effect.suspend(() => {
      if (exchange.chunks.length > 0) return Effect.succeed(exchange.take())
      if (exchange.failure !== undefined) return Effect.fail(this.decodeError(exchange.failure))
      if (exchange.ended) return Cause.done()
      return Effect.andThen(news(exchange), pull)
    })
    return fromArrayPull(pull, Effect.sync(() => exchange.closeEarly()))
  }

  get upgrade(): Effect.Effect<never, HttpClientError.HttpClientError> {
    return Effect.fail(new HttpClientError.HttpClientError({
      reason: new HttpClientError.StatusCodeError({ request: this.request, response: this, description: "this client does not hand over the connection of an HTTP upgrade" })
    }))
  }

  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, { _id: "effect/http/HttpClientResponse", request: this.request.toJSON(), status: this.status })
  }
  toString() {
    return JSON.stringify(this.toJSON())
  }
  [NodeInspectSymbol](): unknown {
    return this.toJSON()
  }
  pipe() {
    return Pipeable.pipeArguments(this, arguments)
  }
}

/** The request body as Undici takes it. */
const bodyOf = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<{ body: Dispatcher.DispatchOptions["body"]; headers: Headers.Headers }> => {
  const { body, headers } = request
  switch (body._tag) {
    case "Empty":
      return Effect.succeed({ body: null, headers })
    case "Uint8Array":
    case "Raw":
      return Effect.succeed({ body: body.body as Dispatcher.DispatchOptions["body"], headers })
    case "FormData": {
      const form = new UndiciFormData()
      for (const [key, value] of body.formData) form.append(key, value)
      // Undici writes the multipart content type with its boundary.
      return Effect.succeed({ body: form as unknown as Dispatcher.DispatchOptions["body"], headers: Headers.remove(headers, "content-type") })
    }
    case "Stream":
      return Effect.map(NodeStream.toReadable(body.stream), (readable) => ({ body: readable as Readable, headers }))
  }
}

/** Sends `request` over `dispatcher`: its response once the head came. `signal` (Effect's, for a traced request) aborts it too. */
const send = (dispatcher: Dispatcher, request: HttpClientRequest.HttpClientRequest, url: URL, signal: AbortSignal | undefined) =>
  Effect.flatMap(bodyOf(request), ({ body, headers }) =>
    Effect.callback<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((resume) => {
      const exchange = new Exchange()
      const transportError = (cause: unknown) =>
        Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) }))
      const onHead = (error: Error | undefined) =>
        resume(error === undefined ? Effect.succeed(new UndiciResponse(request, exchange, url.href.split("#")[0]!)) : transportError(error))
      exchange.onHead = onHead
      if (signal?.aborted === true) exchange.abort(signal.reason)
      else if (signal !== undefined) exchange.listenTo(signal)
      try {
        dispatcher.dispatch({
          origin: url.origin,
          path: url.pathname + url.search,
          method: request.method as Dispatcher.HttpMethod,
          headers: headers as Record<string, string>,
          body,
          // Deadlines are the caller's (Effect timeouts), as in Effect's Undici client.
          headersTimeout: 60 * 60 * 1000,
          bodyTimeout: 0
        }, exchange)
      } catch (cause) {
        exchange.onHead = undefined
        resume(transportError(cause))
      }
      return Effect.sync(() => exchange.abort(new Error("the request was interrupted")))
    })
  )

/** An untraced request, as make's untraced branch sends it, without the response wrapper (see the top). */
const sendUntraced = (dispatcher: Dispatcher, request: HttpClientRequest.HttpClientRequest) => {
  const url = Url.make(request.url, request.urlParams, Option.getOrUndefined(request.hash))
  return Result.isFailure(url)
    ? Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.InvalidUrlError({ request, cause: url.failure }) }))
    : send(dispatcher, request, url.success, undefined)
}

/** An HttpClient over `dispatcher`: Effect's make for a traced request, sendUntraced otherwise (told apart as make tells them). */
export const make = (dispatcher: Dispatcher): HttpClient.HttpClient => {
  const traced = HttpClient.make((request, url, signal) => send(dispatcher, request, url, signal))
  return HttpClient.makeWith(
    (requests) =>
      Effect.flatMap(requests, (request) =>
        Effect.withFiber<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((fiber) =>
          fiber.getRef(Tracer.DisablePropagation) || fiber.getRef(HttpClient.TracerDisabledWhen)(request)
            ? sendUntraced(dispatcher, request)
            : traced.postprocess(Effect.succeed(request)))),
    (request: HttpClientRequest.HttpClientRequest) => Effect.succeed(request)
  )
}

/** The client over an Undici Agent of its own, closed with the layer. */
export const layer: Layer.Layer<HttpClient.HttpClient> = Layer.effect(HttpClient.HttpClient)(
  Effect.map(Effect.acquireRelease(Effect.sync(() => new Agent()), (agent) => Effect.promise(() => agent.destroy())), make)
)
