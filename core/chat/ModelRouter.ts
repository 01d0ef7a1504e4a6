/**
 * Public model names to upstream targets: aliases, weights, a default model,
 * and fallback to the next target when one fails before the first byte
 * (connection error, timeout, 429, 5xx). Built-in models (periscope-grounded)
 * sit beside the routes. The router is a ChatModel; the gateway wraps it.
 */
import { Effect, Stream } from "effect"
import type { ChatChunk, ChatResult, ModelInfo } from "./ChatCompletion.ts"
import { ChatModelError } from "./ChatError.ts"
import type { ChatModel } from "./ChatModel.ts"
import type { ChatRequest } from "./ChatRequest.ts"
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
      if (error.status === 400 || error.status === 404 || error.status === 413 || error.status === 422) {
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

  /** The next target gets the request when this one failed before its first byte. */
  const fallsBack = (error: UpstreamError, i: number, targets: ReadonlyArray<UpstreamTarget>) =>
    i + 1 < targets.length && isRetryable(error)

  const complete = Effect.fn("ModelRouter.complete")(function*(request: ChatRequest): Effect.fn.Return<ChatResult, ChatModelError> {
    const to = destinationOf(request.model)
    if (to._tag === "Builtin") return yield* to.model.complete(request)
    if (to._tag === "Unknown") return yield* to.error
    for (let i = 0;; i++) {
      const result = yield* Effect.result(client.complete(to.targets[i]!, request))
      if (result._tag === "Success") return { ...result.success, model: to.route.name }
      if (!fallsBack(result.failure, i, to.targets)) return yield* toChatError(result.failure)
    }
  })

  // Streams get no span of their own here (it would cost per chunk): the upstream's opening is traced.
  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> => {
    const to = destinationOf(request.model)
    if (to._tag === "Builtin") return to.model.stream(request)
    if (to._tag === "Unknown") return Stream.fail(to.error)
    // An error before the first byte comes before any chunk, so switching targets shows nothing twice.
    const attempt = (i: number): Stream.Stream<ChatChunk, ChatModelError> =>
      client.stream(to.targets[i]!, request).pipe(
        Stream.catchTag("UpstreamError", (error) => fallsBack(error, i, to.targets) ? attempt(i + 1) : Stream.fail(toChatError(error)))
      )
    return attempt(0)
  }

  const infos: Array<ModelInfo> = [
    ...options.routes.map((r): ModelInfo => ({ id: r.name, object: "model", created: 0, owned_by: r.targets[0]?.target.name ?? "periscope" })),
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
