/**
 * The crawl's network I/O: one GET of one URL under limits, with no automatic
 * redirects (the crawler follows them and checks each hop). A URL that carries
 * credentials is refused before any request, whoever chose it. The Node adapter
 * provides it with a guarded fetch pinned to the checked address; interrupting
 * the effect must abort the request, so an interrupted crawl stops at once.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { formatBytes } from "../DocumentSource.ts"
import { allowedByList, canonicalAddress, credentialsRefusal, isPrivateName, nonPublicKind } from "./AddressPolicy.ts"
import { joinChunks } from "./ByteChunks.ts"

/** Decides from status and Content-Type whether the body is wanted; a string says why not. */
export type BodyGate = (status: number, contentType: string) => true | string

export interface PageRequest {
  readonly url: string
  readonly accept: string
  readonly userAgent: string
  /** For the whole exchange, headers and body. */
  readonly timeoutMs: number
  /** Of the decoded body, so a compressed bomb is caught too. */
  readonly maxBytes: number
  /** Checked before the body is read. */
  readonly wanted: BodyGate
  /**
   * Hosts exempt from the address check for this request, or true for all; replaces the
   * fetcher's own setting. Set from operator configuration only (webFetch's `fetch.allow*`),
   * never from a caller's input.
   */
  readonly allow?: boolean | ReadonlyArray<string>
}

export type PageResponse =
  | {
    readonly _tag: "Body"
    readonly url: string
    readonly status: number
    readonly contentType: string
    readonly body: Uint8Array
    /** The Last-Modified header, as sent, when there is one. */
    readonly lastModified?: string
  }
  | { readonly _tag: "Redirect"; readonly url: string; readonly status: number; readonly location: string }

/**
 * Why a fetch gave no page: `refused` before any request (the address or scheme
 * may not be crawled), `rejected` by the body gate or a size limit, `unsupported`
 * when the body's content encoding cannot be decoded, `failed` on the way (network
 * error, a name that does not resolve, timeout, broken body). `limit` names the
 * limit that ended it, when one did: the size limit (rejected) or the deadline (failed).
 */
export class FetchFailure extends Schema.TaggedError<FetchFailure>()("FetchFailure", {
  reason: Schema.Literals(["refused", "rejected", "unsupported", "failed"]),
  url: Schema.String,
  message: Schema.String,
  limit: Schema.optional(Schema.Literals(["size", "time"]))
}) {}

export const HTTP_REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

/** The content encodings a fetcher decodes; another one refuses the body. */
export const DECODED_ENCODINGS: ReadonlyArray<string> = ["gzip", "x-gzip", "deflate", "br"]
/** Layers of encoding decoded at most; more is no honest server's answer. */
export const MAX_CONTENT_ENCODINGS = 3

/**
 * A Content-Encoding header's codings in the order they are to be decoded (the header lists them
 * in the order they were applied), or why the body cannot be read: an encoding that is not
 * decoded, or too many layers.
 */
export const codingsToDecode = (header: string | null | undefined): Array<string> | string => {
  const codings = String(header ?? "").split(",").map((c) => c.trim().toLowerCase()).filter((c) => c !== "" && c !== "identity")
  const unknown = codings.find((c) => !DECODED_ENCODINGS.includes(c))
  if (unknown !== undefined) return `content encoding ${JSON.stringify(unknown.slice(0, 40))} cannot be decoded; gzip, deflate and br can`
  if (codings.length > MAX_CONTENT_ENCODINGS) {
    return `${codings.length} layers of content encoding (${codings.slice(0, 8).join(", ")}${codings.length > 8 ? ", ..." : ""}); at most ${MAX_CONTENT_ENCODINGS} are decoded`
  }
  return codings.reverse()
}

export class PageFetcher extends Context.Service<PageFetcher, {
  readonly fetch: (request: PageRequest) => Effect.Effect<PageResponse, FetchFailure>
}>()("periscope/ingest/PageFetcher") {
  /**
   * The PageFetcher on the runtime's `fetch` (Deno, or anywhere without Node's sockets).
   * `fetch` cannot pin the connection to a checked address, so private addresses are
   * refused by name and literal only (localhost, *.local, 10.0.0.1, [::1], ...): a public
   * name that resolves to a private address is NOT caught here. Where that matters, use
   * the Node adapter's fetcher, which checks the resolved address and connects to it.
   */
  static readonly layerFetch = (options: { readonly allow?: boolean | ReadonlyArray<string> } = {}) =>
    Layer.succeed(PageFetcher, PageFetcher.of({ fetch: (request) => fetchPage(request, request.allow ?? options.allow ?? false) }))
}

const refusal = (url: URL): string | undefined => {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${url.protocol} URLs are not crawled`
  const literal = canonicalAddress(url.hostname)
  if (literal !== undefined) {
    const kind = nonPublicKind(url.hostname)
    return kind === undefined ? undefined : `${kind} address ${url.hostname} refused; allow it explicitly to crawl it`
  }
  return isPrivateName(url.hostname) ? `private name ${url.hostname} refused; allow it explicitly to crawl it` : undefined
}

const fetchPage = (request: PageRequest, allow: boolean | ReadonlyArray<string>): Effect.Effect<PageResponse, FetchFailure> =>
  Effect.tryPromise({
    try: async (signal): Promise<PageResponse | FetchFailure> => {
      const target = request.url
      const fail = (reason: FetchFailure["reason"], message: string, limit?: "size" | "time") =>
        new FetchFailure({ reason, url: target, message, ...(limit === undefined ? {} : { limit }) })
      let url: URL
      try {
        url = new URL(target)
      } catch {
        return fail("failed", "not a valid URL")
      }
      const refused = credentialsRefusal(url) ??
        (allowedByList(allow, url) && (url.protocol === "http:" || url.protocol === "https:") ? undefined : refusal(url))
      if (refused !== undefined) return fail("refused", refused)
      // One controller for interruption and the deadline, so either ends the exchange, body included.
      const controller = new AbortController()
      let timedOut = false
      const deadline = setTimeout(() => {
        timedOut = true
        controller.abort()
      }, request.timeoutMs)
      const onAbort = () => controller.abort()
      signal.addEventListener("abort", onAbort)
      try {
        const response = await fetch(url, {
          redirect: "manual",
          signal: controller.signal,
          headers: { "user-agent": request.userAgent, accept: request.accept }
        })
        const location = response.headers.get("location")
        if (HTTP_REDIRECTS.has(response.status) && location !== null) {
          await response.body?.cancel()
          return { _tag: "Redirect", url: target, status: response.status, location }
        }
        const contentType = response.headers.get("content-type") ?? ""
        const verdict = request.wanted(response.status, contentType)
        // The runtime's fetch decodes what it knows and hands anything else over as it came: refused instead.
        const codings = codingsToDecode(response.headers.get("content-encoding"))
        if (verdict === true && typeof codings === "string") {
          await response.body?.cancel()
          return fail("unsupported", codings)
        }
        const tooLarge = `larger than ${formatBytes(request.maxBytes)}`
        const declared = Number(response.headers.get("content-length"))
        if (verdict !== true || (Number.isFinite(declared) && declared > request.maxBytes && response.headers.get("content-encoding") === null)) {
          await response.body?.cancel()
          return verdict === true ? fail("rejected", tooLarge, "size") : fail("rejected", verdict)
        }
        const chunks: Array<Uint8Array> = []
        let size = 0
        const reader = response.body?.getReader()
        for (;;) {
          const part = reader === undefined ? { done: true as const, value: undefined } : await reader.read()
          if (part.done) break
          size += part.value.byteLength
          // Counted after decoding, so a compressed bomb is caught too.
          if (size > request.maxBytes) {
            await reader?.cancel()
            return fail("rejected", tooLarge, "size")
          }
          chunks.push(part.value)
        }
        const body = joinChunks(chunks, size)
        const lastModified = response.headers.get("last-modified")
        return { _tag: "Body", url: target, status: response.status, contentType, body, ...(lastModified === null ? {} : { lastModified }) }
      } catch (error) {
        if (timedOut) return fail("failed", `timed out after ${request.timeoutMs} ms`, "time")
        return fail("failed", error instanceof Error ? error.message : String(error))
      } finally {
        clearTimeout(deadline)
        signal.removeEventListener("abort", onAbort)
      }
    },
    catch: (error) => new FetchFailure({ reason: "failed", url: request.url, message: String(error) })
  }).pipe(Effect.flatMap((outcome) => (outcome instanceof FetchFailure ? Effect.fail(outcome) : Effect.succeed(outcome))))
