/**
 * Who may call /searxng/search without a key when searxng.openOnPrivateNetwork is on: the peers
 * on loopback and private networks in every spelling a socket reports them, nobody else; and
 * opening the route is said at start, as a warning.
 */
import { Effect, Layer, Logger } from "effect"
import { describe, expect, it } from "vitest"
import { isPrivatePeer } from "../../core/api/searxng/SearxngAccess.ts"
import { searxngOptionsLayer } from "../../core/api/searxng/SearxngOptions.ts"

describe("isPrivatePeer", () => {
  it("is true for loopback and private addresses, IPv4-mapped ones included", () => {
    for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "10.1.2.3", "172.16.0.9", "192.168.1.20", "::ffff:192.168.1.20", "100.64.0.1", "169.254.10.1", "fd12:3456::1", "fe80::1"]) {
      expect(isPrivatePeer(address), address).toBe(true)
    }
  })

  it("is false for public, unspecified or unknown addresses", () => {
    for (const address of [undefined, "", "8.8.8.8", "::ffff:8.8.8.8", "2001:4860:4860::8888", "0.0.0.0", "224.0.0.1", "not an address"]) {
      expect(isPrivatePeer(address), String(address)).toBe(false)
    }
  })
})

describe("searxngOptionsLayer", () => {
  const logged = (open: boolean) => {
    const lines: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => lines.push(`${logLevel} ${Array.isArray(message) ? message.join(" ") : String(message)}`))
    Effect.runSync(Layer.build(searxngOptionsLayer({ openOnPrivateNetwork: open, openRequestsPerMinute: 120 })).pipe(
      Effect.scoped,
      Effect.provide(Logger.layer([logger]))
    ))
    return lines
  }

  it("warns at start when the route is opened, naming the shared limit and the reverse-proxy caveat", () => {
    expect(logged(true)).toEqual([expect.stringMatching(/^Warn searxng\.openOnPrivateNetwork is on: .*WITHOUT an API key .*120 requests per minute.*reverse proxy/)])
  })

  it("says nothing when it is closed (the default)", () => {
    expect(logged(false)).toEqual([])
  })
})
