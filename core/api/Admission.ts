/**
 * The one way in for every keyed route: the credential, the key, the key's rate
 * limit, then the body's head (media type and declared length against the
 * route's limit), always in that order. The HttpApi middleware (Authorization),
 * the express lane and every further wire admit through `admit`; each renders a
 * refusal in its own wire.
 */
import { Context, Effect, Layer } from "effect"
import { ApiKeys } from "../auth/ApiKeys.ts"
import type { Principal } from "../auth/AuthError.ts"
import { RateLimits } from "../auth/RateLimits.ts"
import type { ApiError, WireFamily } from "./ApiError.ts"
import { fromAuthError } from "./DomainErrors.ts"
import { bodyHeadProblem } from "./JsonBody.ts"

/**
 * The credential of an `Authorization: Bearer <key>` header (RFC 9110: the scheme is
 * case-insensitive, then one or more spaces); undefined without one.
 */
export const bearerCredential = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || authorization.length <= 6 || authorization.charCodeAt(6) !== 32) return undefined
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return undefined
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  return start === authorization.length ? undefined : authorization.slice(start)
}

/** What admission reads of a request. */
export interface AdmissionRequest {
  /** The request's headers, lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** A credential the wire takes from elsewhere (Tavily's body `api_key`), used when no bearer header is sent. */
  readonly credential?: string | undefined
  /** The route's body limit in bytes; undefined for a route without a body. */
  readonly bodyLimit?: number | undefined
  /** False: the key's rate limit is charged later, per unit of work (MCP charges each tool call: `charge`). Default true. */
  readonly charge?: boolean | undefined
}

/**
 * How a keyed endpoint of the contract is admitted and answers refusals: its wire family and
 * its body limit. An annotation on the endpoint, so the middleware and the express lane read
 * the same rule from the API definition.
 */
export class KeyedRoute extends Context.Service<KeyedRoute, {
  readonly family: WireFamily
  readonly bodyLimit: number | undefined
  /** False when the route charges the key's limit per unit of work itself (MCP: per tool call). */
  readonly chargePerRequest?: boolean | undefined
}>()("periscope/api/KeyedRoute") {}

/** The principal a keyed route was admitted as, for the handlers that need it (MCP keys its cancellations by it). */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("periscope/api/CurrentPrincipal") {}

export class Admission extends Context.Service<Admission, {
  /** The authenticated principal, or the refusal (401, 429, 503, 413, 415) as an ApiError. */
  admit(request: AdmissionRequest): Effect.Effect<Principal, ApiError>
  /** One unit of work against an admitted principal's rate limit (429 or 503 when refused). */
  charge(principal: Principal): Effect.Effect<void, ApiError>
}>()("periscope/api/Admission") {
  static readonly layer = Layer.effect(
    Admission,
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const limits = yield* RateLimits
      const admit = (request: AdmissionRequest): Effect.Effect<Principal, ApiError> => {
        const credential = bearerCredential(request.headers["authorization"]) ?? request.credential ?? ""
        const authenticated = keys.authenticate(credential)
        const admitted = Effect.mapError(
          request.charge === false ? authenticated : Effect.flatMap(authenticated, (principal) => Effect.as(limits.check(principal), principal)),
          fromAuthError
        )
        const limit = request.bodyLimit
        if (limit === undefined) return admitted
        return Effect.flatMap(admitted, (principal) => {
          const problem = bodyHeadProblem(request.headers["content-type"], request.headers["content-length"], limit)
          return problem === undefined ? Effect.succeed(principal) : Effect.fail(problem)
        })
      }
      const charge = (principal: Principal) => Effect.mapError(limits.check(principal), fromAuthError)
      return Admission.of({ admit, charge })
    })
  )
}
