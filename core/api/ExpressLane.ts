/**
 * The express lane: the hot routes (POST webSearch, imageSearch and chat
 * completions) answered without the HttpApi router, for a server adapter that
 * can take a request before Effect's server sees it (the Node adapter).
 *
 * It answers exactly as the full stack does, with the same parts: the same
 * telemetry (RequestTelemetry's instrument), the same key check and limits,
 * the same body rules (JsonBody), the same handlers (makeSearchAnswers,
 * makeChatAnswer) and the same error rendering (Answer). What it leaves out
 * is the machinery around them: the router, the middleware chain, the
 * request and response objects and the header conversions, which were over
 * half of a webSearch's server time (test/bench/http.ts). Every other route
 * and method goes to the full stack; test/api/expressLane.test.ts sends the
 * same requests both ways and compares the answers.
 */
import { Cause, Effect, Exit, type Fiber } from "effect"
import { ApiKeys } from "../auth/ApiKeys.ts"
import type { AuthError, Principal } from "../auth/AuthError.ts"
import { RateLimits } from "../auth/RateLimits.ts"
import { ChatGateway } from "../chat/ChatGateway.ts"
import { FederatedSearch } from "../search/FederatedSearch.ts"
import { type Answer, answerStatus, errorAnswer, withHeader } from "./Answer.ts"
import { type ApiError, pathOfUrl, type WireFamily } from "./ApiError.ts"
import { makeChatAnswer } from "./ChatHandlers.ts"
import { fromAuthError, internalError } from "./DomainErrors.ts"
import { bodyHeadProblem, bodyTooLarge, CHAT_BODY_LIMIT, SEARCH_BODY_LIMIT } from "./JsonBody.ts"
import { type AnswerOps, makeRequestInstrument, type RequestHead } from "./RequestTelemetry.ts"
import { makeSearchAnswers } from "./SearchHandlers.ts"

/** A route the lane serves: its wire family (for errors) and its body limit in bytes. */
export interface LaneRoute {
  readonly path: string
  readonly family: WireFamily
  readonly limit: number
  readonly handle: (body: string) => Effect.Effect<Answer>
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

/**
 * The credential of an `Authorization: Bearer <key>` header, read as HttpApiSecurity.bearer reads
 * it (RFC 9110: the scheme is case-insensitive, then one or more spaces); undefined without one.
 */
export const bearerCredential = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || authorization.length <= 6 || authorization.charCodeAt(6) !== 32) return undefined
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return undefined
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  return start === authorization.length ? undefined : authorization.slice(start)
}

const answerOps: AnswerOps<Answer> = {
  status: answerStatus,
  withRequestId: (answer, requestId) => withHeader(answer, "x-request-id", requestId)
}

const refuse = (route: LaneRoute, error: ApiError) => Effect.succeed(errorAnswer(route.family, error))

/** ErrorBoundary's rule: a defect is logged and answered 500, its details kept off the wire. Made once per wire family. */
const onDefect = (family: WireFamily) => (cause: Cause.Cause<never>): Effect.Effect<Answer> =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.failCause(cause)
    : Effect.as(Effect.logError("request failed", cause), errorAnswer(family, internalError()))
const defectHandlers: Readonly<Record<WireFamily, ReturnType<typeof onDefect>>> = { search: onDefect("search"), chat: onDefect("chat") }

/** Builds the lane over the application's services, in the context it will answer in. */
export const makeExpressLane = Effect.gen(function*() {
  const keys = yield* ApiKeys
  const limits = yield* RateLimits
  const search = makeSearchAnswers(yield* FederatedSearch)
  const chat = makeChatAnswer(yield* ChatGateway)
  const instrument = yield* makeRequestInstrument
  const context = yield* Effect.context<never>()
  const run = Effect.runForkWith(context)

  const routes = new Map<string, LaneRoute>()
  for (const route of [
    { path: "/api/search/webSearch", family: "search", limit: SEARCH_BODY_LIMIT, handle: search.web },
    { path: "/api/search/imageSearch", family: "search", limit: SEARCH_BODY_LIMIT, handle: search.images },
    { path: "/v1/chat/completions", family: "chat", limit: CHAT_BODY_LIMIT, handle: chat }
  ] as const) routes.set(route.path, route)

  const answer = (route: LaneRoute, request: RequestHead, body: string | undefined): Fiber.Fiber<Answer> => {
    // In the full stack's order: the key and its limit (the bearer middleware), then the body.
    const authenticated = keys.authenticate(bearerCredential(request.headers["authorization"]) ?? "")
    // A key verified before comes back as a ready Exit: its limit is checked with no step between
    // (an Effect step costs up to a microsecond of a request under load: test/bench/httpAB.ts).
    const ready = Exit.isExit(authenticated) ? authenticated as Exit.Exit<Principal, AuthError> : undefined
    const admitted = ready !== undefined && Exit.isSuccess(ready) ? limits.check(ready.value) : Effect.flatMap(authenticated, limits.check)
    const program = Effect.catchCause(
      Effect.matchEffect(admitted, {
        onFailure: (error) => refuse(route, fromAuthError(error)),
        onSuccess: () => {
          const problem = bodyHeadProblem(request.headers["content-type"], request.headers["content-length"], route.limit)
          if (problem !== undefined) return refuse(route, problem)
          return body === undefined ? refuse(route, bodyTooLarge(route.limit)) : route.handle(body)
        }
      }),
      defectHandlers[route.family]
    )
    // Metrics alone (the default): counted when the fiber ends, with no Effect step around it.
    const count = instrument.count
    if (count !== undefined) {
      const startedAt = performance.now()
      const fiber = run(program)
      fiber.addObserver((exit) => count(request, Exit.isSuccess(exit) ? answerStatus(exit.value) : 500, startedAt))
      return fiber
    }
    return run(instrument.active ? instrument.around(request, program, answerOps) : program)
  }

  return {
    routeOf: (method, url) => (method === "POST" && url !== undefined ? routes.get(pathOfUrl(url)) : undefined),
    answer,
    fork: run
  } satisfies ExpressLane
})
