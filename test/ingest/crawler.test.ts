/**
 * The crawler (core/ingest/crawl) against real HTTP servers on loopback,
 * fetching through the Node PageFetcher. The servers are private addresses,
 * so each test allows exactly its own server and nothing else; the guard
 * tests show what happens without that permission.
 *
 * Politeness is checked without measuring real time: the crawl runs on
 * Effect's TestClock (its pauses wait for virtual time, which the test moves
 * on), each request notes its virtual start, and the servers count requests
 * in flight.
 */
import { gzipSync } from "node:zlib"
import { Clock, Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { afterEach, describe, expect, it } from "vitest"
import { type AddressPolicy, type Resolver, systemResolver } from "../../adapters/node/sources/crawl/AddressGuard.ts"
import { nodePageFetcher } from "../../adapters/node/sources/crawl/NodePageFetcher.ts"
import { nonPublicKind } from "../../core/ingest/crawl/AddressPolicy.ts"
import { type CrawlOptions, crawlSource } from "../../core/ingest/crawl/Crawl.ts"
import { PageFetcher } from "../../core/ingest/crawl/PageFetcher.ts"
import type { SourceItem } from "../../core/ingest/DocumentSource.ts"
import { type Handler, page, sendHtml, type SiteServer, startSiteServer } from "./support/siteServer.ts"

const servers: Array<SiteServer> = []
const serve = async (...args: Parameters<typeof startSiteServer>) => {
  const server = await startSiteServer(...args)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

interface TestCrawl extends CrawlOptions {
  readonly allowPrivate?: AddressPolicy["allow"]
  readonly resolve?: Resolver
  /** Notes the Clock time each page or sitemap request starts (robots.txt requests are not noted). */
  readonly onRequest?: (url: string, at: number) => void
}

const fetcherFor = (options: TestCrawl): PageFetcher["Service"] => {
  const real = nodePageFetcher({ allow: options.allowPrivate ?? false, resolve: options.resolve ?? systemResolver })
  const onRequest = options.onRequest
  if (onRequest === undefined) return real
  return {
    fetch: (request) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => {
        if (!request.url.endsWith("/robots.txt")) onRequest(request.url, at)
        return real.fetch(request)
      })
  }
}

const crawl = (options: TestCrawl): Promise<Array<SourceItem>> =>
  Effect.runPromise(Stream.runCollect(crawlSource({ delayMs: 0, ...options }, fetcherFor(options)).items))

/** The crawl on a TestClock moved on 50 ms every 2 real ms, so pauses of seconds take a blink. */
const crawlOnTestClock = (options: TestCrawl): Promise<Array<SourceItem>> =>
  Effect.runPromise(
    Effect.gen(function*() {
      let done = false
      const fiber = yield* Effect.forkChild(
        Stream.runCollect(crawlSource(options, fetcherFor(options)).items).pipe(Effect.ensuring(Effect.sync(() => (done = true))))
      )
      while (!done) {
        yield* TestClock.adjust(50)
        yield* TestClock.withLive(Effect.sleep(2))
      }
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(TestClock.layer()))
  )

const documentUrls = (items: ReadonlyArray<SourceItem>) =>
  items.flatMap((i) => (i._tag === "Document" ? [i.document.url] : [])).sort()
const skips = (items: ReadonlyArray<SourceItem>) =>
  items.flatMap((i) => (i._tag === "Skipped" ? [`${new URL(i.origin).pathname}: ${i.reason}`] : [])).sort()
const failures = (items: ReadonlyArray<SourceItem>) =>
  items.flatMap((i) => (i._tag === "Failed" ? [i.message] : []))

const robots = (text: string): Handler => (_q, response) => {
  response.writeHead(200, { "content-type": "text/plain" })
  response.end(text)
}

describe("crawler: robots.txt", () => {
  it("never requests a disallowed path, for all agents and for PeriscopeBot's own group", async () => {
    const site = await serve({
      "/robots.txt": robots("User-agent: *\nDisallow: /private\n\nUser-agent: PeriscopeBot\nDisallow: /private\nDisallow: /no-bots-here\n"),
      "/": sendHtml(page("Home", ["/public", "/private/secret", "/no-bots-here"])),
      "/public": sendHtml(page("Public")),
      "/private/secret": sendHtml(page("Secret")),
      "/no-bots-here": sendHtml(page("Hidden"))
    })
    const items = await crawl({ seeds: [`${site.origin}/`], allowPrivate: [site.host] })
    expect(documentUrls(items)).toEqual([`${site.origin}/`, `${site.origin}/public`])
    expect(skips(items)).toEqual([
      "/no-bots-here: disallowed by robots.txt",
      "/private/secret: disallowed by robots.txt"
    ])
    expect(site.requested).not.toContain("/private/secret")
    expect(site.requested).not.toContain("/no-bots-here")
    expect(site.requested.filter((p) => p === "/robots.txt")).toHaveLength(1)
  })

  it("treats a missing robots.txt as allow-all and a failing one as disallow-all, reported as an error", async () => {
    const open = await serve({ "/": sendHtml(page("Open site")) })
    expect(documentUrls(await crawl({ seeds: [`${open.origin}/`], allowPrivate: [open.host] }))).toEqual([`${open.origin}/`])

    const broken = await serve({
      "/robots.txt": (_q, r) => {
        r.writeHead(503)
        r.end()
      },
      "/": sendHtml(page("Closed site"))
    })
    const items = await crawl({ seeds: [`${broken.origin}/`], allowPrivate: [broken.host] })
    // Not a quiet skip: the page is an error naming the cause, so the run reports it (issue 11).
    expect(items).toEqual([{ _tag: "Failed", origin: `${broken.origin}/`, message: "robots.txt answered HTTP 503" }])
    expect(broken.requested).toEqual(["/robots.txt"])
  })

  it("skips noindex pages and does not follow nofollow links", async () => {
    const site = await serve({
      "/": sendHtml(page("Home", ["/hidden", "/no-follow-page"], `<a rel="nofollow" href="/via-nofollow-link">x</a>`)),
      "/hidden": sendHtml(page("Hidden").replace("<head>", `<head><meta name="robots" content="noindex">`)),
      "/no-follow-page": sendHtml(page("Stop", ["/beyond"]).replace("<head>", `<head><meta name="robots" content="nofollow">`)),
      "/beyond": sendHtml(page("Beyond")),
      "/via-nofollow-link": sendHtml(page("Nofollow target"))
    })
    const items = await crawl({ seeds: [`${site.origin}/`], allowPrivate: [site.host] })
    expect(documentUrls(items)).toEqual([`${site.origin}/`, `${site.origin}/no-follow-page`])
    expect(skips(items)).toEqual(["/hidden: noindex"])
    expect(site.requested).not.toContain("/beyond")
    expect(site.requested).not.toContain("/via-nofollow-link")
  })
})

describe("crawler: sitemaps", () => {
  it("reads a sitemap index, a gzipped sitemap and a plain one, and crawls the pages they list", async () => {
    const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>${body}`
    const site = await serve({
      "/sitemap_index.xml": (_q, r) => {
        r.writeHead(200, { "content-type": "application/xml" })
        r.end(xml(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <sitemap><loc>/sitemap-a.xml.gz</loc></sitemap><sitemap><loc>/sitemap-b.xml</loc></sitemap></sitemapindex>`))
      },
      "/sitemap-a.xml.gz": (_q, r) => {
        r.writeHead(200, { "content-type": "application/x-gzip" })
        r.end(gzipSync(xml(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <url><loc>/listed-1</loc><lastmod>2001-01-01</lastmod></url><url><loc>/listed-2</loc></url></urlset>`)))
      },
      "/sitemap-b.xml": (_q, r) => {
        r.writeHead(200, { "content-type": "text/xml" })
        r.end(xml(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/listed-3?x=1&amp;y=2</loc></url></urlset>`))
      },
      "/listed-1": sendHtml(page("Listed one", ["/only-linked"])),
      "/listed-2": sendHtml(page("Listed two")),
      "/listed-3": sendHtml(page("Listed three")),
      "/only-linked": sendHtml(page("Only linked"))
    })
    const items = await crawl({ sitemaps: [`${site.origin}/sitemap_index.xml`], allowPrivate: [site.host], maxDepth: 0 })
    expect(documentUrls(items)).toEqual([`${site.origin}/listed-1`, `${site.origin}/listed-2`, `${site.origin}/listed-3?x=1&y=2`])
    // A page stating no date of its own is dated by its sitemap <lastmod>; the others stay undated.
    const dates = Object.fromEntries(items.flatMap((i) => (i._tag === "Document" ? [[i.document.url, i.document.date]] : [])))
    expect(dates).toEqual({ [`${site.origin}/listed-1`]: "2001-01-01", [`${site.origin}/listed-2`]: null, [`${site.origin}/listed-3?x=1&y=2`]: null })
    expect(site.requested).not.toContain("/only-linked")
  })

  it("reports a sitemap that is not a sitemap", async () => {
    const site = await serve({
      "/sitemap.xml": (_q, r) => {
        r.writeHead(200, { "content-type": "application/xml" })
        r.end(`<rss><channel></channel></rss>`)
      }
    })
    const items = await crawl({ sitemaps: [`${site.origin}/sitemap.xml`], allowPrivate: [site.host] })
    expect(failures(items)).toEqual(["sitemap: expected <urlset> or <sitemapindex>, found <rss>"])
  })
})

describe("crawler: politeness and limits", () => {
  const fanOut = (count: number): Record<string, Handler> => {
    const routes: Record<string, Handler> = {
      "/": sendHtml(page("Hub", Array.from({ length: count }, (_, i) => `/p${i}`)))
    }
    for (let i = 0; i < count; i++) routes[`/p${i}`] = sendHtml(page(`Leaf ${i}`))
    return routes
  }

  it("keeps one request in flight per host and pauses the delay between requests", async () => {
    const site = await serve(fanOut(6), { latencyMs: 15 })
    const starts: Array<number> = []
    const items = await crawlOnTestClock({
      seeds: [`${site.origin}/`],
      allowPrivate: [site.host],
      concurrency: 4,
      delayMs: 1000,
      onRequest: (_url, at) => starts.push(at)
    })
    expect(documentUrls(items)).toHaveLength(7)
    expect(site.maxInFlight()).toBe(1)
    // 7 pages, each started at least the delay after the previous request to the host ended.
    expect(starts).toHaveLength(7)
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(1000)
  })

  it("raises the pause to robots.txt's Crawl-delay", async () => {
    const site = await serve({ ...fanOut(3), "/robots.txt": robots("User-agent: *\nCrawl-delay: 3\n") })
    const starts: Array<number> = []
    await crawlOnTestClock({ seeds: [`${site.origin}/`], allowPrivate: [site.host], delayMs: 100, onRequest: (_u, at) => starts.push(at) })
    expect(starts).toHaveLength(4)
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(3000)
  })

  it("runs several hosts in parallel without exceeding the concurrency limit", async () => {
    let inFlight = 0
    let most = 0
    const counted = (handler: Handler): Handler => (q, r) => {
      inFlight++
      most = Math.max(most, inFlight)
      setTimeout(() => {
        inFlight--
        handler(q, r)
      }, 20)
    }
    const hosts = await Promise.all(
      [0, 1, 2, 3].map(() => serve({ "/": counted(sendHtml(page("Site home"))), "/robots.txt": counted(robots("")) }))
    )
    const items = await crawl({
      seeds: hosts.map((h) => `${h.origin}/`),
      allowPrivate: hosts.map((h) => h.host),
      anySite: true,
      concurrency: 2
    })
    expect(documentUrls(items)).toHaveLength(4)
    expect(most).toBeLessThanOrEqual(2)
  })

  it("stops at max depth and at max pages", async () => {
    const chain = await serve({
      "/d0": sendHtml(page("Depth zero", ["/d1"])),
      "/d1": sendHtml(page("Depth one", ["/d2"])),
      "/d2": sendHtml(page("Depth two", ["/d3"])),
      "/d3": sendHtml(page("Depth three"))
    })
    const deep = await crawl({ seeds: [`${chain.origin}/d0`], allowPrivate: [chain.host], maxDepth: 2 })
    expect(documentUrls(deep)).toEqual([`${chain.origin}/d0`, `${chain.origin}/d1`, `${chain.origin}/d2`])
    expect(chain.requested).not.toContain("/d3")

    const wide = await serve(fanOut(10))
    const few = await crawl({ seeds: [`${wide.origin}/`], allowPrivate: [wide.host], maxPages: 4 })
    expect(documentUrls(few)).toHaveLength(4)
    expect(wide.requested.filter((p) => p !== "/robots.txt")).toHaveLength(4)
  })

  it("stays on the seed's site unless told otherwise", async () => {
    const other = await serve({ "/": sendHtml(page("Elsewhere")) }, { hostname: "127.0.0.2" })
    const site = await serve({ "/": sendHtml(page("Home", [`${other.origin}/`])) })
    const scoped = await crawl({ seeds: [`${site.origin}/`], allowPrivate: [site.host, other.host] })
    expect(documentUrls(scoped)).toEqual([`${site.origin}/`])
    expect(other.requested).toEqual([])
    const wide = await crawl({ seeds: [`${site.origin}/`], allowPrivate: [site.host, other.host], anySite: true })
    expect(documentUrls(wide)).toEqual([`${site.origin}/`, `${other.origin}/`])
  })
})

describe("crawler: redirects", () => {
  const redirect = (to: string, status = 302): Handler => (_q, r) => {
    r.writeHead(status, { location: to })
    r.end()
  }

  it("follows a redirect and indexes the page under its final address", async () => {
    const site = await serve({ "/old": redirect("/new", 301), "/new": sendHtml(page("New home")) })
    const items = await crawl({ seeds: [`${site.origin}/old`], allowPrivate: [site.host] })
    expect(documentUrls(items)).toEqual([`${site.origin}/new`])
  })

  it("detects a redirect loop and gives up after the redirect limit", async () => {
    const routes: Record<string, Handler> = { "/loop-a": redirect("/loop-b"), "/loop-b": redirect("/loop-a") }
    for (let i = 0; i < 10; i++) routes[`/hop${i}`] = redirect(`/hop${i + 1}`)
    const site = await serve(routes)
    const items = await crawl({ seeds: [`${site.origin}/loop-a`, `${site.origin}/hop0`], allowPrivate: [site.host], maxRedirects: 3 })
    expect(documentUrls(items)).toEqual([])
    expect(failures(items).sort()).toEqual([
      "more than 3 redirects",
      `redirect loop: ${site.origin}/loop-a -> ${site.origin}/loop-b -> ${site.origin}/loop-a`
    ])
    expect(site.requested.filter((p) => p.startsWith("/hop"))).toEqual(["/hop0", "/hop1", "/hop2", "/hop3"])
  })
})

describe("crawler: private-address guard", () => {
  it("refuses a loopback server unless it is allowed, without sending it a single request", async () => {
    const site = await serve({ "/": sendHtml(page("Intranet")) })
    const items = await crawl({ seeds: [`${site.origin}/`] })
    expect(documentUrls(items)).toEqual([])
    expect(skips(items)).toEqual([`/: refused: loopback address 127.0.0.1 refused; allow it explicitly to crawl it`])
    expect(site.requested).toEqual([])
  })

  it("refuses a name that resolves to a private address", async () => {
    const site = await serve({ "/": sendHtml(page("Intranet")) })
    const port = new URL(site.origin).port
    // "localhost" resolves through the system resolver; "wiki.corp.test" through an injected one.
    const viaSystem = await crawl({ seeds: [`http://localhost:${port}/`], allowPrivate: [site.host] })
    expect(skips(viaSystem)[0]).toMatch(/^\/: refused: loopback address localhost \((127\.0\.0\.1|::1)\) refused/)
    const viaInjected = await crawl({
      seeds: [`http://wiki.corp.test:${port}/`],
      resolve: async () => [{ address: "127.0.0.1", family: 4 }]
    })
    expect(skips(viaInjected)).toEqual(["/: refused: loopback address wiki.corp.test (127.0.0.1) refused; allow it explicitly to crawl it"])
    expect(site.requested).toEqual([])
  })

  it("refuses a redirect from an allowed host to a private one", async () => {
    const inner = await serve({ "/secret": sendHtml(page("Secret")) })
    const innerPort = new URL(inner.origin).port
    const outer = await serve({
      "/go": (_q, r) => {
        r.writeHead(302, { location: `http://localhost:${innerPort}/secret` })
        r.end()
      }
    })
    const items = await crawl({ seeds: [`${outer.origin}/go`], allowPrivate: [outer.host], anySite: true })
    expect(documentUrls(items)).toEqual([])
    expect(skips(items)[0]).toMatch(/^\/secret: refused: loopback address localhost/)
    expect(inner.requested).toEqual([])
  })

  it("classifies the non-public ranges", () => {
    expect(nonPublicKind("10.1.2.3")).toBe("private")
    expect(nonPublicKind("172.20.0.1")).toBe("private")
    expect(nonPublicKind("192.168.1.1")).toBe("private")
    expect(nonPublicKind("127.8.9.10")).toBe("loopback")
    expect(nonPublicKind("169.254.169.254")).toBe("link-local")
    expect(nonPublicKind("100.64.0.1")).toBe("carrier-grade NAT")
    expect(nonPublicKind("0.0.0.0")).toBe("unspecified")
    expect(nonPublicKind("::1")).toBe("loopback")
    expect(nonPublicKind("fe80::1")).toBe("link-local")
    expect(nonPublicKind("fd12:3456::1")).toBe("private")
    expect(nonPublicKind("::ffff:10.0.0.1")).toBe("private")
    expect(nonPublicKind("[::ffff:127.0.0.1]")).toBe("loopback")
    // Every spelling of an address is judged as the address it is.
    expect(nonPublicKind("::ffff:7f00:1")).toBe("loopback")
    expect(nonPublicKind("0:0:0:0:0:ffff:a9fe:a9fe")).toBe("link-local")
    expect(nonPublicKind("0x7f.1")).toBe("loopback")
    expect(nonPublicKind("2130706433")).toBe("loopback")
    expect(nonPublicKind("fe80::1%eth0")).toBe("link-local")
    expect(nonPublicKind("not-an-address")).toBe("not an IP address")
    expect(nonPublicKind("93.184.215.14")).toBeUndefined()
    expect(nonPublicKind("2606:4700::6810:84e5")).toBeUndefined()
    expect(nonPublicKind("172.32.0.1")).toBeUndefined()
  })
})

describe("crawler: responses it must not index", () => {
  it("skips non-HTML answers before reading them, and error statuses", async () => {
    const site = await serve({
      "/": sendHtml(page("Home", ["/report.pdf", "/data.json", "/gone", "/untyped"])),
      "/report.pdf": (_q, r) => {
        r.writeHead(200, { "content-type": "application/pdf" })
        r.end("%PDF-1.7 not really")
      },
      "/data.json": (_q, r) => {
        r.writeHead(200, { "content-type": "application/json" })
        r.end("{}")
      },
      "/gone": sendHtml(page("Gone"), 410),
      "/untyped": (_q, r) => {
        r.writeHead(200)
        r.end("just bytes, no markup")
      }
    })
    const items = await crawl({ seeds: [`${site.origin}/`], allowPrivate: [site.host] })
    expect(documentUrls(items)).toEqual([`${site.origin}/`])
    expect(skips(items)).toEqual([
      "/data.json: not HTML (application/json)",
      "/gone: HTTP 410",
      "/report.pdf: not HTML (application/pdf)",
      "/untyped: not HTML (no Content-Type)"
    ])
  })

  it("gives up on a page that never ends and goes on with the rest", async () => {
    const site = await serve({
      "/": sendHtml(page("Home", ["/endless", "/fine"])),
      "/endless": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html" })
        r.write("<html><body><p>This page starts but never finishes")
      },
      "/fine": sendHtml(page("Fine"))
    })
    const items = await crawl({ seeds: [`${site.origin}/`], allowPrivate: [site.host], timeoutMs: 400 })
    expect(documentUrls(items)).toEqual([`${site.origin}/`, `${site.origin}/fine`])
    expect(failures(items)).toEqual(["timed out after 400 ms"])
  })

  it("refuses pages over the size limit: declared, streamed, or compressed", async () => {
    const big = "<p>" + "all work and no play ".repeat(100_000) + "</p>" // ~2 MiB
    const site = await serve({
      "/": sendHtml(page("Home", ["/declared", "/streamed", "/bomb"])),
      "/declared": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html", "content-length": String(Buffer.byteLength(big)) })
        r.end(big)
      },
      "/streamed": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html" })
        for (let i = 0; i < 8; i++) r.write(big)
        r.end()
      },
      "/bomb": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" })
        r.end(gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20)))
      }
    })
    const items = await crawl({ seeds: [`${site.origin}/`], allowPrivate: [site.host], maxBytes: 1024 * 1024 })
    expect(documentUrls(items)).toEqual([`${site.origin}/`])
    expect(skips(items)).toEqual([
      "/bomb: larger than 1.0 MiB",
      "/declared: larger than 1.0 MiB",
      "/streamed: larger than 1.0 MiB"
    ])
  })
})

describe("crawler on the fetch-based PageFetcher (what Deno runs)", () => {
  const fetchCrawl = (options: CrawlOptions & { readonly allow?: ReadonlyArray<string> }) =>
    Effect.gen(function*() {
      const fetcher = yield* PageFetcher
      return yield* Stream.runCollect(crawlSource({ delayMs: 0, ...options }, fetcher).items)
    }).pipe(Effect.provide(PageFetcher.layerFetch({ allow: options.allow ?? false })), Effect.runPromise)

  it("crawls, honours robots.txt, follows redirects and skips what it must not index", async () => {
    const site = await serve({
      "/robots.txt": robots("User-agent: *\nDisallow: /private\n"),
      "/": sendHtml(page("Home", ["/old", "/private/x", "/data.json", "/big"])),
      "/old": (_q, r) => {
        r.writeHead(301, { location: "/new" })
        r.end()
      },
      "/new": sendHtml(page("New home")),
      "/private/x": sendHtml(page("Secret")),
      "/data.json": (_q, r) => {
        r.writeHead(200, { "content-type": "application/json" })
        r.end("{}")
      },
      "/big": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" })
        r.end(gzipSync(Buffer.alloc(5 * 1024 * 1024, 0x20)))
      }
    })
    const items = await fetchCrawl({ seeds: [`${site.origin}/`], allow: [site.host], maxBytes: 1024 * 1024 })
    expect(documentUrls(items)).toEqual([`${site.origin}/`, `${site.origin}/new`])
    expect(skips(items)).toEqual([
      "/big: larger than 1.0 MiB",
      "/data.json: not HTML (application/json)",
      "/private/x: disallowed by robots.txt"
    ])
    expect(site.requested).not.toContain("/private/x")
  })

  it("refuses private addresses by literal and by name, without a request, unless allowed", async () => {
    const site = await serve({ "/": sendHtml(page("Intranet")) })
    const port = new URL(site.origin).port
    const items = await fetchCrawl({ seeds: [`${site.origin}/`, `http://localhost:${port}/`], anySite: true })
    expect(skips(items)).toEqual([
      "/: refused: loopback address 127.0.0.1 refused; allow it explicitly to crawl it",
      "/: refused: private name localhost refused; allow it explicitly to crawl it"
    ])
    expect(site.requested).toEqual([])
  })

  it("gives up on a page that never ends", async () => {
    const site = await serve({
      "/": sendHtml(page("Home", ["/endless"])),
      "/endless": (_q, r) => {
        r.writeHead(200, { "content-type": "text/html" })
        r.write("<html><body><p>This page starts but never finishes")
      }
    })
    const items = await fetchCrawl({ seeds: [`${site.origin}/`], allow: [site.host], timeoutMs: 400 })
    expect(documentUrls(items)).toEqual([`${site.origin}/`])
    expect(failures(items)).toEqual(["timed out after 400 ms"])
  })
})
