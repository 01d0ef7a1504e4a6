/**
 * The Node HTTP server of `npm start`, with the two gates a server needs at
 * the edges of its life. A request that arrives before the application's
 * handler is attached is held and handed over when it is (Effect's server
 * listens first and attaches its handler a moment later; Node drops a
 * request that has no listener, leaving its client hanging). While draining
 * for shutdown, every new request is answered 503 with `Connection: close`
 * at once, and the requests in flight are counted so the drain knows when
 * it is done; at the end of the grace, those whose answer has not begun are
 * answered 503 the same way (refuseUnanswered). With an express lane set, the lane's routes are answered by it
 * (adapters/node/laneServe.ts) and everything else by Effect's server.
 */
import { type IncomingMessage, Server, type ServerResponse } from "node:http"
import { ApiError, errorBody, familyOfPath } from "../../core/api/ApiError.ts"
import type { ExpressLane } from "../../core/api/ExpressLane.ts"
import { serveInLane } from "./laneServe.ts"

const shuttingDown = new ApiError({
  kind: "unavailable",
  message: "the server is shutting down; send the request again",
  param: null,
  code: "server_shutting_down"
})

const refuse = (req: IncomingMessage, res: ServerResponse) => {
  const url = req.url ?? "/"
  const q = url.indexOf("?")
  const body = JSON.stringify(errorBody(familyOfPath(q === -1 ? url : url.slice(0, q)), shuttingDown))
  // The request body is not read: close the connection after the answer so it cannot be misread as the next request.
  res.writeHead(503, { "content-type": "application/json", "connection": "close", "retry-after": "1", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

export class GatedServer extends Server {
  /** Requests whose answer has not finished. */
  inFlight = 0
  /** The hot routes' lane, once the services it answers with are built. */
  lane: ExpressLane | undefined = undefined
  /** Requests handed to the lane so far. */
  answeredInLane = 0
  private draining = false
  private held: Array<[IncomingMessage, ServerResponse]> = []
  private readonly open = new Set<ServerResponse>()
  private readonly idle = new Set<() => void>()

  constructor(options: { readonly headersTimeoutMs?: number; readonly requestTimeoutMs?: number; readonly keepAliveTimeoutMs?: number } = {}) {
    super({
      ...(options.headersTimeoutMs === undefined ? {} : { headersTimeout: options.headersTimeoutMs }),
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeout: options.requestTimeoutMs }),
      ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs })
    })
    this.on("newListener", (event) => {
      if (event !== "request" || this.held.length === 0) return
      // The listener is attached after this event: hand the held requests over on the next turn.
      setImmediate(() => {
        const held = this.held
        this.held = []
        for (const [req, res] of held) this.emit("request", req, res)
      })
    })
  }

  override emit(event: string | symbol, ...args: Array<any>): boolean {
    if (event !== "request") return super.emit(event, ...args)
    const [req, res] = args as [IncomingMessage, ServerResponse]
    if (this.draining) {
      refuse(req, res)
      return true
    }
    const route = this.lane?.routeOf(req.method, req.url)
    if (route === undefined && this.listenerCount("request") === 0) {
      this.held.push([req, res])
      return true
    }
    this.inFlight++
    this.open.add(res)
    // A response closes once: a plain listener, not a once-wrapper.
    res.on("close", () => {
      this.inFlight--
      this.open.delete(res)
      if (this.inFlight === 0) for (const notify of this.idle) notify()
    })
    if (route !== undefined) {
      this.answeredInLane++
      serveInLane(this.lane!, route, req, res)
      return true
    }
    return super.emit(event, ...args)
  }

  /** From now on every new request is refused with 503; answers in flight close their connection when done. */
  drain(): void {
    this.draining = true
    this.closeIdleConnections()
    for (const res of this.open) if (!res.headersSent) res.setHeader("connection", "close")
  }

  /**
   * Answers 503 (shutting down) to every request in flight whose answer has not begun, so that none
   * is left without an answer when the process goes; their work is interrupted as their client's
   * connection closes (the lane) or when the server stops. Returns how many were answered.
   */
  refuseUnanswered(): number {
    let answered = 0
    for (const res of this.open) {
      if (res.headersSent || res.writableEnded || res.destroyed) continue
      refuse(res.req, res)
      answered++
    }
    return answered
  }

  /** Resolves when no request is in flight, or after `ms` (false then). */
  settled(ms: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer)
        this.idle.delete(notify)
        resolve(value)
      }
      const notify = () => done(true)
      const timer = setTimeout(() => done(false), Math.max(0, ms))
      this.idle.add(notify)
    })
  }
}
