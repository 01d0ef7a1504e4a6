/**
 * Node's side of the express lane (core/api/ExpressLane.ts): reads a hot
 * route's body under its limit, starts the answer, and writes it with plain
 * node:http calls: a JSON answer as one string with its headers (one write
 * on the socket), an SSE answer chunk by chunk, waiting for `drain` when the
 * socket is full. A client that goes away interrupts the answer (and with it
 * any upstream call) or the stream.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, Exit, type Fiber, Option, Stream } from "effect"
import { HttpServerError } from "effect/http"
import { type Answer, SSE_CONTENT_TYPE } from "../../core/api/Answer.ts"
import type { ExpressLane, LaneRoute } from "../../core/api/ExpressLane.ts"

/** Answers `req`, whose route `lane.routeOf` found, in the lane. */
export const serveInLane = (lane: ExpressLane, route: LaneRoute, req: IncomingMessage, res: ServerResponse): void => {
  const start = (body: string | undefined) => {
    // The peer's address only for a route that admits itself (SearXNG opened to a private network
    // reads it). A lazy getter closing over req made young-generation collections far slower
    // under load (test/bench/http.ts: p99).
    const head = route.admitsItself === undefined
      ? { method: req.method!, url: req.url!, headers: req.headers as Record<string, string | undefined> }
      : { method: req.method!, url: req.url!, headers: req.headers as Record<string, string | undefined>, peerAddress: Option.fromNullishOr(req.socket.remoteAddress) }
    const fiber = lane.answer(route, head, body)
    // 'close' comes once, after the answer too, when interrupting the finished fiber does nothing:
    // a plain listener, not a once wrapper and a removal per request.
    // Marked as the client's doing, as Effect's server marks it: logged and counted 499.
    res.on("close", () => fiber.interruptUnsafe(undefined, HttpServerError.ClientAbort.annotation))
    fiber.addObserver((exit) => {
      if (Exit.isSuccess(exit) && !res.destroyed) write(lane, res, exit.value)
    })
  }
  const declared = req.headers["content-length"]
  // Over the limit by its own account: answered unread, as the full stack does (Node drains the rest).
  if (declared !== undefined && Number(declared) > route.limit) {
    start(undefined)
    return
  }
  readBody(req, route, start)
}

const readBody = (req: IncomingMessage, route: LaneRoute, done: (body: string | undefined) => void) => {
  const chunks: Array<Buffer> = []
  let size = 0
  let over = false
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > route.limit) {
      over = true
      req.off("data", onData)
      done(undefined)
      return
    }
    chunks.push(chunk)
  }
  req.on("data", onData)
  req.once("end", () => {
    if (over) return
    done(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, size).toString("utf8"))
  })
}

const write = (lane: ExpressLane, res: ServerResponse, answer: Answer) => {
  if (answer._tag === "Json") {
    res.writeHead(answer.status, { ...answer.headers, "content-type": "application/json", "content-length": Buffer.byteLength(answer.body) })
    res.end(answer.body)
    return
  }
  res.writeHead(200, { ...answer.headers, "content-type": SSE_CONTENT_TYPE })
  const pump: Fiber.Fiber<void> = lane.fork(Stream.runForEach(answer.events, (chunk) => writeChunk(res, chunk)))
  res.on("close", () => pump.interruptUnsafe())
  pump.addObserver(() => {
    if (!res.destroyed) res.end()
  })
}

/** One chunk; when the socket's buffer is full, the stream waits for it to drain (or for the client to go). */
const writeChunk = (res: ServerResponse, chunk: Uint8Array): Effect.Effect<void> => {
  if (res.destroyed || res.write(chunk)) return Effect.void
  return Effect.callback<void>((resume) => {
    const go = () => {
      res.off("drain", go)
      res.off("close", go)
      resume(Effect.void)
    }
    res.once("drain", go)
    res.once("close", go)
  })
}
