/**
 * A real HTTP server on loopback for crawler tests: routes are plain node:http
 * handlers; every request is logged with the number of requests in flight at
 * that moment, so tests can check what the crawler asked for and how.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"

export type Handler = (request: IncomingMessage, response: ServerResponse) => void

export interface SiteServer {
  /** "127.0.0.1:PORT" */
  readonly host: string
  readonly origin: string
  /** Paths requested, in arrival order. */
  readonly requested: Array<string>
  /** Most requests this server ever had in flight at once. */
  readonly maxInFlight: () => number
  /** Requests in flight now (a request ends when its answer is sent or its client goes away). */
  readonly inFlight: () => number
  close(): Promise<void>
}

export const html = (title: string, body: string, head = "") =>
  `<!doctype html><html lang="en"><head><title>${title}</title>${head}</head><body><main>${body}</main></body></html>`

/** A page with a paragraph of its own and links to `links`. */
export const page = (title: string, links: ReadonlyArray<string> = [], extra = "") =>
  html(
    title,
    `<h1>${title}</h1><p>This page is about ${title.toLowerCase()} and has enough words to be indexed as real text.</p>` +
      links.map((l) => `<p><a href="${l}">${l}</a></p>`).join("") + extra
  )

export const sendHtml = (body: string, status = 200): Handler => (_request, response) => {
  response.writeHead(status, { "content-type": "text/html; charset=utf-8" })
  response.end(body)
}

export const startSiteServer = async (
  routes: Readonly<Record<string, Handler>>,
  options: { readonly hostname?: string; readonly latencyMs?: number } = {}
): Promise<SiteServer> => {
  const requested: Array<string> = []
  const sockets = new Set<Socket>()
  let inFlight = 0
  let maxInFlight = 0
  const server = createServer((request, response) => {
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    response.on("close", () => inFlight--)
    const path = request.url ?? "/"
    requested.push(path)
    const handler = routes[path.split("?")[0]!]
    const respond = () => {
      if (handler === undefined) {
        response.writeHead(404, { "content-type": "text/plain" })
        response.end("not found")
      } else {
        handler(request, response)
      }
    }
    // Latency makes overlapping requests possible, so a missing per-host limit would show.
    if (options.latencyMs) setTimeout(respond, options.latencyMs)
    else respond()
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const hostname = options.hostname ?? "127.0.0.1"
  await new Promise<void>((resolve) => server.listen(0, hostname, resolve))
  const port = (server.address() as { port: number }).port
  return {
    host: `${hostname}:${port}`,
    origin: `http://${hostname}:${port}`,
    requested,
    maxInFlight: () => maxInFlight,
    inFlight: () => inFlight,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
