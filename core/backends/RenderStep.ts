/**
 * webFetch's rendering step, after the static read: the page as read, or the page as a headless
 * browser shows it when the request (or `fetch.render`) asks for it always, or asks for auto and
 * the static read found an app shell (core/ingest/AppShell.ts). The rendered HTML goes through the
 * same reader as a fetched body. Without a PageRenderer (Deno, the embedded library) or with a
 * browser that fails, auto keeps the static read; always fails with the reason.
 */
import { Effect } from "effect"
import { isAppShell } from "../ingest/AppShell.ts"
import type { PageRenderer, RenderFailure } from "../ingest/crawl/PageRenderer.ts"
import type { ReadablePage } from "../ingest/ReadablePage.ts"
import { type RenderMode, WebFetchError } from "../search/WebFetch.ts"
import type { CachedPage } from "../store/PageCache.ts"

/** What rendering needs of webFetch's settings. */
export interface RenderLimits {
  readonly allow: boolean | ReadonlyArray<string>
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly userAgent: string
}

/** The static read the step starts from: the final URL's response and the page read from it. */
export interface StaticRead {
  readonly url: string
  readonly body: Uint8Array
  readonly contentType: string
  readonly page: CachedPage
}

/** Reads a body as the static read did. */
export type ReadBody = (body: Uint8Array, contentType: string, url: string) => Effect.Effect<ReadablePage, WebFetchError>

const HTML = /^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i

/** The message of `always` where no browser runs: what to install, and where. */
export const RENDER_UNAVAILABLE = "rendering needs a headless Chromium, which this server does not have: " +
  "run the Node server with Chromium installed (Debian: apt-get install chromium; another path: fetch.chromiumPath)"

const fetchErrorOf = (failure: RenderFailure): WebFetchError => {
  switch (failure.reason) {
    case "unavailable":
      return new WebFetchError({ reason: "render_unavailable", url: failure.url, message: failure.message })
    case "http_status":
      return new WebFetchError({ reason: "http_status", url: failure.url, message: failure.message, ...(failure.status === undefined ? {} : { status: failure.status }) })
    case "refused":
    case "too_large":
    case "timeout":
    case "failed":
      return new WebFetchError({ reason: failure.reason, url: failure.url, message: `rendering: ${failure.message}` })
  }
}

export interface RenderStep {
  /** The cache key's part for a mode: what may be a rendering is kept apart from static reads. */
  readonly key: (mode: RenderMode) => string
  /** After the static read; `deadline` is the fetch's own (epoch ms): the render gets what is left of it. */
  readonly after: (mode: RenderMode, read: StaticRead, deadline: number, readBody: ReadBody) => Effect.Effect<CachedPage, WebFetchError>
}

/** The step for one WebFetch: `renderer` is the platform's, or undefined where there is none. */
export const renderStep = (renderer: PageRenderer["Service"] | undefined, limits: RenderLimits): RenderStep => ({
  key: (mode) => (mode === "never" || (mode === "auto" && renderer === undefined) ? "" : ` render=${mode}`),
  after: (mode, read, deadline, readBody) => {
    if (mode === "never" || !HTML.test(read.contentType)) return Effect.succeed(read.page)
    if (mode === "auto" && (renderer === undefined || !isAppShell(read.body, read.page.text))) {
      return Effect.succeed(read.page)
    }
    if (renderer === undefined) return Effect.fail(new WebFetchError({ reason: "render_unavailable", url: read.url, message: RENDER_UNAVAILABLE }))
    const rendered = renderer.render({
      url: read.url,
      userAgent: limits.userAgent,
      timeoutMs: Math.max(1, deadline - Date.now()),
      maxBytes: limits.maxBytes,
      allow: limits.allow,
      document: { body: read.body, contentType: read.contentType }
    }).pipe(
      Effect.mapError(fetchErrorOf),
      Effect.flatMap((shown) =>
        Effect.map(readBody(new TextEncoder().encode(shown.html), "text/html; charset=utf-8", shown.url), (page): CachedPage => ({
          url: shown.url,
          title: page.title,
          content: page.content,
          text: page.text,
          date: page.date ?? read.page.date,
          contentType: page.contentType
        }))
      )
    )
    // Auto had a page already: a render that fails leaves it as read.
    return mode === "auto"
      ? Effect.catch(rendered, (error) => Effect.as(Effect.logDebug(`webFetch render=auto kept the static read: ${error.message}`), read.page))
      : rendered
  }
})
