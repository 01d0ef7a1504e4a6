/** POST /tavily/search and /tavily/extract in the HttpApi contract: the body read under the limit, then the route (TavilyEndpoint). */
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { type Answer, errorAnswer, toHttpResponse } from "../Answer.ts"
import { PeriscopeApi } from "../Api.ts"
import { readJsonText } from "../JsonBody.ts"
import { makeTavilyRoutes, type TavilyRoute } from "./TavilyEndpoint.ts"
import { TAVILY_BODY_LIMIT } from "./TavilyWire.ts"

/** The body's text, or undefined when it is over the limit (the route says so after admission). */
const serve = (route: TavilyRoute) => ({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
  readJsonText(request, TAVILY_BODY_LIMIT).pipe(
    Effect.matchEffect({
      onFailure: (error): Effect.Effect<Answer> =>
        error.kind === "payload_too_large" ? route.admitsItself(undefined, request) : Effect.succeed(errorAnswer("tavily", error)),
      onSuccess: (body) => route.admitsItself(body, request)
    }),
    Effect.map(toHttpResponse)
  )

export const TavilyHandlers = HttpApiBuilder.group(PeriscopeApi, "tavily", Effect.fnUntraced(function*(handlers) {
  const routes = yield* makeTavilyRoutes
  return handlers.handleRaw("tavilySearch", serve(routes.search)).handleRaw("tavilyExtract", serve(routes.extract))
}))
