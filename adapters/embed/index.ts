/**
 * Periscope in-process: `createPeriscope(options)` gives a Promise API
 * (webSearch, imageSearch, chat, chatStream, responses, responsesStream) and a fetch(Request) handler for
 * callers who do not use Effect; the Layers are exported for those who do.
 * The Promise API validates input exactly like the HTTP endpoints and runs
 * no auth (the caller is in-process); the fetch handler is the full HTTP
 * contract, keys included.
 */
import { FetchHttpClient } from "effect/http"
import { Cause, Duration, Effect, Exit, FileSystem, Layer, ManagedRuntime, Result, Schema, Stream } from "effect"
import { ApiError, statusOf, toChatErrorBody, toSearchErrorBody } from "../../core/api/ApiError.ts"
import { chatRequestOf, completeChat, decodeChatRequest, streamChat } from "../../core/api/ChatHandlers.ts"
import { decodeImageSearchRequest, decodeSearchRequest } from "../../core/api/SearchHandlers.ts"
import { fromFederationError, internalError } from "../../core/api/DomainErrors.ts"
import { type AppServices, makeWebHandler } from "../../core/api/HttpApp.ts"
import type { SearchBody } from "../../core/api/SearchWire.ts"
import type { ResponseObject, ResponseStreamEvent } from "../../core/api/responses/ResponseObject.ts"
import { completeResponse, streamResponse } from "../../core/api/responses/ResponsesHandlers.ts"
import { decodeResponsesRequest, type ResponseCreateRequest as ResponseCreateRequestSchema } from "../../core/api/responses/ResponsesRequest.ts"
import { responsesToChat } from "../../core/api/responses/ResponsesToChat.ts"
import { FederatedSearch } from "../../core/search/FederatedSearch.ts"
import { appLayer } from "../../core/app/Application.ts"
import { setupKeys } from "../../core/app/KeySetup.ts"
import type { SearchChoice } from "../../core/app/SearchBackend.ts"
import { ApiKeys } from "../../core/auth/ApiKeys.ts"
import type { KeyRecord } from "../../core/auth/KeyRecord.ts"
import { RateLimits } from "../../core/auth/RateLimits.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat, type ScriptedChatOptions } from "../../core/backends/ScriptedChat.ts"
import type { ChatConfig } from "../../core/config/ChatConfig.ts"
import type { EmbeddingsConfig, RerankerConfig } from "../../core/config/EmbeddingsConfig.ts"
import { WarmUpMs, warmUpMsRule } from "../../core/config/ConfigFile.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import type { ChatCompletionChunk, ChatCompletionResponse } from "../../core/chat/ChatCompletion.ts"
import { ChatGateway, type ValidationPolicy } from "../../core/chat/ChatGateway.ts"
import { ChatModel } from "../../core/chat/ChatModel.ts"
import type { ChatCompletionRequest as ChatCompletionRequestSchema } from "../../core/chat/ChatRequest.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { PageFetcher } from "../../core/ingest/crawl/PageFetcher.ts"
import { JobRunner, JobWorkers } from "../../core/jobs/JobRunner.ts"
import { ImageSearch } from "../../core/search/ImageSearch.ts"
import type { SearchQuery } from "../../core/search/SearchQuery.ts"
import type { ImageResult, WebSearchData } from "../../core/search/SearchResult.ts"
import { WebSearch } from "../../core/search/WebSearch.ts"

export interface PeriscopeOptions {
  /**
   * Search: the engine over snapshot bytes (a file written by `periscope index`),
   * documents for the fixture backend, or any Layer providing WebSearch and ImageSearch.
   * Default: the fixture backend over Periscope's own sample documents. `warmUpMs`: answer
   * warm-up queries made from the snapshot's page titles for about that long on first use, so
   * later queries find the query path compiled (the Node server does 1500; default 0); an
   * integer from 0 to 60000, else createPeriscope throws a RangeError saying so.
   */
  readonly search?:
    | { readonly snapshot: Uint8Array; readonly warmUpMs?: number }
    | { readonly documents: ReadonlyArray<IndexDocument> }
    | { readonly layer: Layer.Layer<WebSearch | ImageSearch> }
  /**
   * Chat: upstreams and models as in the config file's `chat` section, a
   * script for the scripted backend, or any Layer providing ChatModel.
   * Default: the built-in periscope-grounded model over the search backend.
   */
  readonly chat?: { readonly config: ChatConfig } | ScriptedChatOptions | { readonly layer: Layer.Layer<ChatModel> }
  /** Keys the fetch handler accepts, in plain (hashed at once). */
  readonly apiKeys?: ReadonlyArray<string>
  /** Keys as hashed records (name, sha256, requestsPerMinute). */
  readonly keys?: ReadonlyArray<KeyRecord>
  /** What happens to tool calls and JSON replies that fail validation. Default: retry twice. */
  readonly validation?: ValidationPolicy
  /** Silence on a chat stream before a keep-alive comment. Default 15 seconds. */
  readonly streamKeepAlive?: Duration.Input
  /** Hybrid retrieval: the embedding server the snapshot's vectors came from, as the config file's `search.embeddings` (docs/hybrid.md). */
  readonly embeddings?: EmbeddingsConfig
  /** A reranker for the best results, as the config file's `search.reranker`. */
  readonly reranker?: RerankerConfig
}

/** A failure of the Promise API: the HTTP status and wire body the same call would get over HTTP. */
export class PeriscopeError extends Error {
  readonly status: number
  readonly kind: ApiError["kind"]
  readonly param: string | null
  readonly error: ApiError
  constructor(error: ApiError) {
    super(error.message)
    this.name = "PeriscopeError"
    this.status = statusOf[error.kind]
    this.kind = error.kind
    this.param = error.param ?? null
    this.error = error
  }
  /** The body the search endpoints answer with. */
  get searchBody() {
    return toSearchErrorBody(this.error)
  }
  /** The body the chat endpoint answers with. */
  get chatBody() {
    return toChatErrorBody(this.error)
  }
}

/** A search request as the endpoint takes it: `keywords`, optional `num` and options. */
export type SearchRequest = typeof SearchBody.Encoded
/** @deprecated the same as {@link SearchRequest} */
export type SearchInput = SearchRequest
/** A chat request as `POST /v1/chat/completions` takes it (OpenAI's body: model, messages, tools, ...). */
export type ChatCompletionRequest = typeof ChatCompletionRequestSchema.Encoded
/** A request as `POST /v1/responses` takes it (OpenAI's Responses API body: model, input, instructions, tools, ...). */
export type ResponseCreateRequest = typeof ResponseCreateRequestSchema.Encoded
export type { ChatCompletionChunk, ChatCompletionResponse, ImageResult, ResponseObject, ResponseStreamEvent, WebSearchData }

export interface Periscope {
  /**
   * Keywords in, ranked pages out; the search options of the HTTP endpoint (freshness, domains, sources, ...)
   * apply too. With `content` (highlights, markdown or text) each result also carries the page's `content`
   * (its snippet when the page could not be read).
   */
  webSearch(request: SearchRequest): Promise<WebSearchData>
  imageSearch(request: SearchRequest): Promise<ReadonlyArray<ImageResult>>
  /** A whole completion; `stream` in the request is ignored. Input is checked as the endpoint checks it. */
  chat(request: ChatCompletionRequest): Promise<ChatCompletionResponse>
  /** Completion chunks as they are produced; breaking out of the loop cancels the backend. */
  chatStream(request: ChatCompletionRequest): AsyncIterable<ChatCompletionChunk>
  /**
   * OpenAI's Responses API (docs/responses.md): the response object `POST /v1/responses` answers; `stream` in the
   * request is ignored. Input is checked as the endpoint checks it, and refused with the same error.
   */
  responses(request: ResponseCreateRequest): Promise<ResponseObject>
  /**
   * The Responses API's stream events, response.created to response.completed; a failure before the first event
   * throws, one after it ends the events with response.failed (as on the wire). Breaking out cancels the backend.
   */
  responsesStream(request: ResponseCreateRequest): AsyncIterable<ResponseStreamEvent>
  /** The HTTP contract as a fetch handler: same routes, errors and auth as the server. */
  fetch(request: Request): Promise<Response>
  /** A key made for the fetch handler when none was given; undefined otherwise. */
  readonly apiKey: string | undefined
  close(): Promise<void>
}

const searchChoiceOf = (search: PeriscopeOptions["search"]): SearchChoice => {
  if (search === undefined) return { _tag: "Fixture", documents: sampleDocuments }
  if ("layer" in search) return { _tag: "Layer", layer: search.layer }
  if ("snapshot" in search) {
    // Checked as the config file's `search.warmUpMs` is: a typed option can still be NaN or -1.
    const warmUpMs: unknown = search.warmUpMs
    if (warmUpMs !== undefined && !Schema.is(WarmUpMs)(warmUpMs)) throw new RangeError(`search.warmUpMs: ${warmUpMsRule}, got ${String(warmUpMs)}`)
    return { _tag: "EngineBytes", bytes: search.snapshot, warmUpMs: search.warmUpMs }
  }
  return { _tag: "Fixture", documents: search.documents }
}

/**
 * In-process there are no files to read: the caller hands over bytes and documents. Nor threads
 * of our own: heavy jobs (reading pages, large validations) run on the caller's thread
 * (docs/embedding.md says what that leaves out).
 */
const embedPlatform = Layer.mergeAll(FileSystem.layerNoop({}), FetchHttpClient.layer, PageFetcher.layerFetch(), Layer.succeed(JobWorkers, JobRunner.sameThread))


const run = <A>(runtime: ManagedRuntime.ManagedRuntime<AppServices, never>, effect: Effect.Effect<A, ApiError, AppServices>): Promise<A> =>
  runtime.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.findErrorOption(exit.cause)
    throw new PeriscopeError(failure._tag === "Some" ? failure.value : internalError(exit.cause))
  })

const decoded = <A>(result: Result.Result<A, ApiError>): Effect.Effect<A, ApiError> =>
  Result.isSuccess(result) ? Effect.succeed(result.success) : Effect.fail(result.failure)

export const createPeriscope = (options: PeriscopeOptions = {}): Periscope => {
  const chat = options.chat
  const config: ChatConfig | undefined = chat !== undefined && "config" in chat ? chat.config : undefined
  const settings = settingsOf({
    ...(config === undefined && options.validation === undefined ? {} : {
      chat: {
        ...config,
        ...(options.validation === undefined ? {} : { validation: { policy: options.validation.mode, retries: options.validation.retries } })
      }
    }),
    ...(options.embeddings === undefined && options.reranker === undefined ? {} : {
      search: {
        ...(options.embeddings === undefined ? {} : { embeddings: options.embeddings }),
        ...(options.reranker === undefined ? {} : { reranker: options.reranker })
      }
    }),
    streamKeepAliveSeconds: Duration.toSeconds(Duration.fromInputUnsafe(options.streamKeepAlive ?? "15 seconds"))
  }, { apiKeys: options.apiKeys ?? [] })
  // No file is read here: setupKeys only hashes the given keys, or makes one for this process.
  const keys = Effect.runSync(Effect.provide(setupKeys(settings, "memory", options.keys ?? []), embedPlatform))
  const chatModel = chat === undefined || "config" in chat ? undefined : "layer" in chat ? chat.layer : ScriptedChat.layer(chat)
  // A corrupt snapshot or a bad chat config (an upstream key variable not set) is the caller's mistake: it throws on first use.
  const services: Layer.Layer<AppServices> = appLayer(settings, keys.records, {
    search: searchChoiceOf(options.search),
    ...(chatModel === undefined ? {} : { chatModel })
  }).pipe(Layer.provide(embedPlatform), Layer.orDie)
  // One memo map: the Promise API and the fetch handler share the same backend instances.
  const memoMap = Layer.makeMemoMapUnsafe()
  const runtime = ManagedRuntime.make(services, { memoMap })
  const web = makeWebHandler(services, { memoMap })

  const search = <A>(
    decode: (input: unknown) => Result.Result<SearchQuery, ApiError>,
    input: unknown,
    f: (q: SearchQuery) => Effect.Effect<A, ApiError, AppServices>
  ) => run(runtime, Effect.flatMap(decoded(decode(input)), f))

  const decodeChatInput = (input: unknown) =>
    Effect.gen(function*() {
      const chat = yield* ChatGateway
      const body = yield* decoded(decodeChatRequest(input))
      return { chat, request: chatRequestOf(chat, body, input) }
    })

  /** A Responses request decoded and mapped to the gateway's call as the endpoint does it, streamed or not as the method says. */
  const decodeResponsesInput = (input: unknown, stream: boolean) =>
    Effect.gen(function*() {
      const chat = yield* ChatGateway
      const body = yield* decoded(decodeResponsesRequest(input))
      const request = { ...body, stream }
      const call = yield* decoded(responsesToChat(request, chat.defaultModel))
      return { chat, request, call }
    })

  return {
    apiKey: keys.generatedKey,
    webSearch: (input) => search(decodeSearchRequest, input, (q) => Effect.flatMap(Effect.service(FederatedSearch), (s) => Effect.mapError(Effect.map(s.web(q), (a) => a.data), fromFederationError))),
    imageSearch: (input) => search(decodeImageSearchRequest, input, (q) => Effect.flatMap(Effect.service(FederatedSearch), (s) => Effect.mapError(Effect.map(s.images(q), (a) => a.data), fromFederationError))),
    chat: (input) =>
      run(runtime, Effect.gen(function*() {
        const { chat, request } = yield* decodeChatInput(input)
        return yield* completeChat(chat, { ...request, stream: false })
      })),
    chatStream: (input) => ({
      [Symbol.asyncIterator]: (): AsyncIterator<ChatCompletionChunk> => {
        const events = Stream.unwrap(Effect.map(decodeChatInput(input), ({ chat, request }) =>
          streamChat(chat, { ...request, stream: true }))).pipe(
            Stream.mapEffect((event) => event._tag === "Chunk" ? Effect.succeed(event.chunk) : Effect.fail(event.error))
          )
        return iterate(runtime, events)
      }
    }),
    responses: (input) =>
      run(runtime, Effect.flatMap(decodeResponsesInput(input, false), ({ call, chat, request }) => completeResponse(chat, request, call))),
    responsesStream: (input) => ({
      [Symbol.asyncIterator]: (): AsyncIterator<ResponseStreamEvent> => {
        const events = Stream.unwrap(Effect.map(decodeResponsesInput(input, true), ({ call, chat, request }) =>
          streamResponse(chat, request, call).events)).pipe(
            // A failure before the first event comes as the error itself (the endpoint refuses the answer with it).
            Stream.mapEffect((item) => item instanceof ApiError ? Effect.fail(item) : Effect.succeed(item))
          )
        return iterate(runtime, events)
      }
    }),
    fetch: (request) => web.handler(request),
    close: async () => {
      await web.dispose()
      await runtime.dispose()
    }
  }
}

/** Pulls a stream from outside Effect; `return()` (a `break`) interrupts it, cancelling the backend. */
async function* iterate<A>(
  runtime: ManagedRuntime.ManagedRuntime<AppServices, never>,
  stream: Stream.Stream<A, ApiError, AppServices>
): AsyncGenerator<A> {
  const context = await runtime.context()
  try {
    yield* Stream.toAsyncIterableWith(stream, context)
  } catch (error) {
    throw error instanceof ApiError ? new PeriscopeError(error) : error
  }
}

export { ApiKeys, ChatGateway, ChatModel, FixtureSearch, ImageSearch, RateLimits, ScriptedChat, WebSearch }
export { makeWebHandler, PeriscopeRoutes } from "../../core/api/HttpApp.ts"
export { EngineSearch, SearchEngine } from "../../core/backends/EngineSearch.ts"
export { IndexBuilder } from "../../core/index/IndexBuilder.ts"
export { decodeSnapshot, encodeSnapshot, SnapshotError } from "../../core/index/Snapshot.ts"
export type { ScriptedChatOptions, ScriptedReply } from "../../core/backends/ScriptedChat.ts"
export type { IndexDocument } from "../../core/index/Document.ts"
