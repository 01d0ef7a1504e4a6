/**
 * The bare baselines' body reading (bareHttpServer.ts, bareProxy.ts): the whole body, parsed
 * as JSON with nothing else checked; `undefined` when it is not JSON.
 */
import type { IncomingMessage } from "node:http"

export const onJsonBody = (req: IncomingMessage, done: (body: any) => void): void => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    let body: unknown
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      body = undefined
    }
    done(body)
  })
}
