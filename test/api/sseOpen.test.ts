/**
 * openSse (core/api/ChatSse.ts) on real Effect streams: what decides the answer (the first
 * event, or the silence of a slow first token), keep-alive comments, and a shutdown before and
 * during a stream. The HTTP side of the same rules is in streaming.test.ts, chatFaults.test.ts
 * and lifecycle.e2e.test.ts.
 */
import { Effect, Exit, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { ApiError, statusOf } from "../../core/api/ApiError.ts"
import type { ChatCompletionChunk } from "../../core/chat/ChatCompletion.ts"
import { DONE_EVENT, KEEP_ALIVE_EVENT, openSse, type SequencedEvent } from "../../core/api/ChatSse.ts"
import { makeStreamsEnd, type StreamsEnd } from "../../core/api/ServerOptions.ts"

const chunk = (content: string): SequencedEvent => ({
  _tag: "Chunk",
  chunk: { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content }, finish_reason: null }] } as ChatCompletionChunk
})
const failure = new ApiError({ kind: "upstream", message: "the upstream answered 500", param: null })

/** The body's text, read to its end. */
const bodyText = (body: Stream.Stream<Uint8Array>) =>
  Stream.runFold(body, () => "", (text, bytes) => text + new TextDecoder().decode(bytes))

const open = (events: Stream.Stream<SequencedEvent>, keepAliveMs: number, end: StreamsEnd = makeStreamsEnd()) =>
  openSse(events, `${keepAliveMs} millis`, end)

describe("openSse", () => {
  it("frames the events and ends with [DONE]", async () => {
    const opened = await Effect.runPromise(open(Stream.make(chunk("a"), chunk("b")), 10_000))
    expect(opened._tag).toBe("Open")
    if (opened._tag !== "Open") return
    const text = await Effect.runPromise(bodyText(opened.body))
    const frames = text.split("\n\n").filter((f) => f !== "")
    expect(frames.map((f) => (f.startsWith("data: {") ? JSON.parse(f.slice(6)).choices[0].delta.content : f))).toEqual(["a", "b", "data: [DONE]"])
    expect(text.endsWith(DONE_EVENT)).toBe(true)
  })

  it("answers an empty stream with [DONE] alone", async () => {
    const opened = await Effect.runPromise(open(Stream.empty, 10_000))
    if (opened._tag !== "Open") throw new Error("expected an open stream")
    expect(await Effect.runPromise(bodyText(opened.body))).toBe(DONE_EVENT)
  })

  it("runs the events no further ahead of the body than one array", async () => {
    let pulled = 0
    const source = Stream.fromIterable(Array.from({ length: 100 }, (_, i) => i)).pipe(
      Stream.rechunk(1),
      Stream.map((i) => {
        pulled++
        return chunk(String(i))
      })
    )
    const opened = await Effect.runPromise(open(source, 10_000))
    if (opened._tag !== "Open") throw new Error("expected an open stream")
    // The first array (taken to open), one handed over, one waiting to be.
    expect(pulled).toBeLessThanOrEqual(3)
    const text = await Effect.runPromise(bodyText(opened.body))
    const contents = text.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)).choices[0].delta.content)
    expect(contents).toEqual(Array.from({ length: 100 }, (_, i) => String(i)))
    expect(text.endsWith(DONE_EVENT)).toBe(true)
  })

  it("refuses with the error when the first event is a failure", async () => {
    const opened = await Effect.runPromise(open(Stream.make({ _tag: "Error", error: failure } as SequencedEvent), 10_000))
    expect(opened).toEqual({ _tag: "Failed", error: failure })
  })

  it("opens on a keep-alive when the first token is slower than the keep-alive interval, and sends it first", async () => {
    let produced = false
    const slow = Stream.fromEffect(Effect.sleep("150 millis").pipe(Effect.map(() => {
      produced = true
      return chunk("late")
    })))
    const opened = await Effect.runPromise(open(slow, 40))
    // Opened at the first silence, before the token.
    expect(produced).toBe(false)
    expect(opened._tag).toBe("Open")
    if (opened._tag !== "Open") return
    const text = await Effect.runPromise(bodyText(opened.body))
    expect(text.startsWith(KEEP_ALIVE_EVENT)).toBe(true)
    expect(text.split(KEEP_ALIVE_EVENT).length - 1).toBeGreaterThanOrEqual(2)
    expect(text).toContain("\"late\"")
    expect(text.endsWith(DONE_EVENT)).toBe(true)
  })

  it("sends no keep-alive while events keep coming faster than the interval", async () => {
    const steady = Stream.fromIterable([1, 2, 3, 4, 5]).pipe(Stream.mapEffect((i) => Effect.as(Effect.sleep("20 millis"), chunk(String(i)))))
    const opened = await Effect.runPromise(open(steady, 80))
    if (opened._tag !== "Open") throw new Error("expected an open stream")
    expect(await Effect.runPromise(bodyText(opened.body))).not.toContain(KEEP_ALIVE_EVENT)
  })

  it("ends an open stream at a shutdown with the shutdown error and [DONE], and interrupts the backend", async () => {
    const result = await Effect.runPromise(Effect.gen(function*() {
      const end = makeStreamsEnd()
      let interrupted = false
      const endless = Stream.concat(Stream.make(chunk("first")), Stream.never).pipe(Stream.onExit((exit) => Effect.sync(() => { interrupted = Exit.hasInterrupts(exit) })))
      const opened = yield* open(endless, 10_000, end)
      if (opened._tag !== "Open") return yield* Effect.die("expected an open stream")
      yield* Effect.forkChild(Effect.andThen(Effect.sleep("30 millis"), Effect.sync(end.end)))
      const text = yield* bodyText(opened.body)
      return { text, interrupted }
    }))
    const frames = result.text.split("\n\n").filter((f) => f !== "")
    expect(frames.at(-1)).toBe("data: [DONE]")
    expect(JSON.parse(frames.at(-2)!.slice(6)).error.code).toBe("server_shutting_down")
    expect(result.text).toContain("\"first\"")
    expect(result.interrupted).toBe(true)
  })

  it("refuses with 503's error when the shutdown comes before the first event", async () => {
    const opened = await Effect.runPromise(Effect.gen(function*() {
      const end = makeStreamsEnd()
      end.end()
      return yield* open(Stream.never, 10_000, end)
    }))
    expect(opened._tag).toBe("Failed")
    if (opened._tag !== "Failed") return
    expect(opened.error.kind).toBe("unavailable")
    expect(statusOf[opened.error.kind]).toBe(503)
    expect(opened.error.code).toBe("server_shutting_down")
  })
})
