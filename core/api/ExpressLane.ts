/**
 * The express lane: the hot routes of the contract answered without the
 * HttpApi router, for a server adapter that can take a request before Effect's
 * server sees it (the Node adapter). It pays on webSearch's throughput
 * (test/bench/http.ts prints the lane against the full stack).
 *
 * It answers exactly as the full stack does, with the same parts: the same
 * telemetry (RequestTelemetry's instrument), the same admission (Admission,
 * with the rule each endpoint is annotated with), the same handlers
 * (makeSearchAnswers, makeChatAnswer) and the same error rendering (Answer).
 * Its routes are the contract's endpoints it has an answer for (POST, and GET
 * for a route that admits itself); every other route and method goes to the
 * full stack. test/api/expressLane.test.ts sends the same requests both ways
 * and compares the answers.
 */
import { Cause, Context, Effect, Exit, type Fiber } from "effect"
import { ChatGateway } from "../chat/ChatGateway.ts"
import { FederatedSearch } from "../search/FederatedSearch.ts"
import type { Principal } from "../auth/AuthError.ts"
import { Admission, KeyedRoute } from "./Admission.ts"
import { type Answer, answerStatus, errorAnswer, withHeader } from "./Answer.ts"
import { PeriscopeApi } from "./Api.ts"
import { type ApiError, pathOfUrl, type WireFamily } from "./ApiError.ts"
import { makeChatAnswer } from "./ChatHandlers.ts"
import { makeResponsesAnswer } from "./responses/ResponsesHandlers.ts"
import { McpEndpoint } from "./mcp/McpEndpoint.ts"
import { internalError } from "./DomainErrors.ts"
import { bodyTooLarge } from "./JsonBody.ts"
import { type AnswerOps, exitStatus, makeRequestInstrument, type RequestHead } from "./RequestTelemetry.ts"
import { makeSearchAnswers } from "./SearchHandlers.ts"
import { makeSearxngRoute } from "./searxng/SearxngEndpoint.ts"
import { makeTavilyRoutes } from "./tavily/TavilyEndpoint.ts"

/** How a lane route answers an admitted request: from its body's text, its head and who sent it. */
export type LaneHandler = (body: string, request: RequestHead, principal: Principal) => Effect.Effect<Answer>

/**
 * A route that admits its requests itself, still through Admission: its credential may be in
 * the body (Tavily's api_key) or a setting may open it (SearXNG on a private network). From
 * the body's text (undefined when over the route's limit; "" for a GET) and the head.
 */
export interface SelfAdmitted {
  readonly admitsItself: (body: string | undefined, request: RequestHead) => Effect.Effect<Answer>
}

/** A route the lane serves: its wire family (for errors), its body limit in bytes and whether admission charges the key's limit. */
export interface LaneRoute {
  readonly path: string
  readonly family: WireFamily
  readonly limit: number
  readonly charge: boolean
  readonly handle: LaneHandler
  readonly admitsItself?: SelfAdmitted["admitsItself"] | undefined
}

export interface ExpressLane {
  /** The lane's route for this request, or undefined: the full stack answers it. */
  readonly routeOf: (method: string | undefined, url: string | undefined) => LaneRoute | undefined
  /**
   * Starts answering `request` on `route`; `body` is its text, or undefined when it was larger
   * than the route's limit. The fiber never fails; interrupt it when the client goes away.
   */
  readonly answer: (route: LaneRoute, request: RequestHead, body: string | undefined) => Fiber.Fiber<Answer>
  /** Runs an effect (an answer's event stream) in the application's context. */
  readonly fork: <A>(effect: Effect.Effect<A>) => Fiber.Fiber<A>
}

const answerOps: AnswerOps<Answer> = {
  status: answerStatus,
  withRequestId: (answer, requestId) => withHeader(answer, "x-request-id", requestId)
}

/** ErrorBoundary's rule: a defect is logged and answered 500, its details kept off the wire. */
const onDefect = (family: WireFamily) => (cause: Cause.Cause<never>): Effect.Effect<Answer> =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.failCause(cause)
    : Effect.as(Effect.logError("request failed", cause), errorAnswer(family, internalError()))

const refuseUnadmitted: LaneHandler = () => Effect.die(new Error("a self-admitted lane route answers through admitsItself"))

/**
 * The endpoints of the contract the lane answers, by method and path, with their rule from the
 * endpoint's KeyedRoute annotation: POST with a body limit, or GET (query string only) for a
 * route that admits itself.
 */
const laneRoutes = (answers: Readonly<Record<string, LaneHandler | SelfAdmitted>>): { readonly post: Map<string, LaneRoute>; readonly get: Map<string, LaneRoute> } => {
  const post = new Map<string, LaneRoute>()
  const get = new Map<string, LaneRoute>()
  for (const group of Object.values(PeriscopeApi.groups)) {
    for (const [name, endpoint] of Object.entries(group.endpoints)) {
      const answer = answers[name]
      const rule = Context.getOrUndefined(endpoint.annotations, KeyedRoute)
      if (answer === undefined || rule === undefined) continue
      const self = typeof answer === "function" ? undefined : answer.admitsItself
      const bodied = endpoint.method === "POST" && rule.bodyLimit !== undefined
      if (!bodied && !(endpoint.method === "GET" && self !== undefined)) continue
      const route = {
        path: endpoint.path,
        family: rule.family,
        limit: rule.bodyLimit ?? 0,
        charge: rule.chargePerRequest !== false,
        handle: typeof answer === "function" ? answer : refuseUnadmitted,
        admitsItself: self
      }
      ;(bodied ? post : get).set(endpoint.path, route)
    }
  }
  // A renamed endpoint, or one that lost its annotation, fails at start, not silently in the slow lane.
  if (post.size + get.size !== Object.keys(answers).length) {
    throw new Error(`express lane: ${Object.keys(answers).join(", ")} must each be a keyed POST endpoint of the contract, or a self-admitted GET one`)
  }
  return { post, get }
}

/** Builds the lane over the application's services, in the context it will answer in. */
export const makeExpressLane = Effect.gen(function*() {
  const admission = yield* Admission
  const search = makeSearchAnswers(yield* FederatedSearch)
  const instrument = yield* makeRequestInstrument
  const context = yield* Effect.context<never>()
  const run = Effect.runForkWith(context)
  // Keyed by the contract's endpoint names: a renamed endpoint fails the lane's test, not silently.
  const mcp = yield* McpEndpoint
  const tavily = yield* makeTavilyRoutes
  const searxng = yield* makeSearxngRoute
  const routes = laneRoutes({
    webSearch: search.web,
    imageSearch: search.images,
    completions: makeChatAnswer(yield* ChatGateway),
    createResponse: makeResponsesAnswer(yield* ChatGateway),
    mcp: (body, request, principal) => mcp.answerHttp(body, request, principal, admission.charge(principal)),
    tavilySearch: tavily.search,
    tavilyExtract: tavily.extract,
    searxngSearch: searxng,
    searxngSearchForm: searxng
  })
  const defectHandlers = new Map<WireFamily, ReturnType<typeof onDefect>>()
  const onDefectOf = (family: WireFamily) => {
    let handler = defectHandlers.get(family)
    if (handler === undefined) defectHandlers.set(family, handler = onDefect(family))
    return handler
  }

  const answer = (route: LaneRoute, request: RequestHead, body: string | undefined): Fiber.Fiber<Answer> => {
    const refuse = (error: ApiError) => Effect.succeed(errorAnswer(route.family, error))
    const program = Effect.catchCause(
      route.admitsItself !== undefined
        ? route.admitsItself(body, request)
        : Effect.matchEffect(admission.admit({ headers: request.headers, bodyLimit: route.limit, charge: route.charge }), {
          onFailure: refuse,
          onSuccess: (principal) => body === undefined ? refuse(bodyTooLarge(route.limit)) : route.handle(body, request, principal)
        }),
      onDefectOf(route.family)
    )
    // Metrics alone (the default): counted when the fiber ends, with no Effect step around it.
    const count = instrument.count
    if (count !== undefined) {
      const startedAt = performance.now()
      const fiber = run(program)
      fiber.addObserver((exit) => count(request, exitStatus(exit, answerStatus), startedAt))
      return fiber
    }
    return run(instrument.active ? instrument.around(request, program, answerOps) : program)
  }

  const { post, get } = routes
  return {
    routeOf: (method, url) =>
      url === undefined ? undefined : method === "POST" ? post.get(pathOfUrl(url)) : method === "GET" && get.size > 0 ? get.get(pathOfUrl(url)) : undefined,
    answer,
    fork: run
  } satisfies ExpressLane
})
