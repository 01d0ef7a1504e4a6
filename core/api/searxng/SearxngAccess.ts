/**
 * Who may call /searxng/search: a caller with a key (Authorization: Bearer, admitted by
 * Admission like every keyed route), or, when `searxng.openOnPrivateNetwork` is on, a caller
 * without one whose connecting address is loopback or on a private network: those share one
 * principal, charged through Admission like a key. The address is the socket's peer, never a
 * forwarded header a caller could write.
 */
import { Effect, Option } from "effect"
import type { Principal } from "../../auth/AuthError.ts"
import { nonPublicKind } from "../../ingest/crawl/AddressPolicy.ts"
import { type Admission, bearerCredential } from "../Admission.ts"
import type { ApiError } from "../ApiError.ts"
import type { RequestHead } from "../RequestTelemetry.ts"
import type { SearxngOptionsShape } from "./SearxngOptions.ts"

/** Kinds of non-public address (AddressPolicy) that are a private network, not merely unroutable. */
const PRIVATE_KINDS = new Set(["loopback", "private", "link-local", "carrier-grade NAT"])

export const isPrivatePeer = (address: string | undefined): boolean => {
  if (address === undefined) return false
  const kind = nonPublicKind(address)
  return kind !== undefined && PRIVATE_KINDS.has(kind)
}

/** The name keyless callers are counted and logged under. */
export const OPEN_PRINCIPAL_NAME = "searxng-private-network"

export const makeSearxngAccess = (admission: Admission["Service"], options: SearxngOptionsShape) => {
  const open: Principal = { keyName: OPEN_PRINCIPAL_NAME, requestsPerMinute: options.openRequestsPerMinute }
  return (request: RequestHead): Effect.Effect<Principal, ApiError> => {
    const keyless = options.openOnPrivateNetwork && bearerCredential(request.headers["authorization"]) === undefined
    if (keyless && isPrivatePeer(request.peerAddress === undefined ? undefined : Option.getOrUndefined(request.peerAddress))) {
      return Effect.as(admission.charge(open), open)
    }
    // The body's head is the route's to check: SearXNG's form is not JSON.
    return admission.admit({ headers: request.headers })
  }
}
