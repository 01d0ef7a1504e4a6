/**
 * The pages a person opens in a browser: the playground at `/` and the API
 * reference at `/docs`, with their script, stylesheet and icon. Served by the
 * core, so the Node server, Deno and the embed handler serve them alike. No
 * key is needed to load them (the API calls they make carry the key the
 * page keeps); every page goes out with a CSP that allows scripts, styles
 * and fetches from this origin only (images may come from anywhere, as
 * image results do) and no referrer, so result images learn nothing.
 */
import { HttpRouter, HttpServerResponse } from "effect/http"
import { apiDocsPage } from "./playground/ApiDocsPage.ts"
import { apiDocsScript } from "./playground/ApiDocsScript.ts"
import { pageStyle } from "./playground/PageStyle.ts"
import { playgroundPage } from "./playground/PlaygroundPage.ts"
import { playgroundScript } from "./playground/PlaygroundScript.ts"

export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: http: data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="14" cy="14" r="9" fill="none" stroke="#0a58a8" stroke-width="4"/><path d="M20 20l8 8" stroke="#0a58a8" stroke-width="4" stroke-linecap="round"/></svg>`

const headers = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache"
}

const asset = (body: string, contentType: string) => HttpServerResponse.text(body, { contentType, headers })

/** Paths the pages answer on (GET only), for the error boundary's 405 and for tests. */
export const pagePaths = ["/", "/docs", "/playground.js", "/docs.js", "/playground.css", "/favicon.svg"] as const

const pageRoutes: ReadonlyArray<HttpRouter.Route<never, never>> = [
  HttpRouter.route("GET", "/", asset(playgroundPage, "text/html; charset=utf-8")),
  HttpRouter.route("GET", "/docs", asset(apiDocsPage, "text/html; charset=utf-8")),
  HttpRouter.route("GET", "/playground.js", asset(playgroundScript, "text/javascript; charset=utf-8")),
  HttpRouter.route("GET", "/docs.js", asset(apiDocsScript, "text/javascript; charset=utf-8")),
  HttpRouter.route("GET", "/playground.css", asset(pageStyle, "text/css; charset=utf-8")),
  HttpRouter.route("GET", "/favicon.svg", asset(favicon, "image/svg+xml"))
]

// Typed as never/never routes: inferred from the literal, addAll's requirements widen to `any`.
export const PlaygroundRoutes = HttpRouter.addAll(pageRoutes)
