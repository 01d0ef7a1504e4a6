/**
 * Failures of a real upstream over loopback: retries with backoff before the
 * first byte (429 with Retry-After, 5xx, dropped connections, connect
 * timeouts) and never after it; mid-stream drops and error events reported
 * as UpstreamError, never a silent end; connect, first-token and total
 * deadlines; and the retry schedule's decisions.
 */
import { Duration, Effect, Pull, Random, Schedule, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { OpenAiUpstream } from "../../core/backends/openai/OpenAiUpstream.ts"
import { MAX_BACKOFF_MS, MAX_RETRY_AFTER_MS, retrySchedule } from "../../core/backends/openai/RetryPolicy.ts"
import { rateLimitResetMs, retryAfterMs } from "../../core/backends/RetryAfter.ts"
import type { ChatChunk } from "../../core/chat/ChatCompletion.ts"
import type { ChatRequest } from "../../core/chat/ChatRequest.ts"
import { UpstreamClient, UpstreamError, type UpstreamTarget } from "../../core/chat/Upstream.ts"
import { chatRequest, type MockUpstream, type MockUpstreamOptions, mockTarget, startMockUpstream } from "../support/mockUpstream.ts"

const withUpstream = async <A>(options: MockUpstreamOptions, f: (upstream: MockUpstream) => Promise<A>): Promise<A> => {
  const upstream = await startMockUpstream(options)
  try {
    return await f(upstream)
  } finally {
    await upstream.close()
  }
}

const provide = <A, E>(effect: Effect.Effect<A, E, UpstreamClient>) => Effect.provide(effect, OpenAiUpstream.layerFetch)
const complete = (target: UpstreamTarget, request: ChatRequest = chatRequest()) =>
  Effect.runPromise(provide(Effect.flatMap(Effect.service(UpstreamClient), (c) => c.complete(target, request))))
const completeError = (target: UpstreamTarget, request: ChatRequest = chatRequest()) =>
  Effect.runPromise(provide(Effect.flip(Effect.flatMap(Effect.service(UpstreamClient), (c) => c.complete(target, request)))))

/** Runs a stream to its end; returns the chunks that arrived and the error that ended it, if any. */
const consume = async (target: UpstreamTarget, request: ChatRequest = chatRequest({ stream: true })) => {
  const chunks: Array<ChatChunk> = []
  const program = Effect.flatMap(Effect.service(UpstreamClient), (c) =>
    Stream.runForEach(c.stream(target, request), (chunk) => Effect.sync(() => chunks.push(chunk))))
  const error = await Effect.runPromise(provide(program.pipe(Effect.flip, Effect.orElseSucceed(() => undefined))))
  return { chunks, error: error as UpstreamError | undefined }
}
const text = (chunks: ReadonlyArray<ChatChunk>) => chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? "")).join("")

describe("retries before the first byte", () => {
  it("retries a 429 after its Retry-After, then answers", () =>
    withUpstream({ script: [{ status: 429, retryAfter: "0" }, { content: "after the 429" }] }, async (upstream) => {
      const result = await complete(mockTarget(upstream))
      expect(result.choices[0]!.message.content).toBe("after the 429")
      expect(upstream.chatRequests()).toBe(2)
    }))

  it("retries 500 and 503 with backoff, then answers", () =>
    withUpstream({ script: [{ status: 500 }, { status: 503 }, { content: "third time" }] }, async (upstream) => {
      const result = await complete(mockTarget(upstream, { retries: { max: 2, baseDelayMs: 20 } }))
      expect(result.choices[0]!.message.content).toBe("third time")
      expect(upstream.chatRequests()).toBe(3)
    }))

  it("gives up after retries.max retries with the last status", () =>
    withUpstream({ defaultScenario: { status: 502, errorMessage: "bad gateway upstream" } }, async (upstream) => {
      const error = await completeError(mockTarget(upstream, { retries: { max: 3, baseDelayMs: 5 } }))
      expect(error).toBeInstanceOf(UpstreamError)
      expect(error).toMatchObject({ kind: "status", status: 502, beforeFirstByte: true, target: "mock" })
      expect(error.message).toContain("bad gateway upstream")
      expect(upstream.chatRequests()).toBe(4)
    }))

  it("does not wait out an absurd Retry-After: the error carries it at once", () =>
    withUpstream({ defaultScenario: { status: 429, retryAfter: "3600" } }, async (upstream) => {
      const error = await completeError(mockTarget(upstream))
      expect(error).toMatchObject({ kind: "status", status: 429, retryAfterSeconds: 3600, beforeFirstByte: true })
      expect(upstream.chatRequests()).toBe(1)
    }))

  it("reads Retry-After as an HTTP date", () =>
    withUpstream({ script: [{ status: 429, retryAfter: new Date(Date.now() - 1000).toUTCString() }, { content: "ok" }] }, async (upstream) => {
      await complete(mockTarget(upstream))
      expect(upstream.chatRequests()).toBe(2)
    }))

  it("does not retry a 400 or a refused n", () =>
    withUpstream({ byModel: { "bad": { status: 400, errorMessage: "messages: field required" }, "one-choice": { supportsN: false } } }, async (upstream) => {
      const bad = await completeError(mockTarget(upstream, { model: "bad" }))
      expect(bad).toMatchObject({ kind: "status", status: 400 })
      expect(bad.message).toContain("messages: field required")
      const n = await completeError(mockTarget(upstream, { model: "one-choice" }), chatRequest({ n: 2 }))
      expect(n).toMatchObject({ kind: "status", status: 400 })
      expect(n.message).toContain("Only one completion choice is allowed")
      expect(upstream.chatRequests()).toBe(2)
    }))

  it("retries a connection dropped before the headers", () =>
    withUpstream({ script: [{ dropBeforeHeaders: true }, { content: "reconnected" }] }, async (upstream) => {
      const result = await complete(mockTarget(upstream))
      expect(result.choices[0]!.message.content).toBe("reconnected")
      expect(upstream.chatRequests()).toBe(2)
    }))

  it("retries a stream whose first try answered 500", () =>
    withUpstream({ script: [{ status: 500 }, { dropBeforeHeaders: true }, { content: "streamed at last" }] }, async (upstream) => {
      const { chunks, error } = await consume(mockTarget(upstream))
      expect(error).toBeUndefined()
      expect(text(chunks)).toBe("streamed at last")
      expect(upstream.chatRequests()).toBe(3)
    }))

  it("retries a connect timeout, aborting the request that timed out", () =>
    withUpstream({ script: [{ headersDelayMs: 5_000 }, { content: "fast this time" }] }, async (upstream) => {
      const target = mockTarget(upstream, { timeouts: { connectMs: 300, firstTokenMs: 10_000, totalMs: 30_000 } })
      const { chunks, error } = await consume(target)
      expect(error).toBeUndefined()
      expect(text(chunks)).toBe("fast this time")
      expect(upstream.chatRequests()).toBe(2)
      const first = await upstream.waitForClose(0)
      expect(first.completed).toBe(false)
    }))
})

describe("no retry after the first byte", () => {
  it("a stream dropped mid-way fails with beforeFirstByte false after one request", () =>
    withUpstream({ defaultScenario: { content: "one two three four five six", dropAfterChunks: 4 } }, async (upstream) => {
      const { chunks, error } = await consume(mockTarget(upstream, { retries: { max: 3, baseDelayMs: 5 } }))
      expect(error).toBeInstanceOf(UpstreamError)
      expect(error).toMatchObject({ kind: "stream", beforeFirstByte: false })
      expect(error!.message).toContain("broke mid-stream")
      expect(text(chunks)).toBe("one two three ")
      expect(upstream.chatRequests()).toBe(1)
    }))

  it("an error event mid-stream fails the stream with its message, after the chunks before it", () =>
    withUpstream({
      defaultScenario: { content: "alpha beta gamma delta", errorEventAfterChunks: 3, errorEvent: { message: "CUDA out of memory", code: 500 } }
    }, async (upstream) => {
      const { chunks, error } = await consume(mockTarget(upstream))
      expect(error).toMatchObject({ kind: "stream", status: 500, beforeFirstByte: false })
      expect(error!.message).toContain("CUDA out of memory")
      expect(text(chunks)).toBe("alpha beta ")
      expect(upstream.chatRequests()).toBe(1)
    }))

  it("an error event before any chunk is not an answer: beforeFirstByte stays true", () =>
    withUpstream({ defaultScenario: { errorEventAfterChunks: 0, errorEvent: { message: "model overloaded" } } }, async (upstream) => {
      const { chunks, error } = await consume(mockTarget(upstream))
      expect(chunks).toEqual([])
      expect(error).toMatchObject({ kind: "stream", beforeFirstByte: true })
      expect(error!.message).toContain("model overloaded")
    }))

  it("a whole answer cut mid-body fails as a broken stream", () =>
    withUpstream({ defaultScenario: { content: "a fairly long answer that gets cut", dropAfterChunks: 1 } }, async (upstream) => {
      const error = await completeError(mockTarget(upstream))
      expect(error).toMatchObject({ kind: "stream" })
      expect(upstream.chatRequests()).toBe(1)
    }))
})

describe("deadlines", () => {
  const timeouts = (connectMs: number, firstTokenMs: number, totalMs: number) => ({ connectMs, firstTokenMs, totalMs })
  const noRetry = { max: 0, baseDelayMs: 1 }

  it("connect: no response headers in time", () =>
    withUpstream({ defaultScenario: { headersDelayMs: 5_000 } }, async (upstream) => {
      const { error } = await consume(mockTarget(upstream, { timeouts: timeouts(200, 10_000, 30_000), retries: noRetry }))
      expect(error).toMatchObject({ kind: "timeout", beforeFirstByte: true })
      expect(error!.message).toContain("connect timeout")
    }))

  it("first token: headers came, no event did (keep-alive comments do not count)", () =>
    withUpstream({ defaultScenario: { keepAliveComments: 2, firstChunkDelayMs: 5_000 } }, async (upstream) => {
      const { error } = await consume(mockTarget(upstream, { timeouts: timeouts(5_000, 300, 30_000), retries: noRetry }))
      expect(error).toMatchObject({ kind: "timeout", beforeFirstByte: true })
      expect(error!.message).toContain("first-token timeout")
    }))

  it("first token, whole answers: the body did not come in time", () =>
    withUpstream({ defaultScenario: { headersDelayMs: 5_000 } }, async (upstream) => {
      const error = await completeError(mockTarget(upstream, { timeouts: timeouts(100, 300, 30_000), retries: noRetry }))
      expect(error).toMatchObject({ kind: "timeout", beforeFirstByte: true })
      expect(error.message).toContain("first-token timeout")
    }))

  it("total: a stream that stalls after its first chunks fails with beforeFirstByte false", () =>
    withUpstream({ defaultScenario: { content: "a b c d e f", stallAfterChunks: 3 } }, async (upstream) => {
      const { chunks, error } = await consume(mockTarget(upstream, { timeouts: timeouts(5_000, 5_000, 600) }))
      expect(error).toMatchObject({ kind: "timeout", beforeFirstByte: false })
      expect(error!.message).toContain("total timeout")
      expect(text(chunks)).toBe("a b ")
      expect(upstream.chatRequests()).toBe(1)
      const request = await upstream.waitForClose(0)
      expect(request.completed).toBe(false)
    }))

  it("total: a stream that never finishes is cut at the deadline, never left hanging", () =>
    withUpstream({ defaultScenario: { content: "tick ".repeat(1_000), chunkDelayMs: 20 } }, async (upstream) => {
      const { chunks, error } = await consume(mockTarget(upstream, { timeouts: timeouts(5_000, 5_000, 500) }))
      expect(error).toMatchObject({ kind: "timeout", beforeFirstByte: false })
      expect(chunks.length).toBeGreaterThan(0)
    }))

  it("total, streams: covers the retries too", () =>
    withUpstream({ defaultScenario: { status: 503, retryAfter: "0.2" } }, async (upstream) => {
      const started = Date.now()
      const { error } = await consume(mockTarget(upstream, { timeouts: timeouts(5_000, 5_000, 700), retries: { max: 100, baseDelayMs: 200 } }))
      expect(["timeout", "status"]).toContain(error!.kind)
      expect(upstream.chatRequests()).toBeLessThan(10)
      expect(Date.now() - started).toBeLessThan(3_000)
    }))

  // A total deadline nearer than the connect or first-token timeout ends that wait, as the total's timeout.
  for (const [wait, scenario] of [["the response head", { headersDelayMs: 5_000 }], ["the first token", { firstChunkDelayMs: 5_000 }]] as const) {
    it(`total before ${wait}: the deadline ends the wait and the request`, () =>
      withUpstream({ defaultScenario: scenario }, async (upstream) => {
        const started = Date.now()
        const { error } = await consume(mockTarget(upstream, { timeouts: timeouts(5_000, 10_000, 300), retries: noRetry }))
        expect(error).toMatchObject({ kind: "timeout", beforeFirstByte: true })
        expect(error!.message).toContain("total timeout")
        expect(Date.now() - started).toBeLessThan(3_000)
        expect((await upstream.waitForClose(0)).completed).toBe(false)
      }))
  }

  it("total, whole answers: covers the retries too", () =>
    withUpstream({ defaultScenario: { status: 503, retryAfter: "0.2" } }, async (upstream) => {
      const error = await completeError(mockTarget(upstream, { timeouts: timeouts(5_000, 5_000, 700), retries: { max: 100, baseDelayMs: 200 } }))
      // Either the deadline cut the last try or the policy saw no time left for another: never 100 retries.
      expect(["timeout", "status"]).toContain(error.kind)
      expect(upstream.chatRequests()).toBeLessThan(10)
    }))
})

describe("retry policy", () => {
  const error = (fields: Partial<ConstructorParameters<typeof UpstreamError>[0]>) =>
    new UpstreamError({ target: "t", kind: "status", status: 500, message: "m", beforeFirstByte: true, ...fields })
  const retries = { max: 3, baseDelayMs: 100 }

  /** The waits the schedule decides for these failures in turn, at clock 0 (undefined: give up), with `random` fixed. */
  const waits = (failures: ReadonlyArray<UpstreamError>, options: { deadlineMs?: number; random?: number; max?: number } = {}) =>
    Effect.runSync(Effect.gen(function*() {
      const step = yield* Schedule.toStep(retrySchedule({ ...retries, max: options.max ?? retries.max }, options.deadlineMs ?? 10_000))
      const out: Array<number | undefined> = []
      for (const failure of failures) {
        out.push(yield* step(0, failure).pipe(
          Effect.map(([, delay]) => Math.round(Duration.toMillis(delay))),
          Pull.catchDone(() => Effect.succeed(undefined))
        ))
      }
      return out
    }).pipe(Effect.provideService(Random.Random, { nextDoubleUnsafe: () => options.random ?? 0.5, nextIntUnsafe: () => 0 })))

  it("backs off exponentially, capped, with jitter of 0.8 to 1.2", () => {
    expect(waits([error({}), error({}), error({})])).toEqual([100, 200, 400])
    expect(waits([error({}), error({})], { random: 0 })).toEqual([80, 160])
    expect(waits([error({}), error({})], { random: 1 })).toEqual([120, 240])
    const many = Array.from({ length: 20 }, () => error({}))
    expect(waits(many, { max: 20, deadlineMs: 1e9 }).at(-1)).toBe(MAX_BACKOFF_MS)
  })

  it("retries only what isRetryable accepts, within max and the time left", () => {
    expect(waits([error({ status: 429 })])).toEqual([100])
    expect(waits([error({ kind: "connect", status: undefined })])).toEqual([100])
    expect(waits([error({ kind: "timeout", status: undefined })])).toEqual([100])
    expect(waits([error({ status: 400 })])).toEqual([undefined])
    expect(waits([error({ kind: "stream", status: undefined })])).toEqual([undefined])
    expect(waits([error({ kind: "protocol", status: undefined })])).toEqual([undefined])
    expect(waits([error({ beforeFirstByte: false })])).toEqual([undefined])
    expect(waits([error({}), error({}), error({}), error({})])).toEqual([100, 200, 400, undefined])
    expect(waits([error({})], { max: 0 })).toEqual([undefined])
    expect(waits([error({})], { deadlineMs: 40 })).toEqual([undefined])
  })

  it("honours a sane Retry-After and refuses an absurd one", () => {
    expect(waits([error({ status: 429, retryAfterSeconds: 2 })])).toEqual([2_000])
    expect(waits([error({ status: 429, retryAfterSeconds: MAX_RETRY_AFTER_MS / 1000 + 1 })], { deadlineMs: 1e9 })).toEqual([undefined])
    expect(waits([error({ status: 429, retryAfterSeconds: 20 })])).toEqual([undefined])
  })

  it("reads retry-after-ms, then Retry-After as RFC 9110 has it: delay-seconds or an HTTP-date in its three formats", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    expect(retryAfterMs({ "retry-after-ms": "250" }, now)).toBe(250)
    expect(retryAfterMs({ "retry-after-ms": "250", "retry-after": "3" }, now)).toBe(250)
    expect(retryAfterMs({ "retry-after": "3" }, now)).toBe(3_000)
    expect(retryAfterMs({ "retry-after": " 120 " }, now)).toBe(120_000)
    expect(retryAfterMs({ "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }, now)).toBe(5_000)
    expect(retryAfterMs({ "retry-after": "Thursday, 01-Jan-26 00:00:07 GMT" }, now)).toBe(7_000)
    // asctime carries no zone and is UTC all the same, whatever the process's time zone.
    expect(retryAfterMs({ "retry-after": "Thu Jan  1 00:00:09 2026" }, now)).toBe(9_000)
    expect(retryAfterMs({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }, now)).toBe(0)
    for (const unreadable of ["soon", "Tomorrow 5", "1 2", "-3", "1.5", "2026-01-01T00:00:05Z", ""]) {
      expect(retryAfterMs({ "retry-after": unreadable }, now), unreadable).toBeUndefined()
    }
    expect(retryAfterMs({ "retry-after-ms": "later" }, now)).toBeUndefined()
    expect(retryAfterMs({}, now)).toBeUndefined()
  })

  it("reads the reset of the exhausted rate-limit window, one value per window (Brave's lists)", () => {
    expect(rateLimitResetMs({ "x-ratelimit-remaining": "0, 1988", "x-ratelimit-reset": "1, 1419704" })).toBe(1_000)
    expect(rateLimitResetMs({ "x-ratelimit-remaining": "0, 0", "x-ratelimit-reset": "1, 1419704" })).toBe(1_419_704_000)
    expect(rateLimitResetMs({ "x-ratelimit-reset": "30, 5" })).toBe(5_000)
    expect(rateLimitResetMs({ "x-ratelimit-remaining": "3", "x-ratelimit-reset": "30" })).toBeUndefined()
    expect(rateLimitResetMs({})).toBeUndefined()
  })
})
