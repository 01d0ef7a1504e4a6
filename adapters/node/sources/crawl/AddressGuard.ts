/**
 * Refuses to connect to addresses that are not on the public internet (judged
 * by core/ingest/crawl/AddressPolicy.ts), so a crawl seeded or redirected by
 * someone else cannot reach an intranet. The check runs on the resolved
 * address that is then connected to (the address is pinned), so a name that
 * resolves differently the second time cannot slip through.
 *
 * Hosts listed in `allow` ("127.0.0.1:8080", "intranet.example") are exempt:
 * crawling your own intranet is allowed when you say so.
 */
import { lookup as dnsLookup } from "node:dns/promises"
import { isIP } from "node:net"
import { allowedByList, nonPublicKind } from "../../../../core/ingest/crawl/AddressPolicy.ts"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Name resolution, injectable so tests can map a name to any address without DNS. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export const systemResolver: Resolver = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true })
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }))
}

export interface AddressPolicy {
  /** Hosts (with or without port) exempt from the check, or true to allow every address. */
  readonly allow: boolean | ReadonlyArray<string>
  readonly resolve: Resolver
}

export const defaultAddressPolicy: AddressPolicy = { allow: false, resolve: systemResolver }

export type Admission =
  | { readonly _tag: "Allowed"; readonly address: ResolvedAddress }
  | { readonly _tag: "Refused"; readonly reason: string }
  /** The name has no address: nothing to judge, and a failure of the fetch rather than a refusal. */
  | { readonly _tag: "Unresolved"; readonly reason: string }

/** Resolves the URL's host and decides whether it may be connected to, and at which address. */
export const admit = async (policy: AddressPolicy, url: URL): Promise<Admission> => {
  const hostname = url.hostname.replace(/^\[|\]$/g, "")
  let addresses: ReadonlyArray<ResolvedAddress>
  if (isIP(hostname) !== 0) {
    addresses = [{ address: hostname, family: isIP(hostname) === 6 ? 6 : 4 }]
  } else {
    try {
      addresses = await policy.resolve(hostname)
    } catch (error) {
      const code = (error as { code?: string }).code
      return { _tag: "Unresolved", reason: `cannot resolve ${hostname}${code ? ` (${code})` : ""}` }
    }
  }
  if (addresses.length === 0) return { _tag: "Unresolved", reason: `cannot resolve ${hostname}` }
  if (!allowedByList(policy.allow, url)) {
    // Any non-public answer refuses the name: connecting could pick that answer.
    for (const { address } of addresses) {
      const kind = nonPublicKind(address)
      if (kind !== undefined) {
        const named = address === hostname ? address : `${hostname} (${address})`
        return { _tag: "Refused", reason: `${kind} address ${named} refused; allow it explicitly to crawl it` }
      }
    }
  }
  return { _tag: "Allowed", address: addresses[0]! }
}
