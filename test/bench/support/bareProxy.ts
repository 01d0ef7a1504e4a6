/**
 * The floor of test/bench/gateway.ts: the least a Node gateway can do. A bare
 * node:http server that reads the chat body, parses it, sets the upstream's
 * model name, sends it on over a keep-alive agent and pipes the answer back
 * (JSON or SSE) as it comes. No auth, no validation, no retries, no
 * normalization. What it costs over the direct path is what Node's HTTP
 * server and client cost on this machine, before any gateway work.
 * Usage: node bareProxy.ts <port> <upstream base URL> <upstream model>
 */
import { Agent, createServer, request } from "node:http"
import { onJsonBody } from "./bareJsonBody.ts"

const [port, base, model] = process.argv.slice(2)
const upstream = new URL(`${base!.replace(/\/$/, "")}/chat/completions`)
const agent = new Agent({ keepAlive: true, maxSockets: 256 })

const server = createServer((req, res) => {
  onJsonBody(req, (sent) => {
    if (sent === undefined) {
      res.writeHead(400).end()
      return
    }
    const body = JSON.stringify({ ...sent, model })
    const out = request(upstream, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, { "content-type": answer.headers["content-type"] ?? "application/json" })
      answer.pipe(res)
    })
    out.on("error", () => {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
    out.end(body)
  })
})
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("listening\n"))
