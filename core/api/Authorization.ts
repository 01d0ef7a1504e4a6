/**
 * The keyed groups' middleware of the HTTP contract: every request passes
 * Admission (key, limit, body head) with the rule its endpoint is annotated
 * with (KeyedRoute); a refusal is rendered in the endpoint's wire family.
 * The bearer scheme is declared here so that /openapi.json and HttpApi clients
 * know it; the header itself is read by Admission, as on every other way in.
 */
import { Context, Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { Admission, CurrentPrincipal, KeyedRoute } from "./Admission.ts"
import { familyOfPath } from "./ApiError.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { whenSampled } from "./SampledTracing.ts"

export class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: CurrentPrincipal }>()("periscope/api/Authorization", {
  security: { bearer: HttpApiSecurity.bearer }
}) {
  static readonly layer = Layer.effect(
    Authorization,
    Effect.map(Effect.service(Admission), (admission) =>
      Authorization.of({
        bearer: (httpEffect, { endpoint }) =>
          Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) => {
            const route = Context.getOrUndefined(endpoint.annotations, KeyedRoute)
            return admission.admit({ headers: request.headers, bodyLimit: route?.bodyLimit, charge: route?.chargePerRequest }).pipe(
              Effect.matchEffect({
                onFailure: (error) => Effect.succeed(errorResponse(route?.family ?? familyOfPath(request.url), error)),
                onSuccess: (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal)
              }),
              whenSampled
            )
          })
      }))
  )
}
