/**
 * Spans and metrics laid over services whose rooms know nothing of
 * observability: the key check (span "ApiKeys.authenticate"), federated
 * search (spans "search.web" / "search.images") and the chat model (span
 * "chat.model.complete" / "chat.model.stream", upstream latency, time to first
 * token and tokens). Upstream HTTP requests get their own client spans from
 * the HttpClient. Streams are timed with plain counters per chunk, not a span
 * per chunk: a span's cost, paid per chunk, would show in a stream's CPU
 * (test/bench/gateway.ts, CPU per stream). No span captures a stack trace: an
 * Error built per request is dear on the request path.
 */
import { type Context, Effect, type Fiber, Layer, Metric, Stream } from "effect"
import { ApiKeys } from "../auth/ApiKeys.ts"
import type { Usage } from "../chat/ChatCompletion.ts"
import { ChatModel } from "../chat/ChatModel.ts"
import { FederatedSearch } from "../search/FederatedSearch.ts"
import { labelled } from "../store/MetricSeries.ts"
import { spanned, spannedIn } from "../store/Spans.ts"

const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

const histogram = (name: string, description: string, attributes: Record<string, string>) =>
  Metric.histogram(name, { description, boundaries: seconds, attributes })
const counter = (name: string, description: string, attributes: Record<string, string>) =>
  Metric.counter(name, { description, incremental: true, attributes })

const DURATION = "Chat model calls from start to the whole answer (streams: to the last chunk), by model, mode and outcome"
const TTFT = "Streaming chat: time from the call to the first chunk, by model"
const TOKENS = "Tokens reported (or counted) for chat answers, by model and kind (prompt, completion)"

/** Every series of one model label, made once (labels baked in: core/store/MetricSeries.ts) and found with one lookup. */
const seriesOfModel = labelled(({ model }) => {
  const duration = (mode: string, outcome: string) => histogram("periscope_upstream_duration_seconds", DURATION, { model: model!, mode, outcome })
  return {
    complete: { ok: duration("complete", "ok"), error: duration("complete", "error") },
    stream: { ok: duration("stream", "ok"), error: duration("stream", "error") },
    firstToken: histogram("periscope_upstream_ttft_seconds", TTFT, { model: model! }),
    promptTokens: counter("periscope_tokens_total", TOKENS, { model: model!, kind: "prompt" }),
    completionTokens: counter("periscope_tokens_total", TOKENS, { model: model!, kind: "completion" })
  }
})
type ModelSeries = ReturnType<typeof seriesOfModel>

/** One finished call: its duration by mode and outcome, and its tokens when the answer reported them. */
const recordCall = (
  series: ModelSeries,
  mode: "complete" | "stream",
  ok: boolean,
  elapsedSeconds: number,
  usage: Usage | undefined | null,
  context: Context.Context<never>
) => {
  series[mode][ok ? "ok" : "error"].updateUnsafe(elapsedSeconds, context)
  if (usage === undefined || usage === null) return
  series.promptTokens.updateUnsafe(usage.prompt_tokens, context)
  series.completionTokens.updateUnsafe(usage.completion_tokens, context)
}

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
      const labelIn = (set: ReadonlySet<string>, requested: string | undefined) => {
        const name = requested ?? model.defaultModel
        return set.has(name) || name === model.defaultModel ? name : "other"
      }
      // The names are listed once, on the first call; after that the label is found with no step of its own.
      const withLabel = <A, E>(requested: string | undefined, f: (label: string) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
        known !== undefined
          ? f(labelIn(known, requested))
          : Effect.flatMap(model.models, (list) => f(labelIn(known ??= new Set(list.map((m) => m.id)), requested)))
      const labelOf = (requested: string | undefined) => withLabel(requested, (label) => Effect.succeed(label))
      return ChatModel.of({
        models: model.models,
        defaultModel: model.defaultModel,
        supportsN: model.supportsN,
        // Without it the gateway knows only listed names, and reads `alias:online` as unknown.
        hasModel: model.hasModel,
        // One step and the exit hook: this wraps every chat request.
        complete: (request) => {
          const timed = (fiber: Fiber.Fiber<unknown, unknown>, label: string) => {
            const start = performance.now()
            const measured = Effect.onExit(model.complete(request), (exit) => {
              const ok = exit._tag === "Success"
              recordCall(seriesOfModel({ model: label }), "complete", ok, (performance.now() - start) / 1000, ok ? exit.value.usage : undefined, context)
              return Effect.void
            })
            return spannedIn(fiber, measured, "chat.model.complete", { attributes: { "gen_ai.request.model": label } })
          }
          return withLabel(request.model, (label) => Effect.withFiber((fiber) => timed(fiber, label)))
        },
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
                  seriesOfModel({ model: label }).firstToken.updateUnsafe((performance.now() - start) / 1000, context)
                }
                return chunk
              }),
              Stream.onExit((exit) =>
                Effect.sync(() =>
                  recordCall(seriesOfModel({ model: label }), "stream", exit._tag === "Success", (performance.now() - start) / 1000, usage, context)
                )
              )
            )
          }))
      })
    })
  ).pipe(Layer.provide(layer))
