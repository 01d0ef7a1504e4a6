/**
 * The crawler's PageFetcher on Node: one HTTP GET under the crawler's rules,
 * with the address guard on the pinned address, a deadline for the whole
 * exchange, a byte limit on the decoded body and on each layer of its content
 * encoding (so a compressed bomb is caught too; stacked encodings are decoded
 * layer by layer, an unknown one refused), a content-type gate checked before the body is read, and no automatic
 * redirects (the crawler follows them and checks each hop). Interrupting the
 * effect aborts the request and destroys its socket.
 */
import { request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import type { Readable, Transform } from "node:stream"
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib"
import { Effect, Layer } from "effect"
import { formatBytes } from "../../../../core/ingest/DocumentSource.ts"
import { credentialsRefusal } from "../../../../core/ingest/crawl/AddressPolicy.ts"
import { codingsToDecode, FetchFailure, HTTP_REDIRECTS, PageFetcher, type PageRequest, type PageResponse } from "../../../../core/ingest/crawl/PageFetcher.ts"
import { type AddressPolicy, admit, defaultAddressPolicy } from "./AddressGuard.ts"

const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress
}

const refused = (url: string, message: string) => new FetchFailure({ reason: "refused", url, message })
const unsupported = (url: string, message: string) => new FetchFailure({ reason: "unsupported", url, message })
const rejected = (url: string, message: string, limit?: "size") =>
  new FetchFailure({ reason: "rejected", url, message, ...(limit === undefined ? {} : { limit }) })
const failed = (url: string, message: string, limit?: "time") =>
  new FetchFailure({ reason: "failed", url, message, ...(limit === undefined ? {} : { limit }) })

type Outcome = PageResponse | FetchFailure

/** The GET as a promise that always resolves, to an outcome; `signal` aborts it. */
const guardedFetch = async (request: PageRequest, policy: AddressPolicy, signal: AbortSignal): Promise<Outcome> => {
  const target = request.url
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return failed(target, "not a valid URL")
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return refused(target, `${url.protocol} URLs are not crawled`)
  const withCredentials = credentialsRefusal(url)
  if (withCredentials !== undefined) return refused(target, withCredentials)
  const admission = await admit(request.allow === undefined ? policy : { ...policy, allow: request.allow }, url)
  if (admission._tag === "Refused") return refused(target, admission.reason)
  if (admission._tag === "Unresolved") return failed(target, admission.reason)
  if (signal.aborted) return failed(target, "interrupted")
  const { address, family } = admission.address
  // Connect to the address that was checked, never to a fresh resolution of the name.
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }])
    else callback(null, address, family)
  }

  return new Promise<Outcome>((resolve) => {
    let settled = false
    let deadline: ReturnType<typeof setTimeout> | undefined
    const finish = (outcome: Outcome) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      signal.removeEventListener("abort", onAbort)
      client.destroy()
      resolve(outcome)
    }
    const onAbort = () => finish(failed(target, "interrupted"))
    const client = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
      method: "GET",
      lookup: pinned,
      headers: { "user-agent": request.userAgent, accept: request.accept, "accept-encoding": "gzip, deflate, br" }
    })
    // Listened to before anything can destroy the request, so no error goes uncaught.
    client.on("error", (error) => {
      const code = (error as { code?: string }).code
      finish(failed(target, code ? `${code}: ${error.message}` : error.message))
    })
    if (signal.aborted) return onAbort()
    signal.addEventListener("abort", onAbort)
    deadline = setTimeout(() => finish(failed(target, `timed out after ${request.timeoutMs} ms`, "time")), request.timeoutMs)
    client.on("response", (response) => {
      const status = response.statusCode ?? 0
      if (HTTP_REDIRECTS.has(status) && response.headers.location !== undefined) {
        finish({ _tag: "Redirect", url: target, status, location: response.headers.location })
        return
      }
      const contentType = String(response.headers["content-type"] ?? "")
      const verdict = request.wanted(status, contentType)
      if (verdict !== true) {
        finish(rejected(target, verdict))
        return
      }
      const tooLarge = `larger than ${formatBytes(request.maxBytes)}`
      const declared = Number(response.headers["content-length"])
      if (Number.isFinite(declared) && declared > request.maxBytes && response.headers["content-encoding"] === undefined) {
        finish(rejected(target, tooLarge, "size"))
        return
      }
      const codings = codingsToDecode(response.headers["content-encoding"])
      if (typeof codings === "string") {
        finish(unsupported(target, codings))
        return
      }
      // Each layer's output is bounded as the body is: a bomb inside a bomb is stopped at the first layer that grows too large.
      const stages: Array<Readable> = [response]
      for (const coding of codings) stages.push(stages.at(-1)!.pipe(DECODERS[coding]!()))
      const body = stages.at(-1)!
      const chunks: Array<Buffer> = []
      for (const stage of stages.length === 1 ? stages : stages.slice(1)) {
        let size = 0
        stage.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > request.maxBytes) {
            // Settle first: tearing the stream down emits "aborted", which must not win.
            finish(rejected(target, tooLarge, "size"))
            for (const each of stages) each.destroy()
            return
          }
          if (stage === body) chunks.push(chunk)
        })
        stage.on("error", (error) => finish(failed(target, `body: ${error.message}`)))
      }
      response.on("error", (error) => finish(failed(target, `body: ${error.message}`)))
      response.on("aborted", () => finish(failed(target, "connection closed mid-body")))
      const lastModified = response.headers["last-modified"]
      body.on("end", () =>
        finish({
          _tag: "Body",
          url: target,
          status,
          contentType,
          body: new Uint8Array(Buffer.concat(chunks)),
          ...(lastModified === undefined ? {} : { lastModified })
        }))
    })
    client.end()
  })
}

/** The PageFetcher for Node with an address policy (which private hosts may be crawled, and name resolution). */
export const nodePageFetcher = (policy: AddressPolicy = defaultAddressPolicy): PageFetcher["Service"] =>
  PageFetcher.of({
    fetch: (request) =>
      Effect.flatMap(
        Effect.promise((signal) => guardedFetch(request, policy, signal)),
        (outcome) => (outcome._tag === "FetchFailure" ? Effect.fail(outcome) : Effect.succeed(outcome))
      )
  })

export const NodePageFetcher = {
  layer: (policy: AddressPolicy = defaultAddressPolicy) => Layer.succeed(PageFetcher, nodePageFetcher(policy))
}
