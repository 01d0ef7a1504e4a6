/**
 * The crawl's network I/O: one GET of one URL under limits, with no automatic
 * redirects (the crawler follows them and checks each hop). The Node adapter
 * provides it with a guarded fetch pinned to the checked address; interrupting
 * the effect must abort the request, so an interrupted crawl stops at once.
 */
import { Context, type Effect, Schema } from "effect"

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
}

export type PageResponse =
  | { readonly _tag: "Body"; readonly url: string; readonly status: number; readonly contentType: string; readonly body: Uint8Array }
  | { readonly _tag: "Redirect"; readonly url: string; readonly status: number; readonly location: string }

/**
 * Why a fetch gave no page: `refused` before any request (the address or scheme
 * may not be crawled), `rejected` by the body gate or a size limit, `failed` on
 * the way (network error, timeout, broken body).
 */
export class FetchFailure extends Schema.TaggedError<FetchFailure>()("FetchFailure", {
  reason: Schema.Literals(["refused", "rejected", "failed"]),
  url: Schema.String,
  message: Schema.String
}) {}

export class PageFetcher extends Context.Service<PageFetcher, {
  readonly fetch: (request: PageRequest) => Effect.Effect<PageResponse, FetchFailure>
}>()("periscope/ingest/PageFetcher") {}

export const HTTP_REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])
