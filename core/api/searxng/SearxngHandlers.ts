/** GET and POST /searxng/search in the HttpApi contract: a POST's form read under the limit, then the route (SearxngEndpoint). */
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { type Answer, errorAnswer, toHttpResponse } from "../Answer.ts"
import { PeriscopeApi } from "../Api.ts"
import { readJsonText } from "../JsonBody.ts"
import { makeSearxngRoute, type SearxngRoute } from "./SearxngEndpoint.ts"
import { SEARXNG_BODY_LIMIT } from "./SearxngWire.ts"

const serveGet = (route: SearxngRoute) => ({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
  Effect.map(route.admitsItself("", request), toHttpResponse)

/** The form's text, or undefined when it is over the limit (the route says so after admission). */
const servePost = (route: SearxngRoute) => ({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
  readJsonText(request, SEARXNG_BODY_LIMIT).pipe(
    Effect.matchEffect({
      onFailure: (error): Effect.Effect<Answer> =>
        error.kind === "payload_too_large" ? route.admitsItself(undefined, request) : Effect.succeed(errorAnswer("searxng", error)),
      onSuccess: (body) => route.admitsItself(body, request)
    }),
    Effect.map(toHttpResponse)
  )

export const SearxngHandlers = HttpApiBuilder.group(PeriscopeApi, "searxng", Effect.fnUntraced(function*(handlers) {
  const route = yield* makeSearxngRoute
  return handlers.handleRaw("searxngSearch", serveGet(route)).handleRaw("searxngSearchForm", servePost(route))
}))
