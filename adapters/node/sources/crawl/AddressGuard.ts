/**
 * Refuses to connect to addresses that are not on the public internet
 * (loopback, private ranges, link-local including cloud metadata at
 * 169.254.169.254, carrier-grade NAT, multicast, reserved), so a crawl seeded
 * or redirected by someone else cannot reach an intranet. The check runs on
 * the resolved address that is then connected to (the address is pinned), so
 * a name that resolves differently the second time cannot slip through.
 *
 * Hosts listed in `allow` ("127.0.0.1:8080", "intranet.example") are exempt:
 * crawling your own intranet is allowed when you say so.
 */
import { lookup as dnsLookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"

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

const RANGES: ReadonlyArray<readonly [string, number, "ipv4" | "ipv6", string]> = [
  ["0.0.0.0", 8, "ipv4", "unspecified"],
  ["10.0.0.0", 8, "ipv4", "private"],
  ["100.64.0.0", 10, "ipv4", "carrier-grade NAT"],
  ["127.0.0.0", 8, "ipv4", "loopback"],
  ["169.254.0.0", 16, "ipv4", "link-local"],
  ["172.16.0.0", 12, "ipv4", "private"],
  ["192.0.0.0", 24, "ipv4", "reserved"],
  ["192.0.2.0", 24, "ipv4", "documentation"],
  ["192.168.0.0", 16, "ipv4", "private"],
  ["198.18.0.0", 15, "ipv4", "benchmarking"],
  ["198.51.100.0", 24, "ipv4", "documentation"],
  ["203.0.113.0", 24, "ipv4", "documentation"],
  ["224.0.0.0", 4, "ipv4", "multicast"],
  ["240.0.0.0", 4, "ipv4", "reserved"],
  ["::", 128, "ipv6", "unspecified"],
  ["::1", 128, "ipv6", "loopback"],
  ["64:ff9b::", 96, "ipv6", "NAT64"],
  ["100::", 64, "ipv6", "discard"],
  ["2001:db8::", 32, "ipv6", "documentation"],
  ["fc00::", 7, "ipv6", "private"],
  ["fe80::", 10, "ipv6", "link-local"],
  ["ff00::", 8, "ipv6", "multicast"]
]

const blocks = RANGES.map(([network, prefix, type, kind]) => {
  const list = new BlockList()
  list.addSubnet(network, prefix, type)
  return { list, type, kind }
})

/** The kind of non-public address `ip` is ("loopback", "private", ...), or undefined when it is public. */
export const nonPublicKind = (ip: string): string | undefined => {
  let address = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "")
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) reaches the IPv4 host: judge that one.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) address = mapped[1]!
  const family = isIP(address)
  if (family === 0) return "not an IP address"
  const type = family === 4 ? "ipv4" : "ipv6"
  for (const block of blocks) {
    if (block.type === type && block.list.check(address, type)) return block.kind
  }
  return undefined
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

const isAllowedHost = (policy: AddressPolicy, url: URL): boolean => {
  if (policy.allow === true) return true
  if (policy.allow === false) return false
  const host = url.host.toLowerCase()
  const hostname = url.hostname.toLowerCase()
  return policy.allow.some((entry) => {
    const e = entry.toLowerCase()
    return e === host || e === hostname
  })
}

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
      return { _tag: "Refused", reason: `cannot resolve ${hostname}${code ? ` (${code})` : ""}` }
    }
  }
  if (addresses.length === 0) return { _tag: "Refused", reason: `cannot resolve ${hostname}` }
  if (!isAllowedHost(policy, url)) {
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
