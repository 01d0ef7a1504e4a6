/**
 * The bearer-key middleware of the HTTP contract. Its implementation lives in
 * core/auth (key check and rate limit); it provides the caller's key to handlers.
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"

/** The authenticated caller: the key's name (never the key) and its limit. */
export interface Principal {
  readonly keyName: string
  readonly requestsPerMinute: number
}

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("periscope/api/CurrentPrincipal") {}

export class Authorization extends HttpApiMiddleware.Service<Authorization, {
  provides: CurrentPrincipal
}>()("periscope/api/Authorization", {
  security: { bearer: HttpApiSecurity.bearer }
}) {}
