/**
 * For webFetch tests: a site on loopback (node:http, routes given by the test, every request
 * counted) and a Periscope Node server in this process whose config file has a `fetch`
 * section, built by the application's own composition over the Node platform (pages read on
 * its job threads). The platform's
 * PageFetcher can take an injected resolver, so names can resolve to any address without DNS.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { NodeFileSystem } from "@effect/platform-node"
import { Layer } from "effect"
import { type Resolver, systemResolver } from "../../adapters/node/sources/crawl/AddressGuard.ts"
import { nodeJobWorkersLayer } from "../../adapters/node/jobThreads.ts"
import { NodePageFetcher } from "../../adapters/node/sources/crawl/NodePageFetcher.ts"
import * as UndiciHttpClient from "../../adapters/node/undiciHttpClient.ts"
import { appLayer } from "../../core/app/Application.ts"
import type { SearchChoice } from "../../core/app/SearchBackend.ts"
import { recordsFromPlainKeys } from "../../core/auth/KeyRecord.ts"
import { FixtureSearch } from "../../core/backends/FixtureSearch.ts"
import { sampleDocuments } from "../../core/backends/SampleDocuments.ts"
import { ScriptedChat, unconfiguredChat } from "../../core/backends/ScriptedChat.ts"
import type { FetchConfig } from "../../core/config/FetchConfig.ts"
import type { JobsConfig } from "../../core/config/JobsConfig.ts"
import { settingsOf } from "../../core/config/Settings.ts"
import { serveInProcess } from "../support/servers.ts"

export const FETCH_KEY = "fetch-test-key-0123456789"

export type Handler = (request: IncomingMessage, response: ServerResponse) => void

export interface Site {
  readonly origin: string
  readonly port: number
  /** "127.0.0.1:port", for fetch.allowHosts. */
  readonly host: string
  /** Paths requested so far, in order. */
  readonly requested: Array<string>
  close(): Promise<void>
}

/** A loopback site answering `routes` (exact path match, query ignored); 404 otherwise. */
export const serveSite = (routes: Record<string, Handler>): Promise<Site> =>
  new Promise((resolve) => {
    const requested: Array<string> = []
    const sockets = new Set<import("node:net").Socket>()
    const server: Server = createServer((request, response) => {
      const path = new URL(request.url ?? "/", "http://x").pathname
      requested.push(path)
      const handler = routes[path]
      if (handler === undefined) {
        response.writeHead(404, { "content-type": "text/html" })
        response.end("<html><body><h1>Not found</h1></body></html>")
        return
      }
      handler(request, response)
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        origin: `http://127.0.0.1:${port}`,
        port,
        host: `127.0.0.1:${port}`,
        requested,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })

export const send = (body: string | Uint8Array, contentType: string, status = 200, headers: Record<string, string> = {}): Handler => (_q, r) => {
  r.writeHead(status, { "content-type": contentType, ...headers })
  r.end(body)
}

export const redirect = (location: string, status = 302): Handler => (_q, r) => {
  r.writeHead(status, { location })
  r.end()
}

export interface FetchServer {
  readonly url: string
  close(): Promise<void>
}

/** Periscope with `fetch` as its config file's fetch section (and `jobs` its jobs section); `resolve` replaces DNS for the page fetcher. */
export const startFetchServer = async (
  fetch: FetchConfig,
  options: { readonly resolve?: Resolver; readonly search?: SearchChoice; readonly jobs?: JobsConfig; readonly perMinute?: number } = {}
): Promise<FetchServer> => {
  const platform = Layer.mergeAll(
    NodeFileSystem.layer,
    UndiciHttpClient.layer,
    NodePageFetcher.layer({ allow: false, resolve: options.resolve ?? systemResolver }),
    // Pages are read on the job threads, as the server reads them.
    nodeJobWorkersLayer
  )
  const services = appLayer(settingsOf({ fetch, ...(options.jobs === undefined ? {} : { jobs: options.jobs }) }), recordsFromPlainKeys([FETCH_KEY], options.perMinute ?? 1_000_000), {
    search: options.search ?? { _tag: "Layer", layer: FixtureSearch.layer(sampleDocuments) },
    chatModel: ScriptedChat.layer(unconfiguredChat)
  }).pipe(Layer.provide(platform), Layer.orDie)
  return serveInProcess(services)
}

/** POSTs to webFetch as an agent would; `body` is sent as JSON unless it is a string. */
export const postFetch = async (server: string, body: unknown, options: { readonly key?: string | null; readonly signal?: AbortSignal } = {}) => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  if (options.key !== null) headers.authorization = `Bearer ${options.key ?? FETCH_KEY}`
  const response = await fetch(`${server}/api/search/webFetch`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })
  return { status: response.status, headers: response.headers, body: await response.json() as any }
}

/** POSTs a JSON body to any keyed path of the server. */
export const postJson = async (server: string, path: string, body: unknown) => {
  const response = await fetch(`${server}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${FETCH_KEY}` },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })
  return { status: response.status, headers: response.headers, body: await response.json() as any }
}

/** One MCP tools/call over HTTP, as a stateless client sends it; the JSON-RPC result. */
export const callTool = async (server: string, name: string, args: unknown) => {
  const response = await fetch(`${server}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${FETCH_KEY}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })
  })
  return await response.json() as any
}

/** A one-page PDF written by hand (Helvetica, one text line per entry), with a Title in its info dictionary. */
export const minimalPdf = (lines: ReadonlyArray<string>, title: string): Uint8Array => {
  const escape = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`)
  const stream = `BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `(${escape(l)}) '`).join(" ")} ET`
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Title (${escape(title)}) /CreationDate (D:20240315120000Z) >>`
  ]
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((object, i) => {
    offsets.push(out.length)
    out += `${i + 1} 0 obj\n${object}\nendobj\n`
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new TextEncoder().encode(out)
}
