/**
 * A loopback stand-in for an OpenTelemetry collector's OTLP/HTTP receiver: it
 * accepts POST /v1/traces with the documented JSON body
 * (ExportTraceServiceRequest: resourceSpans[].scopeSpans[].spans[]) and keeps
 * every span it was sent, answering 200 {} as the collector does.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly serviceName: string | undefined
}

export interface Collector {
  readonly url: string
  readonly spans: ReadonlyArray<ReceivedSpan>
  readonly posts: number
  close(): Promise<void>
}

export const startCollector = async (): Promise<Collector> => {
  const spans: Array<ReceivedSpan> = []
  let posts = 0
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || !String(req.headers["content-type"]).includes("application/json")) {
        res.writeHead(404).end()
        return
      }
      posts++
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      for (const rs of body.resourceSpans ?? []) {
        const serviceName = rs.resource?.attributes?.find((a: any) => a.key === "service.name")?.value?.stringValue
        for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) spans.push({ ...span, serviceName })
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    get spans() {
      return spans
    },
    get posts() {
      return posts
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
