/**
 * Reading a page as a browser shows it: the URL in, the final URL and the HTML of the DOM out
 * once its scripts have built it. A platform that can run a headless browser provides it (the
 * Node adapter, with Chromium); elsewhere `layerNone` says what is missing. Every request the
 * browser makes must pass the same address policy as the PageFetcher (core/ingest/crawl/
 * AddressPolicy.ts), subresources, redirects and websockets included.
 */
import { Context, Effect, Layer, Schema } from "effect"

/** When the page counts as built: its network idle, or an element matching a CSS selector present. */
export type RenderWait = { readonly _tag: "NetworkIdle" } | { readonly _tag: "Selector"; readonly selector: string }

export interface RenderRequest {
  readonly url: string
  readonly userAgent: string
  /** For the whole render: waiting for a free page, the browser's start, loading and the wait. */
  readonly timeoutMs: number
  /** Of each response the browser receives, and of the rendered HTML. */
  readonly maxBytes: number
  /** Network idle unless a selector is named. */
  readonly wait?: RenderWait
  /**
   * Hosts exempt from the address check, or true for all; operator configuration only
   * (webFetch's `fetch.allow*`), never a caller's input.
   */
  readonly allow?: boolean | ReadonlyArray<string>
  /**
   * The page's own response when the caller has just fetched it: the browser's navigation to
   * `url` is answered with it instead of asking the site a second time.
   */
  readonly document?: { readonly body: Uint8Array; readonly contentType: string }
}

export interface RenderedPage {
  /** After redirects and the page's own navigation. */
  readonly url: string
  /** The DOM serialized once the wait ended. */
  readonly html: string
}

/**
 * Why a page was not rendered: `unavailable` when this runtime has no browser (the message says
 * what to install), `refused` when the page's own address may not be fetched, `http_status` when
 * the site answered the page with an error status, `too_large` over the size limit, `timeout`
 * when the page did not load (or the selector did not appear) in time, `failed` otherwise (the
 * browser died, the site broke the connection).
 */
export class RenderFailure extends Schema.TaggedError<RenderFailure>()("RenderFailure", {
  reason: Schema.Literals(["unavailable", "refused", "http_status", "too_large", "timeout", "failed"]),
  url: Schema.String,
  message: Schema.String,
  status: Schema.optional(Schema.Number)
}) {}

/** The message of a runtime without a browser. */
export const NO_BROWSER = "rendering pages needs a headless Chromium, which this runtime does not have; run the Node server with Chromium installed"

export class PageRenderer extends Context.Service<PageRenderer, {
  readonly render: (request: RenderRequest) => Effect.Effect<RenderedPage, RenderFailure>
}>()("periscope/ingest/PageRenderer") {
  /** No browser here: every render fails as `unavailable` with `message`. */
  static readonly layerNone = (message: string = NO_BROWSER): Layer.Layer<PageRenderer> =>
    Layer.succeed(
      PageRenderer,
      PageRenderer.of({ render: (request) => Effect.fail(new RenderFailure({ reason: "unavailable", url: request.url, message })) })
    )
}
