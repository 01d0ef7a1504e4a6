/**
 * The bearer-key middleware of the HTTP contract: the key check and the rate
 * limit come from core/auth; a refusal is rendered here, in the wire family
 * of the path (search envelope or OpenAI error body).
 */
import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { RateLimits } from "../auth/RateLimits.ts"
import { familyOfPath } from "./ApiError.ts"
import { fromAuthError } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { whenSampled } from "./SampledTracing.ts"

export class Authorization extends HttpApiMiddleware.Service<Authorization>()("periscope/api/Authorization", {
  security: { bearer: HttpApiSecurity.bearer }
}) {
  static readonly layer = Layer.effect(
    Authorization,
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const limits = yield* RateLimits
      return Authorization.of({
        bearer: (httpEffect, { credential }) =>
          keys.authenticate(Redacted.value(credential)).pipe(
            Effect.flatMap(limits.check),
            Effect.matchEffect({
              onFailure: (error) =>
                Effect.map(Effect.service(HttpServerRequest.HttpServerRequest), (request) =>
                  errorResponse(familyOfPath(request.url), fromAuthError(error))),
              onSuccess: () => httpEffect
            }),
            whenSampled
          )
      })
    })
  )
}
