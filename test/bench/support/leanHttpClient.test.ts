import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { leanConnection } from "./leanHttpClient.ts"

// A real node:http server on loopback: a JSON answer with a length, an SSE answer in chunks
// some milliseconds apart, and one that breaks the connection mid-answer.
let server: Server
let base = ""
const connections = new Set<unknown>()
const bodies: Array<string> = []

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ""
    req.on("data", (d) => { body += d })
    req.on("end", () => {
      bodies.push(`${req.method} ${req.headers["x-test"]} ${body}`)
      if (req.url === "/json") res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: "é" }))
      else if (req.url === "/sse") {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: {\"n\":1}\n\n")
        setTimeout(() => res.end("data: {\"n\":2}\n\ndata: [DONE]\n\n"), 30)
      } else if (req.url === "/break") {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: {\"n\":1}\n\n", () => req.socket.destroy())
      } else res.writeHead(404).end("nope")
    })
  })
  server.on("connection", (socket) => connections.add(socket))
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((done) => server.close(() => done())))

describe("leanConnection", () => {
  it("sends the request as given and reads a whole answer by its length, over one kept-alive socket", async () => {
    const before = connections.size
    const connection = leanConnection({ url: `${base}/json`, headers: { "x-test": "yes", "content-type": "application/json" }, body: "{\"q\":1}" })
    for (let i = 0; i < 3; i++) {
      const answer = await connection.send()
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body)).toEqual({ ok: "é" })
      expect(answer.first).toBeUndefined()
      expect(answer.total).toBeGreaterThan(0)
    }
    connection.close()
    expect(connections.size - before).toBe(1)
    expect(bodies.at(-1)).toBe("POST yes {\"q\":1}")
  })

  it("times the first mark apart from the whole chunked answer, and unframes its body", async () => {
    const connection = leanConnection({ url: `${base}/sse`, headers: {}, body: "{}" })
    const answer = await connection.send(Buffer.from("data: {"))
    connection.close()
    expect(answer.body).toBe("data: {\"n\":1}\n\ndata: {\"n\":2}\n\ndata: [DONE]\n\n")
    // The first event came 30 ms before the rest.
    expect(answer.first).toBeDefined()
    expect(answer.total - answer.first!).toBeGreaterThan(20)
  })

  it("reports a status other than 200 with its body", async () => {
    const connection = leanConnection({ url: `${base}/missing`, headers: {}, body: "" })
    const answer = await connection.send()
    connection.close()
    expect(answer.status).toBe(404)
    expect(answer.body).toBe("nope")
  })

  it("fails a request whose connection breaks mid-answer, and opens a new socket for the next", async () => {
    const connection = leanConnection({ url: `${base}/break`, headers: {}, body: "" })
    await expect(connection.send()).rejects.toThrow("the connection closed before the answer was whole")
    await expect(connection.send()).rejects.toThrow("the connection closed before the answer was whole")
    connection.close()
  })

  it("fails a request whose connection is refused, naming why", async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer()
    await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done))
    const port = (probe.address() as AddressInfo).port
    await new Promise<void>((done) => probe.close(() => done()))
    const connection = leanConnection({ url: `http://127.0.0.1:${port}/x`, headers: {}, body: "" })
    await expect(connection.send(undefined, 2_000)).rejects.toThrow("ECONNREFUSED")
    connection.close()
  })

  it("fails a request with no whole answer in its time", async () => {
    const connection = leanConnection({ url: `${base}/sse`, headers: {}, body: "" })
    await expect(connection.send(undefined, 5)).rejects.toThrow("no whole answer in 5 ms")
    connection.close()
  })
})
