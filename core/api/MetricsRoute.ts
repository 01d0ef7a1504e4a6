/**
 * GET /metrics: every metric of this process in the Prometheus text format
 * (effect's PrometheusMetrics). It is a plain route beside the contract
 * because it answers text and its auth is a setting: by default it wants an
 * API key like every other endpoint (counts by route and key activity are
 * not for the public); `observability.metrics.public: true` opens it for a
 * scraper on a private network. A scrape does not use up the key's rate limit.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { AuthError } from "../auth/AuthError.ts"
import { fromAuthError } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { METRICS_PATH, TelemetryOptions } from "./RequestTelemetry.ts"

const scrape = PrometheusMetrics.format().pipe(
  Effect.map((body) => HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
)

const bearerOf = (header: string | undefined): string | undefined => {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i)
  return match?.[1]
}

export const MetricsRoute = Layer.effectDiscard(Effect.gen(function*() {
  const options = yield* TelemetryOptions
  if (!options.metrics) return
  const router = yield* HttpRouter.HttpRouter
  const keys = yield* ApiKeys
  const handler = options.metricsPublic ? scrape : Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) => {
    const key = bearerOf(request.headers.authorization)
    const authenticated = key === undefined
      ? Effect.fail(new AuthError({ reason: "missing_key", message: "GET /metrics needs an API key: send \"Authorization: Bearer <key>\"" }))
      : keys.authenticate(key)
    return authenticated.pipe(
      Effect.matchEffect({
        onFailure: (error) => Effect.succeed(errorResponse("search", fromAuthError(error))),
        onSuccess: () => scrape
      })
    )
  })
  yield* router.add("GET", METRICS_PATH, handler)
}))
