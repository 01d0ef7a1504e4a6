/**
 * A lean HTTP/1.1 client for timing one request at a time: one keep-alive socket per target,
 * the request's bytes built once, the answer read as bytes until its Content-Length or its last
 * chunk. `fetch` allocates tens of kilobytes a request (streams, promises, a Headers object, an
 * AbortSignal's timer); on a two-core machine the collections and compile jobs that buys run in
 * the bench's own process, beside the servers it times, and land in the tail of every path.
 */
import { connect, type Socket } from "node:net"

export interface LeanTarget {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

export interface LeanTiming {
  /** Milliseconds from the write to the whole answer. */
  readonly total: number
  /** Milliseconds to the first byte of `firstMark` in the body (undefined without one). */
  readonly first: number | undefined
  readonly status: number
  readonly body: string
}

const CRLF2 = Buffer.from("\r\n\r\n")

/** Where the body of a complete response ends in `buf` (after `bodyStart`), or -1 while more is due. */
const chunkedEnd = (buf: Buffer, bodyStart: number): number => {
  let at = bodyStart
  for (;;) {
    const eol = buf.indexOf("\r\n", at, "latin1")
    if (eol < 0) return -1
    const size = Number.parseInt(buf.toString("latin1", at, eol), 16)
    if (Number.isNaN(size)) throw new Error(`bad chunk size at ${at}`)
    if (size === 0) {
      const end = buf.indexOf(CRLF2, eol)
      return end < 0 ? -1 : end + 4
    }
    at = eol + 2 + size + 2
    if (at > buf.length) return -1
  }
}

/** The body of a chunked response without its framing. */
const unchunk = (buf: Buffer, bodyStart: number): string => {
  const parts: Array<string> = []
  let at = bodyStart
  for (;;) {
    const eol = buf.indexOf("\r\n", at, "latin1")
    const size = Number.parseInt(buf.toString("latin1", at, eol), 16)
    if (size === 0) return parts.join("")
    parts.push(buf.toString("utf8", eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
}

export interface LeanConnection {
  /** Sends the target's request and times its answer; `firstMark` is looked for in the raw bytes. */
  readonly send: (firstMark?: Buffer, timeoutMs?: number) => Promise<LeanTiming>
  readonly close: () => void
}

export const leanConnection = (target: LeanTarget): LeanConnection => {
  const url = new URL(target.url)
  const body = Buffer.from(target.body)
  const head = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, "connection: keep-alive", `content-length: ${body.length}`]
  for (const [name, value] of Object.entries(target.headers)) head.push(`${name}: ${value}`)
  const request = Buffer.concat([Buffer.from(head.join("\r\n") + "\r\n\r\n"), body])

  let socket: Socket | undefined
  /** A connected socket, within `timeoutMs` (the request's own time, which a slow connect uses up). */
  const open = (timeoutMs: number) =>
    new Promise<Socket>((done, fail) => {
      const s = connect(Number(url.port), url.hostname)
      s.setNoDelay(true)
      const settle = (error: Error | undefined) => {
        clearTimeout(timer)
        s.removeListener("error", settle)
        if (error === undefined) return done(s)
        s.destroy()
        fail(error)
      }
      const timer = setTimeout(() => settle(new Error(`no connection in ${timeoutMs} ms`)), timeoutMs)
      s.once("connect", () => settle(undefined))
      s.once("error", settle)
    })

  const send = async (firstMark?: Buffer, timeoutMs = 30_000): Promise<LeanTiming> => {
    if (socket === undefined || socket.destroyed) socket = await open(timeoutMs)
    const s = socket
    return new Promise<LeanTiming>((done, fail) => {
      let buf: Buffer = Buffer.alloc(0)
      let bodyStart = -1
      let length = -1 // Content-Length, or -1 for chunked
      let first: number | undefined
      const start = performance.now()
      const finish = (error: Error | undefined, timing?: LeanTiming) => {
        clearTimeout(timer)
        s.removeListener("data", onData)
        s.removeListener("close", onClose)
        s.removeListener("error", onError)
        if (error) {
          s.destroy()
          fail(error)
        } else done(timing!)
      }
      const onData = (chunk: Buffer) => {
        buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
        if (bodyStart < 0) {
          const end = buf.indexOf(CRLF2)
          if (end < 0) return
          bodyStart = end + 4
          const headText = buf.toString("latin1", 0, end).toLowerCase()
          const cl = /\r\ncontent-length: *(\d+)/.exec(headText)
          length = cl ? Number(cl[1]) : -1
          if (!cl && !headText.includes("transfer-encoding: chunked")) return finish(new Error(`an answer without a length: ${headText}`))
        }
        if (first === undefined && firstMark !== undefined && buf.indexOf(firstMark, bodyStart) >= 0) first = performance.now() - start
        const complete = length >= 0 ? buf.length >= bodyStart + length : chunkedEnd(buf, bodyStart) >= 0
        if (!complete) return
        const total = performance.now() - start
        const status = Number(buf.toString("latin1", 9, 12))
        finish(undefined, { total, first, status, body: length >= 0 ? buf.toString("utf8", bodyStart, bodyStart + length) : unchunk(buf, bodyStart) })
      }
      const onClose = () => finish(new Error("the connection closed before the answer was whole"))
      const onError = (error: Error) => finish(error)
      const timer = setTimeout(() => finish(new Error(`no whole answer in ${timeoutMs} ms`)), timeoutMs)
      s.on("data", onData)
      s.once("close", onClose)
      s.once("error", onError)
      s.write(request)
    })
  }
  return { send, close: () => socket?.destroy() }
}
