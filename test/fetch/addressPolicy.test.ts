/**
 * The one address policy (core/ingest/crawl/AddressPolicy.ts) on every spelling of a
 * non-public address: judged purely, then through webFetch on the real server, both as the
 * requested URL and as the target of a redirect from an allowed site, and with names that
 * resolve to loopback. Only the loopback site itself (by host:port) is allowed; a second
 * loopback site holds the "secret" every attempt aims at, and it must never see a request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { canonicalAddress, nonPublicKind } from "../../core/ingest/crawl/AddressPolicy.ts"
import { type FetchServer, postFetch, redirect, send, serveSite, type Site, startFetchServer } from "./support.ts"

/** Spellings of a loopback, private or link-local host with their kind; `P` is replaced by a port. */
const SPELLINGS: ReadonlyArray<readonly [host: string, kind: string]> = [
  ["127.0.0.1:P", "loopback"],
  ["127.1:P", "loopback"],
  ["127.0.1:P", "loopback"],
  ["2130706433:P", "loopback"],
  ["017700000001:P", "loopback"],
  ["0177.0.0.1:P", "loopback"],
  ["0x7f.1:P", "loopback"],
  ["0x7f000001:P", "loopback"],
  ["0x7F.0.0.1:P", "loopback"],
  ["127.255.255.254:P", "loopback"],
  ["[::1]:P", "loopback"],
  ["[0:0:0:0:0:0:0:1]:P", "loopback"],
  ["[::ffff:127.0.0.1]:P", "loopback"],
  ["[::ffff:7f00:1]:P", "loopback"],
  ["[0:0:0:0:0:ffff:7f00:0001]:P", "loopback"],
  ["[::ffff:0:7f00:1]:P", "IPv4-translated"],
  ["[::127.0.0.1]:P", "reserved"],
  ["[2002:7f00:1::1]:P", "6to4 loopback"],
  ["[64:ff9b::7f00:1]:P", "NAT64"],
  ["0.0.0.0:P", "unspecified"],
  ["0:P", "unspecified"],
  ["[::]:P", "unspecified"],
  ["169.254.169.254", "link-local"],
  ["[::ffff:169.254.169.254]", "link-local"],
  ["[::ffff:a9fe:a9fe]", "link-local"],
  ["2852039166", "link-local"],
  ["[fe80::1]", "link-local"],
  ["10.0.0.1", "private"],
  ["012.0.0.1", "private"],
  ["172.16.5.4", "private"],
  ["192.168.1.1", "private"],
  ["0xc0.0xa8.1.1", "private"],
  ["[::ffff:192.168.1.1]", "private"],
  ["[fd00::1]", "private"],
  ["[fc00::1]", "private"],
  ["[fec0::1]", "private"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["224.0.0.1", "multicast"],
  ["[ff02::1]", "multicast"],
  ["255.255.255.255", "reserved"]
]

/** The address of a host spelling as the URL parser reads it. */
const hostOf = (spelling: string) => new URL(`http://${spelling.replace(":P", ":1")}/`).hostname

describe("address policy: every spelling judged as the address it is", () => {
  it.each(SPELLINGS)("%s is %s", (spelling, kind) => {
    expect(canonicalAddress(hostOf(spelling))).toBeDefined()
    expect(nonPublicKind(hostOf(spelling))).toBe(kind)
  })

  it("public addresses pass, in any spelling", () => {
    for (const host of ["93.184.215.14", "1555617550", "0x5d.0xb8.0xd7.0x0e", "[2606:4700::6810:84e5]", "[::ffff:93.184.215.14]", "[2002:5db8:d70e::1]", "172.32.0.1", "100.128.0.1"]) {
      expect(nonPublicKind(hostOf(host)), host).toBeUndefined()
    }
  })
})

describe("address policy through webFetch", () => {
  let site: Site
  let server: FetchServer
  let secret: Site
  let secretPort: number

  beforeAll(async () => {
    site = await serveSite({
      "/page": send("<html><head><title>Fine</title></head><body><main><p>Allowed page.</p></main></body></html>", "text/html"),
      "/go": (request, response) => {
        const to = new URL(request.url ?? "/", "http://x").searchParams.get("to") ?? "/"
        redirect(to)(request, response)
      }
    })
    // Names resolved without DNS: two names for loopback, one for the metadata service, one allowed by name.
    server = await startFetchServer({ allowHosts: [site.host, `allowed.test:${site.port}`], timeoutMs: 3000 }, {
      resolve: async (hostname) => {
        const table: Record<string, string> = {
          "intranet.test": "127.0.0.1",
          "rebind.test": "::ffff:127.0.0.1",
          "metadata.test": "169.254.169.254",
          "allowed.test": "127.0.0.1",
          "localhost": "127.0.0.1"
        }
        const address = table[hostname.replace(/\.$/, "")]
        if (address === undefined) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" })
        return [{ address, family: address.includes(":") ? 6 : 4 }]
      }
    })
    secret = await serveSite({ "/": send("secret", "text/plain") })
    secretPort = secret.port
  })

  afterAll(async () => {
    await server?.close()
    await site?.close()
    await secret?.close()
  })

  const targets = () => [
    ...SPELLINGS.map(([spelling]) => `http://${spelling.replace(":P", `:${secretPort}`)}/`),
    `http://localhost:${secretPort}/`,
    `http://localhost.:${secretPort}/`,
    `http://LOCALHOST:${secretPort}/`,
    `http://intranet.test:${secretPort}/`,
    `http://rebind.test:${secretPort}/`,
    `http://metadata.test/latest/meta-data/`,
    `https://127.0.0.1:${secretPort}/`
  ]

  it("refuses each as the requested URL (403), before any request is sent", async () => {
    for (const url of targets()) {
      const { status, body } = await postFetch(server.url, { url })
      expect(status, url).toBe(403)
      expect(body.exception.type, url).toBe("FetchRefused")
      expect(body.message, url).toMatch(/(loopback|private|link-local|unspecified|reserved|IPv4-translated|6to4|NAT64|carrier-grade NAT|multicast) address .* refused; allow it in the config/)
    }
    expect(secret.requested).toEqual([])
  })

  it("refuses each as a redirect target from an allowed site (403), the site's page itself being allowed", async () => {
    expect((await postFetch(server.url, { url: `${site.origin}/page` })).status).toBe(200)
    for (const url of targets()) {
      const { status, body } = await postFetch(server.url, { url: `${site.origin}/go?to=${encodeURIComponent(url)}` })
      expect(status, url).toBe(403)
      expect(body.exception.type, url).toBe("FetchRefused")
    }
    // After a chain of allowed redirects too.
    const chained = `${site.origin}/go?to=${encodeURIComponent(`${site.origin}/go?to=${encodeURIComponent(`http://[::ffff:7f00:1]:${secretPort}/`)}`)}`
    expect((await postFetch(server.url, { url: chained })).status).toBe(403)
    expect(secret.requested).toEqual([])
  })

  it("a name that resolves to loopback is fetched only when the name is allowed, and then from the address it was checked at", async () => {
    const byName = await postFetch(server.url, { url: `http://allowed.test:${site.port}/page` })
    expect(byName.status).toBe(200)
    expect(byName.body.data.content).toBe("Allowed page.")
    const otherPort = await postFetch(server.url, { url: `http://allowed.test:${secretPort}/` })
    expect(otherPort.status).toBe(403)
  })

  it("allowPrivateAddresses lets every address through", async () => {
    const open = await startFetchServer({ allowPrivateAddresses: true })
    try {
      const { status, body } = await postFetch(open.url, { url: `http://[::ffff:127.0.0.1]:${site.port}/page` })
      expect(status).toBe(200)
      expect(body.data.url).toBe(`http://[::ffff:7f00:1]:${site.port}/page`)
    } finally {
      await open.close()
    }
  })
})

describe("address policy in the fetch-based PageFetcher (Deno, embed)", () => {
  it("refuses every literal spelling and private name before connecting", async () => {
    const { Effect } = await import("effect")
    const { PageFetcher } = await import("../../core/ingest/crawl/PageFetcher.ts")
    const secret = await serveSite({ "/": send("secret", "text/plain") })
    try {
      const fetcher = Effect.runSync(Effect.provide(Effect.service(PageFetcher), PageFetcher.layerFetch()))
      const urls = [
        ...SPELLINGS.map(([spelling]) => `http://${spelling.replace(":P", `:${secret.port}`)}/`),
        `http://localhost:${secret.port}/`,
        `http://localhost.:${secret.port}/`,
        `http://printer.local/`,
        `http://db.internal/`
      ]
      for (const url of urls) {
        const exit = await Effect.runPromiseExit(fetcher.fetch({ url, accept: "*/*", userAgent: "test", timeoutMs: 2000, maxBytes: 1024, wanted: () => true }))
        expect(exit._tag, url).toBe("Failure")
        expect(JSON.stringify(exit), url).toContain('"reason":"refused"')
      }
      expect(secret.requested).toEqual([])
    } finally {
      await secret.close()
    }
  })
})
