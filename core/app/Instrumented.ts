/**
 * Spans and metrics laid over services whose rooms know nothing of
 * observability: the key check (span "ApiKeys.authenticate"), federated
 * search (spans "search.web" / "search.images") and the chat model (span
 * "chat.model.complete" / "chat.model.stream", upstream latency, time to first
 * token and tokens). Upstream HTTP requests get their own client spans from
 * the HttpClient. Streams are timed with plain counters per chunk, not a span
 * per chunk (Stream.withSpan costs about 1 µs per chunk, ChatGateway measured).
 * No span captures a stack trace: on the request path that was 6% of chat CPU (profiled).
 */
import { Effect, Layer, Metric, Stream } from "effect"
import { ApiKeys } from "../auth/ApiKeys.ts"
import type { Usage } from "../chat/ChatCompletion.ts"
import { ChatModel } from "../chat/ChatModel.ts"
import { FederatedSearch } from "../search/FederatedSearch.ts"
import { labelled } from "../store/MetricSeries.ts"
import { spanned } from "../store/Spans.ts"

const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

const upstreamDuration = labelled((attributes) =>
  Metric.histogram("periscope_upstream_duration_seconds", {
    description: "Chat model calls from start to the whole answer (streams: to the last chunk), by model, mode and outcome",
    boundaries: seconds,
    attributes
  })
)
const firstToken = labelled((attributes) =>
  Metric.histogram("periscope_upstream_ttft_seconds", {
    description: "Streaming chat: time from the call to the first chunk, by model",
    boundaries: seconds,
    attributes
  })
)
const tokens = labelled((attributes) =>
  Metric.counter("periscope_tokens_total", {
    description: "Tokens reported (or counted) for chat answers, by model and kind (prompt, completion)",
    incremental: true,
    attributes
  })
)

const countTokens = (model: string, usage: Usage | undefined) =>
  usage === undefined ? Effect.void : Effect.andThen(
    Metric.update(tokens({ model, kind: "prompt" }), usage.prompt_tokens),
    Metric.update(tokens({ model, kind: "completion" }), usage.completion_tokens)
  )

/** The key check with a span of its own under the request's. */
export const tracedApiKeys = <E, R>(layer: Layer.Layer<ApiKeys, E, R>): Layer.Layer<ApiKeys, E, R> =>
  Layer.effect(
    ApiKeys,
    Effect.map(Effect.service(ApiKeys), (keys) => ApiKeys.of({ authenticate: (key) => spanned(keys.authenticate(key), "ApiKeys.authenticate") }))
  ).pipe(Layer.provide(layer))

/** Federated search with one span per request. */
export const tracedSearch = <E, R>(layer: Layer.Layer<FederatedSearch, E, R>): Layer.Layer<FederatedSearch, E, R> =>
  Layer.effect(
    FederatedSearch,
    Effect.map(Effect.service(FederatedSearch), (search) =>
      FederatedSearch.of({
        sourceNames: search.sourceNames,
        web: (query) => spanned(search.web(query), "search.web", { attributes: { "search.num": query.num } }),
        images: (query) => spanned(search.images(query), "search.images", { attributes: { "search.num": query.num } })
      }))
  ).pipe(Layer.provide(layer))

/** The chat model, timed and counted. Model labels are the backend's own model names (anything else is "other"), so a client cannot grow the series. */
export const meteredChatModel = <E, R>(layer: Layer.Layer<ChatModel, E, R>): Layer.Layer<ChatModel, E, R> =>
  Layer.effect(
    ChatModel,
    Effect.gen(function*() {
      const model = yield* ChatModel
      // Chunks are counted with plain calls, not an Effect per chunk.
      const context = yield* Effect.context<never>()
      let known: ReadonlySet<string> | undefined
      const labelOf = (requested: string | undefined) =>
        Effect.map(
          known === undefined ? Effect.map(model.models, (list) => (known = new Set(list.map((m) => m.id)))) : Effect.succeed(known),
          (set) => {
            const name = requested ?? model.defaultModel
            return set.has(name) || name === model.defaultModel ? name : "other"
          }
        )
      return ChatModel.of({
        models: model.models,
        defaultModel: model.defaultModel,
        supportsN: model.supportsN,
        // Without it the gateway knows only listed names, and reads `alias:online` as unknown.
        hasModel: model.hasModel,
        complete: (request) =>
          Effect.flatMap(labelOf(request.model), (label) => {
            const start = performance.now()
            const timed = model.complete(request).pipe(
              Effect.onExit((exit) => {
                const elapsed = (performance.now() - start) / 1000
                const outcome = exit._tag === "Success" ? "ok" : "error"
                return Effect.andThen(
                  Metric.update(upstreamDuration({ model: label, mode: "complete", outcome }), elapsed),
                  exit._tag === "Success" ? countTokens(label, exit.value.usage) : Effect.void
                )
              })
            )
            return spanned(timed, "chat.model.complete", { attributes: { "gen_ai.request.model": label } })
          }),
        stream: (request) =>
          Stream.unwrap(Effect.map(labelOf(request.model), (label) => {
            let start = 0
            let first = true
            let usage: Usage | undefined
            return Stream.suspend(() => {
              start = performance.now()
              first = true
              return model.stream(request)
            }).pipe(
              Stream.map((chunk) => {
                if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
                if (first) {
                  first = false
                  firstToken({ model: label }).updateUnsafe((performance.now() - start) / 1000, context)
                }
                return chunk
              }),
              Stream.onExit((exit) =>
                Effect.andThen(
                  Metric.update(
                    upstreamDuration({ model: label, mode: "stream", outcome: exit._tag === "Success" ? "ok" : "error" }),
                    (performance.now() - start) / 1000
                  ),
                  countTokens(label, usage)
                )
              )
            )
          }))
      })
    })
  ).pipe(Layer.provide(layer))
