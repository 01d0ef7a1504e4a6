/** The Authorization middleware: key check, then rate limit; failures rendered in the path's wire family. */
import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { familyOfPath } from "../api/ApiError.ts"
import { Authorization, CurrentPrincipal } from "../api/Authorization.ts"
import { errorResponse } from "../api/ErrorResponse.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { RateLimiter } from "./RateLimiter.ts"

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const limiter = yield* RateLimiter
    return Authorization.of({
      bearer: (httpEffect, { credential }) =>
        keys.authenticate(Redacted.value(credential)).pipe(
          Effect.tap(limiter.check),
          Effect.matchEffect({
            onFailure: (error) =>
              Effect.map(Effect.service(HttpServerRequest.HttpServerRequest), (request) =>
                errorResponse(familyOfPath(request.url), error)),
            onSuccess: (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal)
          })
        )
    })
  })
)
