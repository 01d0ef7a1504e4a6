/**
 * Cancellation reaches the upstream: interrupting a stream (a client that
 * disconnected), a consumer that stops reading, or interrupting a whole
 * completion while the upstream is still thinking closes the upstream HTTP
 * connection within one second, which the mock upstream sees on its socket;
 * through fetch and through Undici alike. And a stream that ends as it should
 * (with [DONE]) leaves its connection open for the next request.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Deferred, Effect, Fiber, Layer, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as UndiciHttpClient from "../../adapters/node/undiciHttpClient.ts"
import { OpenAiUpstream } from "../../core/backends/openai/OpenAiUpstream.ts"
import type { ChatChunk } from "../../core/chat/ChatCompletion.ts"
import { UpstreamClient } from "../../core/chat/Upstream.ts"
import { chatRequest, type MockUpstream, mockTarget, startMockUpstream } from "../support/mockUpstream.ts"

let upstream: MockUpstream

beforeAll(async () => {
  upstream = await startMockUpstream({
    byModel: {
      endless: { content: "tick ".repeat(5_000), chunkDelayMs: 20 },
      thinking: { headersDelayMs: 30_000 },
      "slow-first": { firstChunkDelayMs: 30_000 },
      paced: { content: "one two three four", chunkDelayMs: 5 },
      backoff: { status: 503, retryAfter: "30" }
    }
  })
})
afterAll(() => upstream.close())

/** Both HTTP clients the adapters use: fetch (Deno, the library) and Undici's dispatch (the Node server's, undiciHttpClient.ts). */
const clients = [
  { name: "fetch", layer: OpenAiUpstream.layerFetch },
  { name: "Undici", layer: OpenAiUpstream.layer.pipe(Layer.provide(UndiciHttpClient.layer)) }
]

/** Waits for the mock to see request `index` close; returns how long after `since` it closed. */
const closedWithin = async (index: number, since: number) => {
  const request = await upstream.waitForClose(index, 5_000)
  return { request, afterMs: request.closedAt! - since }
}

/** The recorded index of the next request the mock receives. */
const nextIndex = () => upstream.requests.length

describe.each(clients)("cancellation closes the upstream connection ($name)", ({ layer }) => {
  const provide = <A, E>(effect: Effect.Effect<A, E, UpstreamClient>) => Effect.provide(effect, layer)

  it("interrupting a stream mid-way closes the upstream connection within one second", async () => {
    const index = nextIndex()
    const received: Array<ChatChunk> = []
    const three = Deferred.makeUnsafe<void>()
    const program = Effect.flatMap(Effect.service(UpstreamClient), (client) =>
      Stream.runForEach(client.stream(mockTarget(upstream, { model: "endless" }), chatRequest({ stream: true })), (chunk) =>
        Effect.sync(() => {
          received.push(chunk)
          if (received.length === 3) Deferred.doneUnsafe(three, Effect.void)
        })))
    const fiber = Effect.runFork(provide(program))
    await Effect.runPromise(Deferred.await(three))
    const cancelledAt = performance.now()
    await Effect.runPromise(Fiber.interrupt(fiber))
    const { request, afterMs } = await closedWithin(index, cancelledAt)
    expect(afterMs).toBeLessThan(1_000)
    expect(request.completed).toBe(false)
    // The TCP connection itself is gone, not parked in a pool with the answer still running.
    const connection = upstream.connections[request.connection]!
    expect(connection.closedAt).toBeDefined()
    expect(connection.closedAt! - cancelledAt).toBeLessThan(1_000)
    // Nothing was written after the cancel beyond what was in flight.
    const eventsAtClose = request.events
    await new Promise((r) => setTimeout(r, 200))
    expect(request.events).toBe(eventsAtClose)
  })

  it("a consumer that stops reading (take) ends the upstream request", async () => {
    const index = nextIndex()
    const program = Effect.flatMap(Effect.service(UpstreamClient), (client) =>
      Stream.runCollect(Stream.take(client.stream(mockTarget(upstream, { model: "endless" }), chatRequest({ stream: true })), 4)))
    const chunks = await Effect.runPromise(provide(program))
    const doneAt = performance.now()
    expect(chunks).toHaveLength(4)
    const { request, afterMs } = await closedWithin(index, doneAt)
    expect(afterMs).toBeLessThan(1_000)
    expect(request.completed).toBe(false)
  })

  it("interrupting a stream before its first event closes the upstream connection", async () => {
    const index = nextIndex()
    const program = Effect.flatMap(Effect.service(UpstreamClient), (client) =>
      Stream.runDrain(client.stream(mockTarget(upstream, { model: "slow-first" }), chatRequest({ stream: true }))))
    const fiber = Effect.runFork(provide(program))
    await upstream.waitForRequest(index)
    const cancelledAt = performance.now()
    await Effect.runPromise(Fiber.interrupt(fiber))
    const { request, afterMs } = await closedWithin(index, cancelledAt)
    expect(afterMs).toBeLessThan(1_000)
    expect(request.completed).toBe(false)
  })

  it("interrupting a whole completion while the upstream thinks closes the connection within one second", async () => {
    const index = nextIndex()
    const program = Effect.flatMap(Effect.service(UpstreamClient), (client) =>
      client.complete(mockTarget(upstream, { model: "thinking" }), chatRequest()))
    const fiber = Effect.runFork(provide(program))
    await upstream.waitForRequest(index)
    const cancelledAt = performance.now()
    await Effect.runPromise(Fiber.interrupt(fiber))
    const { request, afterMs } = await closedWithin(index, cancelledAt)
    expect(afterMs).toBeLessThan(1_000)
    expect(request.completed).toBe(false)
    expect(upstream.connections[request.connection]!.closedAt).toBeDefined()
  })

  it("interrupting during a retry wait sends no further request", async () => {
    const index = nextIndex()
    const before = upstream.chatRequests()
    const target = mockTarget(upstream, { model: "backoff", retries: { max: 5, baseDelayMs: 10 } })
    // Retry-After 30 s is within MAX_RETRY_AFTER_MS and the 60 s total, so the client waits.
    const program = Effect.flatMap(Effect.service(UpstreamClient), (client) =>
      client.complete({ ...target, timeouts: { ...target.timeouts, totalMs: 60_000 } }, chatRequest()))
    const fiber = Effect.runFork(provide(program))
    // The 503 has been answered; the client is now waiting out Retry-After.
    await upstream.waitForClose(index)
    await Effect.runPromise(Fiber.interrupt(fiber))
    await new Promise((r) => setTimeout(r, 200))
    expect(upstream.chatRequests() - before).toBe(1)
  })

  // An upstream request aborted after [DONE] but before its body's end closed the connection,
  // and every stream after it paid a new one (a TLS handshake, over the internet).
  for (const model of ["mock-model", "paced"]) {
    it(`streams that end with [DONE] leave their connections open for the next ones (${model === "paced" ? "events paced" : "the answer in one write"})`, async () => {
      const index = nextIndex()
      const drained = Effect.flatMap(Effect.service(UpstreamClient), (client) =>
        Stream.runCollect(client.stream(mockTarget(upstream, { model }), chatRequest({ stream: true }))))
      // One client (one provide) for the six streams, one after another, as the server has.
      const answers = await Effect.runPromise(provide(Effect.all(Array.from({ length: 6 }, () => drained))))
      const expected = model === "paced" ? "one two three four" : "Hello from the mock upstream."
      for (const chunks of answers) expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(expected)
      const requests = upstream.requests.slice(index, index + 6)
      expect(requests.map((r) => r.completed)).toEqual(Array(6).fill(true))
      // A connection comes back to the pool a moment after its stream ends: the next stream may open
      // a second one (two here when idle; a busy machine may need a third). One per stream is the fault.
      const used = new Set(requests.map((r) => r.connection))
      expect(used.size).toBeLessThanOrEqual(3)
      for (const connection of used) expect(upstream.connections[connection]!.closedAt).toBeUndefined()
    })
  }

  it("a stream whose body stays open after [DONE] still ends at once", async () => {
    // A server that sends [DONE] and never ends its body: the stream must not wait on it.
    const lingering: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`)
    })
    await new Promise<void>((resolve) => lingering.listen(0, "127.0.0.1", resolve))
    try {
      const target = mockTarget({ url: `http://127.0.0.1:${(lingering.address() as AddressInfo).port}/v1` })
      const started = performance.now()
      const chunks = await Effect.runPromise(provide(Effect.flatMap(Effect.service(UpstreamClient), (client) =>
        Stream.runCollect(client.stream(target, chatRequest({ stream: true }))))))
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("hi")
      expect(performance.now() - started).toBeLessThan(1_000)
    } finally {
      lingering.closeAllConnections()
      lingering.close()
    }
  })
})
