/**
 * Which IP addresses are not on the public internet (loopback, private ranges,
 * link-local including cloud metadata at 169.254.169.254, carrier-grade NAT,
 * multicast, reserved), judged on any spelling of the address: `0x7f.1` and
 * `2130706433` are 127.0.0.1, and an IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`) is judged as the IPv4 host it reaches.
 * Pure: name resolution stays with the runtime (adapters/node/sources/crawl/AddressGuard.ts).
 *
 * The one policy for outbound requests whose address someone other than the operator
 * chooses: the crawler (seeds, links, redirects) and webFetch (the caller's URL, every
 * redirect, and the grounded chat's fetches), both through the PageFetcher. Upstreams the
 * operator configures (search providers, chat models, a snapshot URL) are not judged: the
 * operator chose them, and they often run on a private network (SearXNG or vLLM on the LAN).
 */

type Range = readonly [network: ReadonlyArray<number>, prefix: number, kind: string]

const V4_RANGES: ReadonlyArray<Range> = [
  [[0, 0, 0, 0], 8, "unspecified"],
  [[10, 0, 0, 0], 8, "private"],
  [[100, 64, 0, 0], 10, "carrier-grade NAT"],
  [[127, 0, 0, 0], 8, "loopback"],
  [[169, 254, 0, 0], 16, "link-local"],
  [[172, 16, 0, 0], 12, "private"],
  [[192, 0, 0, 0], 24, "reserved"],
  [[192, 0, 2, 0], 24, "documentation"],
  [[192, 168, 0, 0], 16, "private"],
  [[198, 18, 0, 0], 15, "benchmarking"],
  [[198, 51, 100, 0], 24, "documentation"],
  [[203, 0, 113, 0], 24, "documentation"],
  [[224, 0, 0, 0], 4, "multicast"],
  [[240, 0, 0, 0], 4, "reserved"]
]

const v6 = (...groups: ReadonlyArray<number>): Array<number> => {
  const bytes = new Array<number>(16).fill(0)
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8
    bytes[i * 2 + 1] = g & 0xff
  })
  return bytes
}

const V6_RANGES: ReadonlyArray<Range> = [
  [v6(), 128, "unspecified"],
  [v6(0, 0, 0, 0, 0, 0, 0, 1), 128, "loopback"],
  // IPv4-compatible (deprecated): no public host answers there.
  [v6(), 96, "reserved"],
  // IPv4-translated (::ffff:0:a.b.c.d, SIIT): reaches an IPv4 host through a translator.
  [v6(0, 0, 0, 0, 0xffff, 0), 96, "IPv4-translated"],
  [v6(0x64, 0xff9b), 96, "NAT64"],
  [v6(0x64, 0xff9b, 1), 48, "NAT64"],
  [v6(0x100), 64, "discard"],
  [v6(0x2001, 0xdb8), 32, "documentation"],
  [v6(0xfc00), 7, "private"],
  [v6(0xfe80), 10, "link-local"],
  // Site-local (deprecated, still routed inside some networks).
  [v6(0xfec0), 10, "private"],
  [v6(0xff00), 8, "multicast"]
]

const inRange = (bytes: ReadonlyArray<number>, [network, prefix]: Range): boolean => {
  for (let bit = 0; bit < prefix; bit += 8) {
    const take = Math.min(8, prefix - bit)
    const mask = (0xff << (8 - take)) & 0xff
    if ((bytes[bit / 8]! & mask) !== (network[bit / 8]! & mask)) return false
  }
  return true
}

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

/** The four bytes of a canonical dotted-decimal IPv4 address. */
const ipv4Bytes = (text: string): Array<number> | undefined => {
  const m = V4.exec(text)
  if (m === null) return undefined
  const bytes = [m[1], m[2], m[3], m[4]].map(Number)
  return bytes.every((b) => b <= 255) ? bytes : undefined
}

/** The sixteen bytes of an IPv6 address as the URL parser writes it (hex groups, `::` at most once). */
const ipv6Bytes = (text: string): Array<number> | undefined => {
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)))
  const head = groups(halves[0]!)
  const tail = halves.length === 2 ? groups(halves[1]!) : []
  const fill = 8 - head.length - tail.length
  if ((halves.length === 1 && fill !== 0) || fill < 0) return undefined
  const all = [...head, ...new Array<number>(fill).fill(0), ...tail]
  if (all.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return undefined
  return v6(...all)
}

/** An address literal in its canonical form (the WHATWG URL host parser's), or undefined when it is not one. */
export const canonicalAddress = (ip: string): { readonly family: 4 | 6; readonly bytes: ReadonlyArray<number> } | undefined => {
  // Brackets and an IPv6 zone ("fe80::1%eth0") are not part of the address.
  const bare = ip.trim().replace(/^\[|\]$/g, "").replace(/%.*$/, "")
  if (bare === "") return undefined
  let host: string
  try {
    host = new URL(bare.includes(":") ? `http://[${bare}]/` : `http://${bare}/`).hostname
  } catch {
    return undefined
  }
  if (host.startsWith("[")) {
    const bytes = ipv6Bytes(host.slice(1, -1))
    return bytes === undefined ? undefined : { family: 6, bytes }
  }
  const bytes = ipv4Bytes(host)
  return bytes === undefined ? undefined : { family: 4, bytes }
}

/** The kind of non-public address `ip` is ("loopback", "private", ...), undefined when it is public. */
export const nonPublicKind = (ip: string): string | undefined => {
  const address = canonicalAddress(ip)
  if (address === undefined) return "not an IP address"
  let { bytes, family } = address
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) reaches the IPv4 host: judge that one.
  if (family === 6 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    bytes = bytes.slice(12)
    family = 4
  }
  // 6to4 (2002:AABB:CCDD::/48) carries the IPv4 address it tunnels to: judge that one too.
  if (family === 6 && bytes[0] === 0x20 && bytes[1] === 0x02) {
    const tunneled = nonPublicKind(bytes.slice(2, 6).join("."))
    if (tunneled !== undefined) return `6to4 ${tunneled}`
  }
  for (const range of family === 4 ? V4_RANGES : V6_RANGES) if (inRange(bytes, range)) return range[2]
  return undefined
}

/** Whether `host` names this machine or a private network by its name alone (no resolution). */
export const isPrivateName = (hostname: string): boolean => {
  const name = hostname.toLowerCase().replace(/\.$/, "")
  return name === "localhost" || name.endsWith(".localhost") || name.endsWith(".local") || name.endsWith(".internal") ||
    name.endsWith(".home.arpa")
}

/**
 * Why a URL that carries credentials (`http://user:pass@host/`) is not fetched, or undefined when it
 * carries none: whoever chose the URL (a caller, a page's link, a redirect) would have them sent to
 * the host and shown back in the answer's URL. No allow-list exempts it.
 */
export const credentialsRefusal = (url: URL): string | undefined =>
  url.username === "" && url.password === "" ? undefined : `a URL with credentials (user:password@${url.host}) is not fetched`

/** Whether `url`'s host is exempt from the check: `allow` lists hosts ("10.0.0.5:8080", "intranet.example"), or is true for all. */
export const allowedByList = (allow: boolean | ReadonlyArray<string>, url: URL): boolean => {
  if (allow === true) return true
  if (allow === false) return false
  const host = url.host.toLowerCase()
  const hostname = url.hostname.toLowerCase()
  return allow.some((entry) => {
    const e = entry.toLowerCase()
    return e === host || e === hostname
  })
}
