/**
 * Loopback stand-ins for the upstream search providers, answering in each one's documented
 * shapes (research/live-web.md): SearXNG's JSON API, Brave, Serper, Tavily, Exa and our own
 * wire API (iflow), error bodies and headers included. A test sets what the next requests
 * get (answers, 429 with Retry-After, 403, a CAPTCHA page, slowness, a hang) and reads what
 * arrived: request count, aborted requests (the client closed before the answer) and the
 * last request's query, headers and body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export type StandInKind = "searxng" | "brave" | "serper" | "tavily" | "exa" | "iflow"

/** A page the stand-in "found"; `date` goes verbatim into the provider's date field. */
export interface StandInPage {
  readonly title: string
  readonly url: string
  readonly snippet: string
  readonly date?: string
  /** Brave's `age` beside `page_age` (e.g. "3 days ago"). */
  readonly age?: string
}

export interface StandInImage {
  readonly url: string
  readonly refUrl: string
  readonly title: string
}

export type Behaviour =
  | { readonly kind: "ok" }
  | { readonly kind: "slow"; readonly ms: number }
  | { readonly kind: "hang" }
  | { readonly kind: "rateLimited"; readonly retryAfter?: string }
  | { readonly kind: "forbidden" }
  | { readonly kind: "captcha" }
  | { readonly kind: "unauthorized" }
  | { readonly kind: "serverError" }
  | { readonly kind: "notJson" }

export interface SeenRequest {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: unknown
}

export interface StandIn {
  readonly kind: StandInKind
  readonly url: string
  /** Requests received (any path). */
  readonly requests: number
  /** Requests whose client went away before the answer was sent. */
  readonly aborted: number
  readonly last: SeenRequest | undefined
  pages: ReadonlyArray<StandInPage>
  images: ReadonlyArray<StandInImage>
  /** What every following request gets, until changed. */
  behave(behaviour: Behaviour): void
  /** Resolves once `n` requests have been aborted (or rejects after `ms`). */
  waitAborted(n: number, ms?: number): Promise<void>
  close(): Promise<void>
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

const CAPTCHA_PAGE = `<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>
<form id="captcha-form" action="/sorry/index" method="post"><p>Our systems have detected unusual traffic from your computer network.
Please solve the CAPTCHA below to continue.</p><div class="g-recaptcha" data-sitekey="x"></div></form></body></html>`

/** The body of a successful answer in the provider's shape. */
const answer = (kind: StandInKind, path: string, q: string, pages: ReadonlyArray<StandInPage>, images: ReadonlyArray<StandInImage>, num: number) => {
  const webPages = pages.slice(0, num)
  const imgs = images.slice(0, num)
  switch (kind) {
    case "searxng":
      if (path === "images") {
        return {
          query: q,
          results: imgs.map((im, i) => ({
            url: im.refUrl, title: im.title, content: "", img_src: im.url.replace(/^https:/, ""), thumbnail_src: `${im.url}?thumb`,
            resolution: "800 x 600", img_format: "jpeg", source: "example", engine: "bing images", engines: ["bing images"],
            positions: [i + 1], score: 1 / (i + 1), category: "images"
          })),
          answers: [], corrections: [], infoboxes: [], suggestions: [], unresponsive_engines: []
        }
      }
      return {
        query: q,
        results: webPages.map((p, i) => ({
          url: p.url, title: p.title, content: p.snippet, publishedDate: p.date ?? null, engine: "duckduckgo",
          engines: ["duckduckgo", "brave"], positions: [i + 1], score: 2 / (i + 1), category: "general", parsed_url: []
        })),
        answers: [], corrections: [], infoboxes: [], suggestions: ["related"], unresponsive_engines: [["wikidata", "timeout"]]
      }
    case "brave":
      if (path === "images") {
        return {
          type: "images", query: { original: q, spellcheck_off: true },
          results: imgs.map((im) => ({
            type: "image_result", title: im.title, url: im.refUrl, source: new URL(im.refUrl).hostname, page_fetched: "2024-01-01T00:00:00Z",
            thumbnail: { src: `https://imgs.search.brave.com/${encodeURIComponent(im.url)}` }, properties: { url: im.url, placeholder: "" },
            meta_url: { scheme: "https", netloc: new URL(im.refUrl).hostname }
          }))
        }
      }
      return {
        type: "search",
        query: { original: q, show_strict_warning: false, is_navigational: false, country: "us", more_results_available: true },
        mixed: { type: "mixed", main: webPages.map((_, i) => ({ type: "web", index: i, all: false })), top: [], side: [] },
        web: {
          type: "search",
          results: webPages.map((p) => ({
            type: "search_result", title: p.title, url: p.url, is_source_local: false, is_source_both: false,
            description: p.snippet.replace(/(\w+)/, "<strong>$1</strong>"), ...(p.date === undefined ? {} : { page_age: p.date }),
            ...(p.age === undefined ? {} : { age: p.age }), language: "en", family_friendly: true,
            profile: { name: new URL(p.url).hostname, url: p.url }, meta_url: { scheme: "https", netloc: new URL(p.url).hostname }
          })),
          family_friendly: true
        }
      }
    case "serper":
      if (path === "images") {
        return {
          searchParameters: { q, type: "images", engine: "google", num },
          images: imgs.map((im, i) => ({
            title: im.title, imageUrl: im.url, imageWidth: 800, imageHeight: 600, thumbnailUrl: `${im.url}?tbn`,
            thumbnailWidth: 200, thumbnailHeight: 150, source: "Example", domain: new URL(im.refUrl).hostname, link: im.refUrl, position: i + 1
          })),
          credits: 1
        }
      }
      return {
        searchParameters: { q, type: "search", engine: "google", num },
        organic: webPages.map((p, i) => ({ title: p.title, link: p.url, snippet: p.snippet, ...(p.date === undefined ? {} : { date: p.date }), position: i + 1 })),
        peopleAlsoAsk: [], relatedSearches: [{ query: `${q} more` }], credits: 1
      }
    case "tavily":
      return {
        query: q, follow_up_questions: null, answer: null, images: [],
        results: webPages.map((p, i) => ({
          title: p.title, url: p.url, content: p.snippet, score: 0.9 - i * 0.05, raw_content: null,
          ...(p.date === undefined ? {} : { published_date: p.date })
        })),
        response_time: 0.42, request_id: "123e4567-e89b-12d3-a456-426614174111"
      }
    case "exa":
      return {
        requestId: "b5947044c4b78efa9552a7c89b306d95", resolvedSearchType: "neural",
        results: webPages.map((p, i) => ({
          id: p.url, title: p.title, url: p.url, ...(p.date === undefined ? {} : { publishedDate: p.date }), author: "Someone",
          score: 0.5 - i * 0.01, text: `${p.snippet} And more text of the page follows here.`, highlights: [p.snippet], highlightScores: [0.4]
        })),
        costDollars: { total: 0.005 }
      }
    case "iflow":
      return {
        success: true, code: "200", message: "success", exception: null, extra: null,
        data: path === "images"
          ? imgs
          : { organic: webPages.map((p, i) => ({ title: p.title, link: p.url, snippet: p.snippet, position: i + 1, date: p.date ?? null })), query: q }
      }
  }
}

/** The provider's own error answer for a behaviour. */
const failure = (kind: StandInKind, res: ServerResponse, behaviour: Behaviour) => {
  switch (behaviour.kind) {
    case "rateLimited": {
      const retry: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter }
      if (kind === "brave") {
        return json(res, 429, {
          type: "ErrorResponse",
          error: { id: "8fe4a2a4", status: 429, code: "RATE_LIMITED", detail: "Request rate limit exceeded for plan.", meta: { plan: "Free", rate_limit: 1, rate_current: 1, quota_limit: 2000, quota_current: 12, component: "rate_limiter" } },
          time: 1700000000
        }, { "x-ratelimit-limit": "1, 2000", "x-ratelimit-remaining": "0, 1988", "x-ratelimit-reset": "1, 1419704", ...retry })
      }
      if (kind === "tavily") return json(res, 429, { detail: { error: "Your request has been blocked due to excessive requests. Please reduce rate of requests." } }, retry)
      if (kind === "serper") return json(res, 429, { message: "Too many requests", statusCode: 429 }, retry)
      if (kind === "iflow") return json(res, 429, { success: false, code: "40303", message: "rate limited", exception: { type: "RateLimited", detail: "too many requests" }, data: null, extra: null }, retry)
      if (kind === "exa") return json(res, 429, { requestId: "x", error: "You've exceeded your rate limit", tag: "RATE_LIMIT_EXCEEDED" }, retry)
      res.writeHead(429, { "content-type": "text/html", ...retry })
      return res.end("<html><body>Too Many Requests</body></html>")
    }
    case "forbidden":
      if (kind === "searxng") {
        // What SearXNG answers when json is not in search.formats.
        res.writeHead(403, { "content-type": "text/html; charset=utf-8" })
        return res.end("<!doctype html><title>403 Forbidden</title><h1>Forbidden</h1>")
      }
      return json(res, 403, { message: "Forbidden: your IP is blocked", statusCode: 403 })
    case "captcha":
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      return res.end(CAPTCHA_PAGE)
    case "unauthorized":
      if (kind === "brave") {
        return json(res, 422, { type: "ErrorResponse", error: { id: "1", status: 422, code: "SUBSCRIPTION_TOKEN_INVALID", detail: "The provided subscription token is invalid.", meta: {} }, time: 1 })
      }
      if (kind === "tavily") return json(res, 401, { detail: { error: "Unauthorized: missing or invalid API key." } })
      if (kind === "serper") return json(res, 403, { message: "Unauthorized.", statusCode: 403 })
      if (kind === "iflow") return json(res, 401, { success: false, code: "90402", message: "Authorization: invalid API key", exception: { type: "Unauthorized", detail: "invalid API key" }, data: null, extra: null })
      return json(res, 401, { requestId: "x", error: "Invalid API key", tag: "INVALID_API_KEY" })
    case "serverError":
      return json(res, 500, { error: "internal error" })
    case "notJson":
      res.writeHead(200, { "content-type": "text/plain" })
      return res.end("upstream says hello")
  }
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", () => resolve(""))
  })

/** Starts a stand-in on 127.0.0.1 (ephemeral port) answering like `kind`. */
export const startStandIn = async (
  kind: StandInKind,
  pages: ReadonlyArray<StandInPage> = [],
  images: ReadonlyArray<StandInImage> = []
): Promise<StandIn> => {
  let behaviour: Behaviour = { kind: "ok" }
  let requests = 0
  let aborted = 0
  let last: SeenRequest | undefined
  const abortWaiters: Array<() => void> = []
  const sockets = new Set<import("node:net").Socket>()

  const server = createServer(async (req, res) => {
    requests++
    res.on("close", () => {
      if (!res.writableFinished) {
        aborted++
        for (const w of abortWaiters.splice(0)) w()
      }
    })
    const url = new URL(req.url ?? "/", "http://stand-in")
    const raw = await readBody(req)
    let body: unknown = undefined
    try {
      body = raw === "" ? undefined : JSON.parse(raw)
    } catch {
      body = raw
    }
    last = { method: req.method ?? "", path: url.pathname, query: url.searchParams, headers: req.headers, body }
    const b = body as Record<string, unknown> | undefined
    const images_ = url.pathname.includes("image") || url.searchParams.get("categories") === "images"
    const q = url.searchParams.get("q") ?? String(b?.q ?? b?.query ?? b?.keywords ?? "")
    const num = Number(url.searchParams.get("count") ?? b?.num ?? b?.max_results ?? b?.numResults ?? 10)
    const current = behaviour
    if (current.kind === "hang") return
    if (current.kind === "slow") await new Promise((r) => setTimeout(r, current.ms))
    if (res.destroyed) return
    if (current.kind !== "ok" && current.kind !== "slow") return failure(kind, res, current)
    if (kind === "searxng" && url.searchParams.get("format") !== "json") return failure(kind, res, { kind: "forbidden" })
    json(res, 200, answer(kind, images_ ? "images" : "web", q, standIn.pages, standIn.images, num))
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port

  const standIn: StandIn = {
    kind,
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests
    },
    get aborted() {
      return aborted
    },
    get last() {
      return last
    },
    pages,
    images,
    behave: (b) => {
      behaviour = b
    },
    waitAborted: (n, ms = 3000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${kind}: ${aborted} of ${n} requests aborted after ${ms} ms`)), ms)
        const check = () => {
          if (aborted >= n) {
            clearTimeout(timer)
            resolve()
          } else abortWaiters.push(check)
        }
        check()
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
  return standIn
}
