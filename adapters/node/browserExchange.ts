/**
 * One request of the headless browser, made by Node instead of the browser: the address guard
 * (AddressGuard.ts, the static fetcher's policy) judges the resolved address and the connection
 * goes to that very address, so a name that resolves differently the second time cannot reach a
 * private host. The browser would resolve names itself and follow redirects unseen, which is why
 * it is answered from here (browserRenderer.ts fulfills its requests with the outcome).
 * Bodies are decoded here and bounded in size; redirects are followed here, each hop judged again.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import type { Readable, Transform } from "node:stream"
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib"
import { credentialsRefusal } from "../../core/ingest/crawl/AddressPolicy.ts"
import { codingsToDecode, HTTP_REDIRECTS } from "../../core/ingest/crawl/PageFetcher.ts"
import { type AddressPolicy, admit } from "./sources/crawl/AddressGuard.ts"

export const MAX_BROWSER_REDIRECTS = 5

export interface BrowserRequest {
  readonly url: string
  readonly method: string
  /** As the browser would send them; hop-by-hop headers and accept-encoding are replaced. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer | null
}

export type BrowserExchange =
  | {
    readonly _tag: "Response"
    /** After the redirects followed here. */
    readonly url: string
    readonly status: number
    /** Lower-case names; set-cookie lines joined by newlines; the encoding and length of the decoded body dropped. */
    readonly headers: Record<string, string>
    readonly body: Buffer
  }
  /** Only when the caller follows redirects itself. */
  | { readonly _tag: "Redirect"; readonly url: string; readonly location: string }
  | { readonly _tag: "Refused"; readonly url: string; readonly reason: string }
  | { readonly _tag: "Failed"; readonly url: string; readonly reason: string; readonly limit?: "size" | "time" }

export interface ExchangeOptions {
  readonly policy: AddressPolicy
  /** Of each decoded body. */
  readonly maxBytes: number
  /** Follow redirects here (subresources), or hand them back (the page's own navigation). */
  readonly follow: boolean
  /** Ends the exchange at once (the page closed, the deadline passed). */
  readonly signal: AbortSignal
}

const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress
}

/** Headers the browser sends that describe its own connection, not the request. */
const NOT_FORWARDED = new Set(["host", "connection", "keep-alive", "proxy-connection", "proxy-authorization", "transfer-encoding", "te", "upgrade", "content-length", "accept-encoding"])
/** Headers of the answer that no longer hold once the body is decoded and handed over whole. */
const NOT_RETURNED = new Set(["content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"])

const forwardedHeaders = (headers: Readonly<Record<string, string>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (!lower.startsWith(":") && !NOT_FORWARDED.has(lower)) out[lower] = value
  }
  out["accept-encoding"] = "gzip, deflate, br"
  return out
}

const returnedHeaders = (headers: IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NOT_RETURNED.has(name)) continue
    out[name] = Array.isArray(value) ? value.join("\n") : value
  }
  return out
}

type Hop =
  | { readonly _tag: "Response"; readonly status: number; readonly headers: IncomingHttpHeaders; readonly body: Buffer }
  | { readonly _tag: "Redirect"; readonly status: number; readonly location: string }
  | { readonly _tag: "Refused"; readonly reason: string }
  | { readonly _tag: "Failed"; readonly reason: string; readonly limit?: "size" | "time" }

/** One hop: judged, connected to the judged address, the body decoded under the limit. */
const hop = async (url: URL, method: string, headers: Record<string, string>, body: Buffer | null, options: ExchangeOptions): Promise<Hop> => {
  if (url.protocol !== "http:" && url.protocol !== "https:") return { _tag: "Refused", reason: `${url.protocol} URLs are not fetched` }
  const withCredentials = credentialsRefusal(url)
  if (withCredentials !== undefined) return { _tag: "Refused", reason: withCredentials }
  const admission = await admit(options.policy, url)
  if (admission._tag === "Refused") return { _tag: "Refused", reason: admission.reason }
  if (admission._tag === "Unresolved") return { _tag: "Failed", reason: admission.reason }
  if (options.signal.aborted) return { _tag: "Failed", reason: "interrupted", limit: "time" }
  const { address, family } = admission.address
  // Connect to the address that was checked, never to a fresh resolution of the name.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }])
    else callback(null, address, family)
  }
  return new Promise<Hop>((resolve) => {
    let settled = false
    const finish = (outcome: Hop) => {
      if (settled) return
      settled = true
      options.signal.removeEventListener("abort", onAbort)
      client.destroy()
      resolve(outcome)
    }
    const onAbort = () => finish({ _tag: "Failed", reason: "interrupted", limit: "time" })
    const client = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, { method, lookup: pinned, headers })
    client.on("error", (error) => {
      const code = (error as { code?: string }).code
      finish({ _tag: "Failed", reason: code ? `${code}: ${error.message}` : error.message })
    })
    if (options.signal.aborted) return onAbort()
    options.signal.addEventListener("abort", onAbort)
    client.on("response", (response) => {
      const status = response.statusCode ?? 0
      const location = response.headers.location
      if (HTTP_REDIRECTS.has(status) && location !== undefined) {
        finish({ _tag: "Redirect", status, location })
        return
      }
      const codings = codingsToDecode(response.headers["content-encoding"])
      if (typeof codings === "string") {
        finish({ _tag: "Failed", reason: codings })
        return
      }
      const tooLarge = { _tag: "Failed", reason: `the response is larger than ${options.maxBytes} bytes`, limit: "size" } as const
      const stages: Array<Readable> = [response]
      for (const coding of codings) stages.push(stages.at(-1)!.pipe(DECODERS[coding]!()))
      const last = stages.at(-1)!
      const chunks: Array<Buffer> = []
      for (const stage of stages.length === 1 ? stages : stages.slice(1)) {
        let size = 0
        stage.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > options.maxBytes) {
            finish(tooLarge)
            for (const each of stages) each.destroy()
            return
          }
          if (stage === last) chunks.push(chunk)
        })
        stage.on("error", (error) => finish({ _tag: "Failed", reason: `body: ${error.message}` }))
      }
      response.on("aborted", () => finish({ _tag: "Failed", reason: "connection closed mid-body" }))
      last.on("end", () => finish({ _tag: "Response", status, headers: response.headers, body: Buffer.concat(chunks) }))
    })
    client.end(body ?? undefined)
  })
}

/** The browser's request made from Node under the address policy; never throws. */
export const browserExchange = async (request: BrowserRequest, options: ExchangeOptions): Promise<BrowserExchange> => {
  let url: URL
  try {
    url = new URL(request.url)
  } catch {
    return { _tag: "Failed", url: request.url, reason: "not a valid URL" }
  }
  url.hash = ""
  let method = request.method.toUpperCase()
  let headers = forwardedHeaders(request.headers)
  let body = request.body
  for (let hops = 0; ; hops++) {
    const outcome = await hop(url, method, headers, body, options)
    switch (outcome._tag) {
      case "Refused":
        return { _tag: "Refused", url: url.href, reason: outcome.reason }
      case "Failed":
        return { _tag: "Failed", url: url.href, reason: outcome.reason, ...(outcome.limit === undefined ? {} : { limit: outcome.limit }) }
      case "Response":
        return { _tag: "Response", url: url.href, status: outcome.status, headers: returnedHeaders(outcome.headers), body: outcome.body }
      case "Redirect": {
        let next: URL
        try {
          next = new URL(outcome.location, url)
        } catch {
          return { _tag: "Failed", url: url.href, reason: "redirected to an invalid URL" }
        }
        next.hash = ""
        if (!options.follow) return { _tag: "Redirect", url: url.href, location: next.href }
        if (hops === MAX_BROWSER_REDIRECTS) return { _tag: "Failed", url: url.href, reason: `more than ${MAX_BROWSER_REDIRECTS} redirects` }
        // As browsers do: 303, and 301/302 after a POST, become a GET without a body.
        if (outcome.status === 303 || ((outcome.status === 301 || outcome.status === 302) && method === "POST")) {
          method = "GET"
          body = null
          const { "content-type": _type, ...rest } = headers
          headers = rest
        }
        // Credentials never follow a redirect to another origin.
        if (next.origin !== url.origin) {
          const { cookie: _cookie, authorization: _authorization, ...rest } = headers
          headers = rest
        }
        url = next
      }
    }
  }
}
