/**
 * Who a request was authenticated as, for the access log: a cell the HTTP
 * layer provides per request and the rate-limit check fills in (it sees every
 * authenticated principal). It holds the key's configured name, never the key.
 */
import { Context } from "effect"

export interface PrincipalCell {
  keyName: string | undefined
}

/** Outside a request (or with access logs off) writes go to a cell nobody reads. */
export const RequestPrincipal = Context.Reference<PrincipalCell>("periscope/auth/RequestPrincipal", {
  defaultValue: () => ({ keyName: undefined })
})
