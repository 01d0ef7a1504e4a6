/**
 * A model server stand-in over raw TCP, for the faults an HTTP library
 * would not let a server commit: no response at all, headers and then
 * silence, a body that stops half-way, a stream that stalls between
 * events, a reset, and bytes that are not HTTP. It records how many
 * connections are open, so tests can see that nothing was left behind.
 */
import { createServer, type Socket } from "node:net"

export type RawBehaviour =
  | "silent" // reads the request, never answers
  | "headers-then-silence" // 200 headers of a JSON answer, then nothing
  | "body-stalls" // half a JSON body, then nothing
  | "stream-stalls" // an SSE stream: two events, then nothing
  | "reset" // destroys the connection as soon as the request is in
  | "garbage" // bytes that are not HTTP, then close
  | "stream-then-reset" // an SSE stream: two events, then a reset
  | "stream-then-garbage" // an SSE stream: two events, then bytes that are neither SSE nor chunked framing, then close

export interface RawUpstream {
  readonly url: string
  /** Connections open right now. */
  open(): number
  /** Connections accepted so far. */
  accepted(): number
  close(): Promise<void>
}

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`

export const startRawUpstream = async (behaviour: RawBehaviour | ((index: number) => RawBehaviour)): Promise<RawUpstream> => {
  const sockets = new Set<Socket>()
  let accepted = 0
  const server = createServer((socket) => {
    const index = accepted++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => {})
    const mode = typeof behaviour === "function" ? behaviour(index) : behaviour
    let seen = ""
    let answered = false
    socket.on("data", (data) => {
      seen += data.toString("latin1")
      const end = seen.indexOf("\r\n\r\n")
      if (answered || end === -1) return
      const length = Number(/content-length:\s*(\d+)/i.exec(seen.slice(0, end))?.[1] ?? 0)
      if (seen.length < end + 4 + length) return
      answered = true
      switch (mode) {
        case "silent":
          return
        case "headers-then-silence":
          socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n")
          return
        case "body-stalls":
          socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n{\"id\":\"x\",\"choices\":[{\"index\":0,")
          return
        case "stream-stalls":
        case "stream-then-reset":
        case "stream-then-garbage":
          socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
          for (const text of ["Hello", " there"]) {
            const event = chunk(text)
            socket.write(`${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n`)
          }
          if (mode === "stream-then-reset") setTimeout(() => socket.resetAndDestroy(), 20)
          if (mode === "stream-then-garbage") setTimeout(() => socket.end("zz\r\n\x00\xff{not sse\r\n"), 20)
          return
        case "reset":
          socket.resetAndDestroy()
          return
        case "garbage":
          socket.end("\x00\x01 this is not HTTP at all \xff\xfe\r\n\r\n")
          return
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}/v1`,
    open: () => sockets.size,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
