/**
 * The last line of the HTTP layer: an unknown path (404), a known path with
 * the wrong method (405, with Allow) and any defect (500, logged, details kept
 * off the wire) are rendered in the family of the path like every other error.
 */
import { Cause, Effect } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest } from "effect/http"
import { allowedMethods } from "./Api.ts"
import { ApiError, familyOfPath, pathOfUrl } from "./ApiError.ts"
import { internalError } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { pagePaths } from "./Playground.ts"
import { METRICS_PATH } from "./RequestTelemetry.ts"

// Plain router routes beside the HttpApi contract, all GET: the pages and the Prometheus scrape.
const getOnlyPaths: ReadonlySet<string> = new Set([...pagePaths, METRICS_PATH])

const routeError = (method: string, path: string): ApiError => {
  const allow = allowedMethods.get(path) ?? (getOnlyPaths.has(path) ? "GET" : undefined)
  return allow === undefined
    ? new ApiError({ kind: "not_found", message: `no endpoint at ${method} ${path}`, param: null })
    : new ApiError({ kind: "method_not_allowed", message: `${path} accepts ${allow}, not ${method}`, param: null, allow })
}

const isRouteNotFound = (error: unknown): boolean =>
  HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound"

export const ErrorBoundary = HttpRouter.middleware<{ handles: HttpServerError.HttpServerError }>()(
  (httpEffect) =>
    Effect.catchCause(httpEffect, (cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
      return Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) => {
        const path = pathOfUrl(request.url)
        const family = familyOfPath(path)
        const failure = Cause.findErrorOption(cause)
        if (failure._tag === "Some" && isRouteNotFound(failure.value)) {
          return Effect.succeed(errorResponse(family, routeError(request.method, path)))
        }
        return Effect.logError("request failed", cause).pipe(
          Effect.as(errorResponse(family, internalError()))
        )
      })
    }),
  { global: true }
)
