/**
 * The Node platform's HttpClient (adapters/node/undiciHttpClient.ts) against a real node:http
 * server on loopback: status, headers, cookies and bodies read whole and as streams; request
 * bodies of every kind; a slow reader pausing the connection; interruption, an early-closed
 * stream and a response collected unread closing the connection; transport and body failures as
 * HttpClientError's reasons. Every test runs twice: traced (through Effect's HttpClient.make) and
 * untraced (propagation off, the server's default, sent without make's response wrapper).
 */
import { once } from "node:events"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Cause, Context, Effect, Exit, Fiber, Layer, Scope, Stream, Tracer } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as UndiciHttpClient from "../../adapters/node/undiciHttpClient.ts"

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void
const handlers = new Map<string, Handler>()
/** What the server saw of each path's last request: whether its connection closed before the answer finished. */
const seen = new Map<string, { closedEarly: boolean; closed: Promise<void> }>()
let server: Server
let base: string

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url!, "http://x").pathname
    let closedEarly = false
    const closed = new Promise<void>((done) =>
      res.once("close", () => {
        closedEarly = !res.writableFinished
        done()
      }))
    seen.set(path, {
      get closedEarly() {
        return closedEarly
      },
      closed
    })
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => handlers.get(path)!(req, res, Buffer.concat(chunks)))
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  server.close()
})

const scope = Effect.runSync(Scope.make())
const client = await Effect.runPromise(Layer.buildWithScope(UndiciHttpClient.layer, scope).pipe(Effect.map((context) => Context.get(context, HttpClient.HttpClient))))
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

/** `promise`, or a failure naming `what` after `ms`: a probe of the server never waits unbounded. */
const within = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${what}: nothing after ${ms} ms`)), ms)
    promise.then((value) => {
      clearTimeout(timer)
      done(value)
    }, (error) => {
      clearTimeout(timer)
      fail(error)
    })
  })

/** The server's record of the last request to `path`, once it has arrived. */
const arrived = (path: string) =>
  within((async () => {
    while (!seen.has(path)) await new Promise((r) => setTimeout(r, 5))
    return seen.get(path)!
  })(), 2_000, `a request to ${path}`)

/** Whether the tests under way send their requests untraced (trace propagation off). */
let untraced = false
const scopedRun = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.provideService(Effect.scoped(effect), Tracer.DisablePropagation, untraced)
const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(scopedRun(effect))
const runExit = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromiseExit(scopedRun(effect))

/** A full collection, for the test of a response collected unread (V8's gc, exposed at run time). */
setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as () => void
const reasonOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const error = Cause.findErrorOption(exit.cause)
  if (error._tag === "None") throw new Error(`expected an error, got ${Cause.pretty(exit.cause)}`)
  return (error.value as { reason: { _tag: string; cause?: { code?: string } } }).reason
}

describe.for([{ mode: "traced", off: false }, { mode: "untraced", off: true }])("the Node platform's HttpClient (Undici dispatch), $mode", ({ off }) => {
  beforeAll(() => {
    untraced = off
    seen.clear()
  })

  it("reads the status, headers, cookies and a JSON body; a body read twice is the same", async () => {
    handlers.set("/json", (_req, res) => {
      res.writeHead(201, { "content-type": "application/json", "x-answer": "42", "set-cookie": ["a=1; Path=/", "b=2"] })
      res.end(JSON.stringify({ hello: "wörld" }))
    })
    const result = await run(Effect.gen(function*() {
      const response = yield* client.get(`${base}/json#fragment`)
      return { status: response.status, header: response.headers["x-answer"], cookies: [...Object.keys(response.cookies.cookies)], url: response.url, json: yield* response.json, text: yield* response.text, again: yield* response.text }
    }))
    expect(result).toEqual({ status: 201, header: "42", cookies: ["a", "b"], url: `${base}/json`, json: { hello: "wörld" }, text: "{\"hello\":\"wörld\"}", again: "{\"hello\":\"wörld\"}" })
  })

  it("sends text, stream and form bodies with their headers", async () => {
    handlers.set("/echo", (req, res, body) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ method: req.method, type: req.headers["content-type"], body: body.toString("utf8") }))
    })
    const echo = (request: HttpClientRequest.HttpClientRequest) => run(Effect.flatMap(client.execute(request), (r) => r.json)) as Promise<{ method: string; type: string; body: string }>
    const text = await echo(HttpClientRequest.post(`${base}/echo`).pipe(HttpClientRequest.bodyText("{\"a\":1}", "application/json")))
    expect(text).toEqual({ method: "POST", type: "application/json", body: "{\"a\":1}" })
    const streamed = await echo(HttpClientRequest.put(`${base}/echo`).pipe(
      HttpClientRequest.bodyStream(Stream.make("one ", "two ", "three").pipe(Stream.map((s) => new TextEncoder().encode(s))), { contentType: "text/plain" })
    ))
    expect(streamed).toEqual({ method: "PUT", type: "text/plain", body: "one two three" })
    const form = new FormData()
    form.append("field", "value")
    const formed = await echo(HttpClientRequest.post(`${base}/echo`).pipe(HttpClientRequest.bodyFormData(form)))
    expect(formed.type).toMatch(/^multipart\/form-data; boundary=/)
    expect(formed.body).toContain("name=\"field\"")
    expect(formed.body).toContain("value")
  })

  it("reads a large body whole and as a stream, byte for byte", async () => {
    const big = Buffer.alloc(3 * 1024 * 1024)
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 10)) & 0xff
    handlers.set("/big", (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" })
      for (let at = 0; at < big.length; at += 100_000) res.write(big.subarray(at, at + 100_000))
      res.end()
    })
    const whole = await run(Effect.flatMap(client.get(`${base}/big`), (r) => r.arrayBuffer))
    expect(Buffer.from(whole).equals(big)).toBe(true)
    const parts = await run(Effect.flatMap(client.get(`${base}/big`), (r) => Stream.runCollect(r.stream)))
    expect(Buffer.concat([...parts]).equals(big)).toBe(true)
  })

  it("pauses the connection while a streamed body waits unread, and resumes when it is read", async () => {
    const piece = Buffer.alloc(64 * 1024, 7)
    const total = 64 * 1024 * 1024
    let written = 0
    handlers.set("/flood", (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" })
      const pump = () => {
        while (written < total) {
          written += piece.length
          if (!res.write(piece)) return res.once("drain", pump)
        }
        res.end()
      }
      pump()
    })
    const result = await run(Effect.gen(function*() {
      const response = yield* client.get(`${base}/flood`)
      yield* Effect.sleep(300)
      // Unpaused, loopback would have carried all 64 MiB into the client's buffer by now.
      const writtenWhileUnread = written
      let received = 0
      yield* Stream.runForEachArray(response.stream, (chunks) =>
        Effect.sync(() => {
          for (const chunk of chunks) received += chunk.length
        }))
      return { writtenWhileUnread, received }
    }))
    expect(result.writtenWhileUnread).toBeLessThan(total / 2)
    expect(result.received).toBe(total)
  })

  it("closes the connection when the request is interrupted before the headers", async () => {
    handlers.set("/slow-head", (_req, res) => {
      const timer = setTimeout(() => res.end("late"), 30_000)
      res.once("close", () => clearTimeout(timer))
    })
    const fiber = Effect.runFork(scopedRun(client.get(`${base}/slow-head`)))
    const request = await arrived("/slow-head")
    const interruptedAt = performance.now()
    await Effect.runPromise(Fiber.interrupt(fiber))
    await within(request.closed, 2_000, "the interrupted request's close")
    expect(performance.now() - interruptedAt).toBeLessThan(1_000)
    expect(request.closedEarly).toBe(true)
  })

  it("closes the connection when a streamed body is closed before it ended", async () => {
    handlers.set("/endless", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" })
      const timer = setInterval(() => res.write("tick\n"), 10)
      res.once("close", () => clearInterval(timer))
    })
    const first = await run(Effect.flatMap(client.get(`${base}/endless`), (r) => Stream.runCollect(Stream.take(r.stream, 2))))
    expect(first.length).toBe(2)
    const closedAt = performance.now()
    const request = await arrived("/endless")
    await within(request.closed, 2_000, "the closed stream's request")
    expect(performance.now() - closedAt).toBeLessThan(1_000)
    expect(request.closedEarly).toBe(true)
  })

  it("closes the connection when a streamed body is closed early, not only when the request's scope ends", async () => {
    // A scoped client's request is aborted by Effect only when its scope closes; the body's own close comes first.
    handlers.set("/endless-scoped", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" })
      const timer = setInterval(() => res.write("tick\n"), 10)
      res.once("close", () => clearInterval(timer))
    })
    const scoped = HttpClient.withScope(client)
    const closedInScope = await run(Effect.gen(function*() {
      const response = yield* scoped.get(`${base}/endless-scoped`)
      const first = yield* Stream.runCollect(Stream.take(response.stream, 2))
      expect(first.length).toBe(2)
      const request = yield* Effect.promise(() => arrived("/endless-scoped"))
      yield* Effect.promise(() => within(request.closed, 2_000, "the closed stream's request, its scope still open"))
      return request.closedEarly
    }))
    expect(closedInScope).toBe(true)
  })

  it("closes the connection when a body read whole is interrupted before it ended", async () => {
    handlers.set("/half-body", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" })
      res.write("the first half")
      const timer = setTimeout(() => res.end(" and the rest"), 30_000)
      res.once("close", () => clearTimeout(timer))
    })
    // Interrupted once the head is in and the whole read has begun, not while the request waits for its head.
    let headIn: () => void = () => {}
    const head = new Promise<void>((resolve) => {
      headIn = resolve
    })
    const fiber = Effect.runFork(scopedRun(Effect.flatMap(client.get(`${base}/half-body`), (r) => {
      headIn()
      return r.text
    })))
    const request = await arrived("/half-body")
    await within(head, 2_000, "the half body's head")
    await Effect.runPromise(Fiber.interrupt(fiber))
    await within(request.closed, 2_000, "the interrupted read's request")
    expect(request.closedEarly).toBe(true)
  })

  it("closes the connection of a response collected before its body was read", async () => {
    handlers.set("/never-read", (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" })
      // More than the client buffers unread, so the connection stays paused until someone reads or aborts.
      const piece = Buffer.alloc(64 * 1024, 1)
      const timer = setInterval(() => res.write(piece), 5)
      res.once("close", () => clearInterval(timer))
    })
    const status = await run(Effect.map(client.get(`${base}/never-read`), (r) => r.status))
    expect(status).toBe(200)
    const request = await arrived("/never-read")
    let closed = false
    void request.closed.then(() => {
      closed = true
    })
    // The registry's callback comes some time after the collection that found the response dead.
    for (let i = 0; i < 20 && !closed; i++) {
      collectGarbage()
      await new Promise((r) => setTimeout(r, 100))
    }
    await within(request.closed, 2_000, "the unread response's request")
    expect(request.closedEarly).toBe(true)
  })

  it("fails with a TransportError naming the cause when nothing listens", async () => {
    const idle = createServer()
    idle.listen(0, "127.0.0.1")
    await once(idle, "listening")
    const port = (idle.address() as AddressInfo).port
    idle.close()
    await once(idle, "close")
    const reason = reasonOf(await runExit(client.get(`http://127.0.0.1:${port}/`)))
    expect(reason._tag).toBe("TransportError")
    expect(reason.cause?.code).toBe("ECONNREFUSED")
  })

  it("fails a URL that does not parse with an InvalidUrlError, before anything is sent", async () => {
    const reason = reasonOf(await runExit(client.get("http://[not-a-host/chat")))
    expect(reason._tag).toBe("InvalidUrlError")
  })

  it("fails a body cut off mid-way with a DecodeError, read whole or as a stream", async () => {
    handlers.set("/cut", (req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": "1000" })
      res.write("only part of it")
      setTimeout(() => req.socket.destroy(), 20)
    })
    expect(reasonOf(await runExit(Effect.flatMap(client.get(`${base}/cut`), (r) => r.text)))._tag).toBe("DecodeError")
    expect(reasonOf(await runExit(Effect.flatMap(client.get(`${base}/cut`), (r) => Stream.runCollect(r.stream))))._tag).toBe("DecodeError")
  })

  it("does not hand over an upgraded connection: upgrade fails as it does over fetch", async () => {
    handlers.set("/plain", (_req, res) => res.end("ok"))
    const reason = reasonOf(await runExit(Effect.flatMap(client.get(`${base}/plain`), (r) => r.upgrade)))
    expect(reason._tag).toBe("StatusCodeError")
  })
})
