/**
 * The pages a person opens in a browser: the playground at `/` and the API
 * reference at `/docs`, with their modules, stylesheet and icon. Their
 * sources are the files in ./playground/ (type-checked JavaScript, HTML,
 * CSS); the core serves them from the generated PlaygroundAssets.ts, so the
 * Node server, Deno and the embed handler serve them alike without reading
 * files. No key is needed to load them (the API calls they make carry the
 * key the page keeps); every page goes out with a CSP that allows scripts,
 * styles and fetches from this origin only (images may come from anywhere,
 * as image results do) and no referrer, so result images learn nothing.
 */
import { HttpRouter, HttpServerResponse } from "effect/http"
import { type PlaygroundAsset, playgroundAssets } from "./playground/PlaygroundAssets.ts"

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

const headers = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache"
}

/** The HTML pages by path; every other file (script, style, icon) is served at `/<its name>`. */
const pages: ReadonlyArray<readonly [path: HttpRouter.PathInput, file: PlaygroundAsset]> = [
  ["/", "index.html"],
  ["/docs", "docs.html"]
]

const contentTypes: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml"
}

const contentTypeOf = (file: string): string => {
  const type = contentTypes[file.slice(file.lastIndexOf(".") + 1)]
  if (type === undefined) throw new Error(`playground: no content type for ${file}`)
  return type
}

const isAsset = (name: string): name is PlaygroundAsset => Object.hasOwn(playgroundAssets, name)

/** A page's HTML with each `<!-- include NAME -->` line replaced by that file (the key form both pages share). */
const pageHtml = (file: PlaygroundAsset): string =>
  playgroundAssets[file].replace(/^<!-- include (\S+) -->\n/gm, (_, name: string) => {
    if (!isAsset(name)) throw new Error(`playground: ${file} includes ${name}, which is not in core/api/playground/`)
    return playgroundAssets[name]
  })

const served: ReadonlyArray<{ readonly path: HttpRouter.PathInput; readonly body: string; readonly contentType: string }> = [
  ...pages.map(([path, file]) => ({ path, body: pageHtml(file), contentType: contentTypeOf(file) })),
  ...(Object.keys(playgroundAssets) as Array<PlaygroundAsset>)
    .filter((file) => !file.endsWith(".html"))
    .map((file) => ({ path: `/${file}` as const, body: playgroundAssets[file], contentType: contentTypeOf(file) }))
]

/** Paths the pages answer on (GET only), for the error boundary's 405 and for tests. */
export const pagePaths: ReadonlyArray<string> = served.map(({ path }) => path)

const pageRoutes: ReadonlyArray<HttpRouter.Route<never, never>> = served.map(({ path, body, contentType }) =>
  HttpRouter.route("GET", path, HttpServerResponse.text(body, { contentType, headers })))

// Typed as never/never routes: inferred from the literal, addAll's requirements widen to `any`.
export const PlaygroundRoutes = HttpRouter.addAll(pageRoutes)
