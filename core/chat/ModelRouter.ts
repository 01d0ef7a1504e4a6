/**
 * Public model names to upstream targets: aliases, weights, a default model,
 * and fallback to the next target when one fails before the first byte
 * (connection error, timeout, 429, 5xx, 404). Built-in models (periscope-grounded)
 * sit beside the routes. The router is a ChatModel; the gateway wraps it.
 * A target that answers fewer choices than n gets the rest asked one at a
 * time, and is remembered: its later n > 1 requests fan out at once.
 */
import { Effect, Stream } from "effect"
import { spanned, spannedIn } from "../store/Spans.ts"
import type { ChatChunk, ChatResult, ModelInfo } from "./ChatCompletion.ts"
import { ChatModelError } from "./ChatError.ts"
import type { ChatModel } from "./ChatModel.ts"
import type { ChatRequest } from "./ChatRequest.ts"
import { fanOutComplete, fanOutStream, topUpComplete, topUpStream } from "./FanOut.ts"
import { isRetryable, type UpstreamClient, type UpstreamError, type UpstreamTarget } from "./Upstream.ts"

export interface WeightedTarget {
  readonly target: UpstreamTarget
  readonly weight: number
}

export interface Route {
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  readonly targets: ReadonlyArray<WeightedTarget>
}

export interface RouterOptions {
  readonly routes: ReadonlyArray<Route>
  /** Models answered without an upstream, by name (e.g. periscope-grounded). */
  readonly builtins: ReadonlyArray<ChatModel["Service"]>
  /** The model of requests without one; default: the first route, else the first builtin. */
  readonly defaultModel?: string | undefined
  /** Source of randomness for weighted choice, in [0, 1). */
  readonly random?: () => number
}

/** The weighted pick first, then the other targets by weight (config order on ties). */
const orderTargets = (targets: ReadonlyArray<WeightedTarget>, random: number): ReadonlyArray<UpstreamTarget> => {
  const total = targets.reduce((sum, t) => sum + t.weight, 0)
  let point = random * total
  let first = targets.length - 1
  for (let i = 0; i < targets.length; i++) {
    point -= targets[i]!.weight
    if (point < 0) {
      first = i
      break
    }
  }
  const rest = targets.map((t, i) => ({ t, i })).filter(({ i }) => i !== first).sort((a, b) => b.t.weight - a.t.weight || a.i - b.i)
  return [targets[first]!.target, ...rest.map(({ t }) => t.target)]
}

/** What the caller sees of an upstream failure: a status that says whose fault it is. */
const toChatError = (error: UpstreamError): ChatModelError => {
  const where = `upstream ${error.target}`
  switch (error.kind) {
    case "connect":
      return new ChatModelError({ reason: "unavailable", message: `${where} is unreachable: ${error.message}` })
    case "timeout":
      return new ChatModelError({ reason: "timeout", message: `${where} timed out: ${error.message}` })
    case "status":
      if (error.status === 429) {
        return new ChatModelError({
          reason: "rate_limited",
          message: `${where} is rate limiting requests: ${error.message}`,
          ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds })
        })
      }
      // A 404 on the chat path is a configuration fault (base URL, model name), not the caller's:
      // the message (OpenAiUpstream) says which URL was asked and what to fix.
      if (error.status === 404) return new ChatModelError({ reason: "upstream", code: "upstream_not_found", message: `${where} ${error.message}` })
      if (error.status === 400 || error.status === 413 || error.status === 422) {
        return new ChatModelError({ reason: "invalid_request", message: `${where} refused the request: ${error.message}` })
      }
      return new ChatModelError({ reason: "upstream", message: `${where} failed with HTTP ${error.status}: ${error.message}` })
    default:
      return new ChatModelError({ reason: "upstream", message: `${where} failed: ${error.message}` })
  }
}

export const makeModelRouter = (client: UpstreamClient["Service"], options: RouterOptions): ChatModel["Service"] => {
  const random = options.random ?? Math.random
  const routes = new Map<string, Route>()
  for (const route of options.routes) {
    routes.set(route.name, route)
    for (const alias of route.aliases) routes.set(alias, route)
  }
  const builtins = new Map(options.builtins.map((b) => [b.defaultModel, b]))
  const defaultModel = options.defaultModel ?? options.routes[0]?.name ?? options.builtins[0]?.defaultModel ?? ""

  const unknownModel = (model: string) =>
    new ChatModelError({
      reason: "model_not_found",
      param: "model",
      message: `model ${JSON.stringify(model)} does not exist; GET /v1/models lists the models`
    })

  /** Where a request goes: a builtin model, the ordered targets of a route, or nowhere. */
  type Destination =
    | { readonly _tag: "Builtin"; readonly model: ChatModel["Service"] }
    | { readonly _tag: "Route"; readonly route: Route; readonly targets: ReadonlyArray<UpstreamTarget> }
    | { readonly _tag: "Unknown"; readonly error: ChatModelError }

  const destinationOf = (model: string): Destination => {
    const builtin = builtins.get(model)
    if (builtin !== undefined) return { _tag: "Builtin", model: builtin }
    const route = routes.get(model)
    if (route === undefined) return { _tag: "Unknown", error: unknownModel(model) }
    return { _tag: "Route", route, targets: orderTargets(route.targets, random()) }
  }

  /**
   * The next target gets the request when this one failed before its first byte,
   * or answered 404 (this target's base URL or model name is wrong, not the request).
   */
  const fallsBack = (error: UpstreamError, i: number, targets: ReadonlyArray<UpstreamTarget>) =>
    i + 1 < targets.length && (isRetryable(error) || (error.kind === "status" && error.status === 404 && error.beforeFirstByte))

  /** Targets seen answering fewer choices than n asked (they ignore n): later n > 1 requests fan out at once. */
  const ignoresN = new WeakSet<UpstreamTarget>()

  /** Target i answers; failures before the first byte move on to the next; missing choices are asked again one by one. */
  const completeAt = (targets: ReadonlyArray<UpstreamTarget>, i: number, request: ChatRequest): Effect.Effect<ChatResult, ChatModelError> => {
    const target = targets[i]!
    if (request.n > 1 && ignoresN.has(target)) return fanOutComplete(request, (one) => completeAt(targets, i, one))
    return Effect.matchEffect(client.complete(target, request), {
      onFailure: (error) => fallsBack(error, i, targets) ? completeAt(targets, i + 1, request) : Effect.fail(toChatError(error)),
      onSuccess: (result) =>
        request.n <= 1
          ? Effect.succeed(result)
          : topUpComplete(request, result, (one) => completeAt(targets, i, one), () => ignoresN.add(target))
    })
  }

  // A span only while tracing is on (spannedIn): Effect.fn's stack captures are two Errors per
  // request. The route is found with plain code in the span's step.
  const complete = (request: ChatRequest): Effect.Effect<ChatResult, ChatModelError> =>
    Effect.withFiber((fiber) => spannedIn(fiber, completeNow(request), "ModelRouter.complete"))

  const completeNow = (request: ChatRequest): Effect.Effect<ChatResult, ChatModelError> => {
    const to = destinationOf(request.model)
    if (to._tag === "Builtin") return to.model.complete(request)
    if (to._tag === "Unknown") return Effect.fail(to.error)
    return Effect.map(completeAt(to.targets, 0, request), (result) => ({ ...result, model: to.route.name }))
  }

  /**
   * An error before the first byte comes before any chunk, so switching targets shows nothing twice.
   * Top-up streams fail with ChatModelError (each has its own fallback), so only the first
   * stream's own failures reach the catch below.
   */
  const streamAt = (targets: ReadonlyArray<UpstreamTarget>, i: number, request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> => {
    const target = targets[i]!
    if (request.n > 1 && ignoresN.has(target)) return fanOutStream(request, (one) => streamAt(targets, i, one))
    const own = client.stream(target, request)
    const whole = request.n > 1 ? topUpStream(request, own, (one) => streamAt(targets, i, one), () => ignoresN.add(target)) : own
    return whole.pipe(
      Stream.catchTag("UpstreamError", (error) => fallsBack(error, i, targets) ? streamAt(targets, i + 1, request) : Stream.fail(toChatError(error)))
    )
  }

  // Streams get no span of their own here (it would cost per chunk): the upstream's opening is traced.
  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> => {
    const to = destinationOf(request.model)
    if (to._tag === "Builtin") return to.model.stream(request)
    if (to._tag === "Unknown") return Stream.fail(to.error)
    return streamAt(to.targets, 0, request)
  }

  // Aliases are listed too (clients pick models from this list), each saying what it answers as.
  const infos: Array<ModelInfo> = [
    ...options.routes.flatMap((r): Array<ModelInfo> => {
      const owner = r.targets[0]?.target.name ?? "periscope"
      return [
        { id: r.name, object: "model", created: 0, owned_by: owner },
        ...r.aliases.map((alias): ModelInfo => ({ id: alias, object: "model", created: 0, owned_by: owner, periscope_alias_of: r.name }))
      ]
    }),
    ...options.builtins.map((b): ModelInfo => ({ id: b.defaultModel, object: "model", created: 0, owned_by: "periscope" }))
  ]

  return {
    models: Effect.succeed(infos),
    defaultModel,
    hasModel: (model) => builtins.has(model) || routes.has(model),
    supportsN: (model) => builtins.get(model)?.supportsN(model) ?? routes.get(model)?.targets.every((t) => t.target.supportsN) ?? true,
    complete,
    stream
  }
}
