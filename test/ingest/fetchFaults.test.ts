/**
 * Faults at the edge of fetching, through the real Node PageFetcher against loopback
 * sites, in webFetch (the in-process server) and in a crawl:
 * - a redirect to a URL with credentials is refused as the same URL asked directly is,
 *   nothing is sent to it and the credentials show nowhere in the answer;
 * - stacked content encodings are decoded layer by layer, each layer under the size limit;
 *   an unknown encoding, or too many layers, is refused with 415 naming it;
 * - a host name that does not resolve is a failed fetch (502 FetchFailed), not a refusal;
 * - a robots.txt over the size limit leaves the host's pages out saying it is too large.
 */
import type { IncomingHttpHeaders } from "node:http"
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib"
import { Effect, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nodePageFetcher } from "../../adapters/node/sources/crawl/NodePageFetcher.ts"
import { systemResolver } from "../../adapters/node/sources/crawl/AddressGuard.ts"
import { crawlSource } from "../../core/ingest/crawl/Crawl.ts"
import { PageFetcher } from "../../core/ingest/crawl/PageFetcher.ts"
import { type FetchServer, postFetch, redirect, send, serveSite, type Site, startFetchServer } from "../fetch/support.ts"
import { type Handler as SiteHandler, page, sendHtml, type SiteServer, startSiteServer } from "./support/siteServer.ts"

const ARTICLE = "<!doctype html><html><head><title>Layers</title></head><body><main><h1>Layers</h1><p>Read through every layer of its encoding.</p></main></body></html>"

/** A page whose body is `ARTICLE` (or `body`) encoded by `codings` in order, announced as `header`. */
const encoded = (codings: ReadonlyArray<"gzip" | "deflate" | "br">, header = codings.join(", "), body: Uint8Array = new TextEncoder().encode(ARTICLE)) => {
  let bytes: Uint8Array = body
  for (const coding of codings) bytes = coding === "gzip" ? gzipSync(bytes) : coding === "deflate" ? deflateSync(bytes) : brotliCompressSync(bytes)
  return send(bytes, "text/html; charset=utf-8", 200, { "content-encoding": header })
}

const MAX_BYTES = 1024 * 1024
const headersSeen: Array<IncomingHttpHeaders> = []
let site: Site
let server: FetchServer

beforeAll(async () => {
  site = await serveSite({
    "/article.html": (q, r) => {
      headersSeen.push(q.headers)
      send(ARTICLE, "text/html")(q, r)
    },
    "/to-credentials": (_q, r) => redirect(`http://user:secret-pass@${site.host}/article.html`)(_q, r),
    "/gzip-gzip": encoded(["gzip", "gzip"]),
    "/deflate-gzip-br": encoded(["deflate", "gzip", "br"]),
    "/gzip-identity": encoded(["gzip"], "identity, gzip"),
    "/compress": send(ARTICLE, "text/html", 200, { "content-encoding": "compress" }),
    "/gzip-zstd": encoded(["gzip"], "gzip, zstd"),
    "/four-layers": encoded(["gzip", "gzip", "gzip", "gzip"]),
    // 64 MiB of zeros, gzipped twice: a few KiB on the wire; the outer layer alone decodes to more than the limit.
    "/bomb-in-bomb": encoded(["gzip", "gzip"], "gzip, gzip", new Uint8Array(64 * 1024 * 1024))
  })
  server = await startFetchServer({ allowHosts: [site.host], timeoutMs: 5000, maxBytes: MAX_BYTES })
})

afterAll(async () => {
  await server?.close()
  await site?.close()
})

const fetchPage = (url: string) => postFetch(server.url, { url })

describe("webFetch: credentials in a redirect", () => {
  it("refuses a redirect to http://user:pass@host/ (403) as it refuses the URL asked directly (400); nothing is sent, the credentials show nowhere", async () => {
    const direct = await fetchPage(`http://user:secret-pass@${site.host}/article.html`)
    expect(direct.status).toBe(400)
    expect(direct.body.exception).toEqual({ type: "InvalidUrl", detail: "url: must not carry credentials" })

    const before = headersSeen.length
    const redirected = await fetchPage(`${site.origin}/to-credentials`)
    expect(redirected.status).toBe(403)
    expect(redirected.body.exception).toEqual({ type: "FetchRefused", detail: `a URL with credentials (user:password@${site.host}) is not fetched` })
    expect(redirected.body.data).toBeNull()
    expect(JSON.stringify(redirected.body)).not.toContain("secret-pass")
    expect(headersSeen.length).toBe(before)
  })
})

describe("webFetch: content encodings", () => {
  it("decodes stacked encodings layer by layer (gzip, gzip; deflate, gzip, br; identity, gzip)", async () => {
    for (const path of ["/gzip-gzip", "/deflate-gzip-br", "/gzip-identity"]) {
      const { status, body } = await fetchPage(`${site.origin}${path}`)
      expect(status, path).toBe(200)
      expect(body.data.title, path).toBe("Layers")
      expect(body.data.content, path).toContain("Read through every layer of its encoding.")
    }
  })

  it("refuses an encoding it cannot decode, and more than three layers, with 415 naming it", async () => {
    const compress = await fetchPage(`${site.origin}/compress`)
    expect(compress.status).toBe(415)
    expect(compress.body.exception).toEqual({ type: "UnsupportedContentType", detail: 'content encoding "compress" cannot be decoded; gzip, deflate and br can' })
    const zstd = await fetchPage(`${site.origin}/gzip-zstd`)
    expect(zstd.status).toBe(415)
    expect(zstd.body.exception.detail).toBe('content encoding "zstd" cannot be decoded; gzip, deflate and br can')
    const four = await fetchPage(`${site.origin}/four-layers`)
    expect(four.status).toBe(415)
    expect(four.body.exception.detail).toBe("4 layers of content encoding (gzip, gzip, gzip, gzip); at most 3 are decoded")
  })

  it("bounds every layer: a bomb inside a bomb is 413, stopped at the first layer over the limit", async () => {
    const { status, body } = await fetchPage(`${site.origin}/bomb-in-bomb`)
    expect(status).toBe(413)
    expect(body.exception.type).toBe("PageTooLarge")
  })
})

describe("webFetch: a name that does not resolve", () => {
  it("is 502 FetchFailed naming the host, not 403 FetchRefused", async () => {
    // .invalid never resolves (RFC 6761).
    const { status, body } = await fetchPage("http://no-such-host.invalid/page")
    expect(status).toBe(502)
    expect(body.exception.type).toBe("FetchFailed")
    expect(body.exception.detail).toMatch(/^the page could not be fetched: cannot resolve no-such-host\.invalid/)
  })
})

describe("crawl: credentials in a redirect, a robots.txt too large", () => {
  const sites: Array<SiteServer> = []
  afterAll(async () => {
    await Promise.all(sites.map((s) => s.close()))
  })
  const crawlOf = (origin: string, host: string, seeds: ReadonlyArray<string>) =>
    Effect.runPromise(Stream.runCollect(crawlSource({ seeds: seeds.map((s) => `${origin}${s}`), delayMs: 0 }, nodePageFetcher({ allow: [host], resolve: systemResolver })).items))

  it("skips a redirect to a URL with credentials, naming why, without fetching it or showing them", async () => {
    let authorized = 0
    const routes: Record<string, SiteHandler> = {
      "/start": (_q, r) => {
        r.writeHead(302, { location: `http://crawler:secret-pass@${crawled.host}/page` })
        r.end()
      },
      "/page": (q, r) => {
        if (q.headers.authorization !== undefined) authorized++
        sendHtml(page("Page"))(q, r)
      }
    }
    const crawled = await startSiteServer(routes)
    sites.push(crawled)
    const items = await crawlOf(crawled.origin, crawled.host, ["/start"])
    expect(items).toEqual([{ _tag: "Skipped", origin: `${crawled.origin}/start`, reason: "redirected to a URL with credentials" }])
    expect(crawled.requested.filter((p) => p === "/page")).toEqual([])
    expect(authorized).toBe(0)
  })

  it("says robots.txt too large when it is over 512 KiB, not disallowed by robots.txt", async () => {
    const huge = "# padding\n".repeat(60_000) + "User-agent: *\nAllow: /\n"
    const robotsSite = await startSiteServer({
      "/robots.txt": (_q, r) => {
        r.writeHead(200, { "content-type": "text/plain" })
        r.end(huge)
      },
      "/a": sendHtml(page("A"))
    })
    sites.push(robotsSite)
    const items = await crawlOf(robotsSite.origin, robotsSite.host, ["/a"])
    expect(items).toEqual([{ _tag: "Skipped", origin: `${robotsSite.origin}/a`, reason: "robots.txt too large (over 512.0 KiB)" }])
  })
})

describe("the runtime-fetch PageFetcher (Deno, or anywhere without Node's sockets)", () => {
  const fetcher = PageFetcher.layerFetch({ allow: true })
  const get = (url: string) =>
    Effect.runPromise(Effect.result(Effect.flatMap(PageFetcher, (f) =>
      f.fetch({ url, accept: "*/*", userAgent: "test", timeoutMs: 5000, maxBytes: MAX_BYTES, wanted: () => true })).pipe(Effect.provide(fetcher))))

  it("refuses a URL with credentials and an encoding it cannot decode; reads stacked ones", async () => {
    const withCredentials = await get(`http://user:secret-pass@${site.host}/article.html`)
    expect(withCredentials._tag === "Failure" && withCredentials.failure).toMatchObject({ reason: "refused", message: `a URL with credentials (user:password@${site.host}) is not fetched` })
    const compress = await get(`${site.origin}/compress`)
    expect(compress._tag === "Failure" && compress.failure).toMatchObject({ reason: "unsupported", message: 'content encoding "compress" cannot be decoded; gzip, deflate and br can' })
    const stacked = await get(`${site.origin}/gzip-gzip`)
    expect(stacked._tag === "Success" && stacked.success._tag === "Body" && new TextDecoder().decode(stacked.success.body)).toBe(ARTICLE)
  })
})
