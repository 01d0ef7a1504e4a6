/**
 * One HTTP GET under the crawler's rules: the address guard on the pinned
 * address, a deadline for the whole exchange, a byte limit on the decoded body
 * (so a compressed bomb is caught too), a content-type gate checked before the
 * body is read, and no automatic redirects (the caller follows them and checks
 * each hop). Every outcome is a value; nothing here throws.
 */
import { request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib"
import type { Readable } from "node:stream"
import { formatBytes } from "../SourceItem.ts"
import { type AddressPolicy, admit } from "./AddressGuard.ts"

export interface FetchLimits {
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly userAgent: string
}

export type FetchOutcome =
  | {
    readonly _tag: "Body"
    readonly url: string
    readonly status: number
    readonly contentType: string
    readonly body: Uint8Array
  }
  | { readonly _tag: "Redirect"; readonly url: string; readonly status: number; readonly location: string }
  | { readonly _tag: "Refused"; readonly url: string; readonly reason: string }
  | { readonly _tag: "Rejected"; readonly url: string; readonly status: number; readonly reason: string }
  | { readonly _tag: "Failed"; readonly url: string; readonly message: string }

/** Decides from status and Content-Type whether the body is wanted; a string says why not. */
export type BodyGate = (status: number, contentType: string) => true | string

const REDIRECT = new Set([301, 302, 303, 307, 308])

const decoded = (response: IncomingMessage): Readable => {
  const encoding = String(response.headers["content-encoding"] ?? "").trim().toLowerCase()
  if (encoding === "gzip" || encoding === "x-gzip") return response.pipe(createGunzip())
  if (encoding === "deflate") return response.pipe(createInflate())
  if (encoding === "br") return response.pipe(createBrotliDecompress())
  return response
}

export const guardedFetch = async (
  target: string,
  limits: FetchLimits,
  policy: AddressPolicy,
  gate: BodyGate,
  accept = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
): Promise<FetchOutcome> => {
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return { _tag: "Failed", url: target, message: "not a valid URL" }
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { _tag: "Refused", url: target, reason: `${url.protocol} URLs are not crawled` }
  }
  const admission = await admit(policy, url)
  if (admission._tag === "Refused") return { _tag: "Refused", url: target, reason: admission.reason }
  const { address, family } = admission.address
  // Connect to the address that was checked, never to a fresh resolution of the name.
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }])
    else callback(null, address, family)
  }

  return new Promise<FetchOutcome>((resolve) => {
    let settled = false
    let deadline: ReturnType<typeof setTimeout> | undefined
    const finish = (outcome: FetchOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      request.destroy()
      resolve(outcome)
    }
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
      method: "GET",
      lookup: pinned,
      headers: {
        "user-agent": limits.userAgent,
        accept,
        "accept-encoding": "gzip, deflate, br"
      }
    })
    deadline = setTimeout(
      () => finish({ _tag: "Failed", url: target, message: `timed out after ${limits.timeoutMs} ms` }),
      limits.timeoutMs
    )
    request.on("error", (error) => {
      const code = (error as { code?: string }).code
      finish({ _tag: "Failed", url: target, message: code ? `${code}: ${error.message}` : error.message })
    })
    request.on("response", (response) => {
      const status = response.statusCode ?? 0
      if (REDIRECT.has(status) && response.headers.location !== undefined) {
        finish({ _tag: "Redirect", url: target, status, location: response.headers.location })
        return
      }
      const contentType = String(response.headers["content-type"] ?? "")
      const verdict = gate(status, contentType)
      if (verdict !== true) {
        finish({ _tag: "Rejected", url: target, status, reason: verdict })
        return
      }
      const declared = Number(response.headers["content-length"])
      if (Number.isFinite(declared) && declared > limits.maxBytes && response.headers["content-encoding"] === undefined) {
        finish({ _tag: "Rejected", url: target, status, reason: `larger than ${formatBytes(limits.maxBytes)}` })
        return
      }
      const chunks: Array<Buffer> = []
      let size = 0
      const body = decoded(response)
      body.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > limits.maxBytes) {
          // Settle first: tearing the stream down emits "aborted", which must not win.
          finish({ _tag: "Rejected", url: target, status, reason: `larger than ${formatBytes(limits.maxBytes)}` })
          body.destroy()
          return
        }
        chunks.push(chunk)
      })
      body.on("error", (error) => finish({ _tag: "Failed", url: target, message: `body: ${error.message}` }))
      response.on("aborted", () => finish({ _tag: "Failed", url: target, message: "connection closed mid-body" }))
      body.on("end", () =>
        finish({ _tag: "Body", url: target, status, contentType, body: new Uint8Array(Buffer.concat(chunks)) })
      )
    })
    request.end()
  })
}
