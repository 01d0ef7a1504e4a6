/**
 * Streamed chat on the wire: OpenAI chat.completion.chunk objects, usage on
 * the last chunk (and as an extra `choices: []` chunk when asked), a failure
 * as an error event, and always `data: [DONE]` at the end; keep-alive
 * comments during silences. ChunkSequencer is the one place that decides
 * what chunks a stream shows; SSE framing is a plain string step after it.
 * openSse serves every SSE answer of the API; each wire brings its framing (SseWire).
 */
import { Cause, Duration, Effect, Exit, Pull, Scope, Stream } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import type { ChatChunk, ChatCompletionChunk, ChunkChoice, GroundingReport, SearchResultItem, Usage } from "../chat/ChatCompletion.ts"
import { fromArrayPull, mapArrays, withEnd } from "../chat/ArrayStreams.ts"
import { ApiError, toChatErrorBody } from "./ApiError.ts"
import { EventHandoff } from "./EventHandoff.ts"
import type { StreamsEnd } from "./ServerOptions.ts"

export interface StreamMeta {
  readonly id: string
  readonly created: number
  readonly model: string
  /** stream_options.include_usage: add the usage-only chunk at the end. */
  readonly includeUsage: boolean
}

export const DONE_EVENT = "data: [DONE]\n\n"
export const KEEP_ALIVE_EVENT = ": keep-alive\n\n"

/**
 * Turns backend chunks into wire chunks. A chunk that finishes a choice is
 * held until the next chunk or the end, so that the last one can carry usage;
 * every other chunk goes out as soon as it is produced. The first delta of
 * each choice carries role "assistant", as OpenAI clients expect. A grounded
 * stream's search_results and periscope_grounding go on the last chunk
 * before [DONE] (the usage chunk when include_usage asks for one).
 */
export class ChunkSequencer {
  private readonly meta: StreamMeta
  private readonly roleSent = new Set<number>()
  private held: ReadonlyArray<ChunkChoice> | undefined
  private usage: Usage | undefined
  private searchResults: ReadonlyArray<SearchResultItem> | undefined
  private grounding: GroundingReport | undefined

  constructor(meta: StreamMeta) {
    this.meta = meta
  }

  /** Wire chunks for one backend chunk (none while a finishing chunk is held). */
  push(chunk: ChatChunk, out: Array<ChatCompletionChunk>): void {
    if (chunk.usage !== undefined) this.usage = chunk.usage
    if (chunk.search_results !== undefined) this.searchResults = chunk.search_results
    if (chunk.periscope_grounding !== undefined) this.grounding = chunk.periscope_grounding
    if (chunk.choices.length === 0) return
    const choices = this.withRoles(chunk.choices)
    this.flushHeld(false, out)
    if (choices.some((c) => c.finish_reason !== null)) this.held = choices
    else out.push(this.make(choices, undefined))
  }

  /** The chunks that end a successful stream. */
  end(out: Array<ChatCompletionChunk>): void {
    this.flushHeld(true, out)
    if (this.meta.includeUsage && this.usage !== undefined) out.push(this.make([], this.usage))
    if (this.searchResults === undefined && this.grounding === undefined) return
    const last = out.at(-1)
    const extras = {
      ...(this.searchResults === undefined ? {} : { search_results: this.searchResults }),
      ...(this.grounding === undefined ? {} : { periscope_grounding: this.grounding })
    }
    if (last === undefined) out.push({ ...this.make([], undefined), ...extras })
    else out[out.length - 1] = { ...last, ...extras }
  }

  /** What was held when a stream fails: it is still shown before the error. */
  flush(out: Array<ChatCompletionChunk>): void {
    this.flushHeld(false, out)
  }

  private flushHeld(last: boolean, out: Array<ChatCompletionChunk>): void {
    if (this.held === undefined) return
    out.push(this.make(this.held, last ? this.usage : undefined))
    this.held = undefined
  }

  private make(choices: ReadonlyArray<ChunkChoice>, usage: Usage | undefined): ChatCompletionChunk {
    const chunk = { id: this.meta.id, object: "chat.completion.chunk" as const, created: this.meta.created, model: this.meta.model, choices }
    return usage === undefined ? chunk : { ...chunk, usage }
  }

  private withRoles(choices: ReadonlyArray<ChunkChoice>): ReadonlyArray<ChunkChoice> {
    let out: Array<ChunkChoice> | undefined
    for (let i = 0; i < choices.length; i++) {
      const choice = choices[i]!
      if (this.roleSent.has(choice.index)) continue
      this.roleSent.add(choice.index)
      if (choice.delta.role === "assistant") continue
      out ??= choices.slice()
      out[i] = { ...choice, delta: { role: "assistant", ...choice.delta } }
    }
    return out ?? choices
  }
}

/** One element of a sequenced stream: a wire chunk, or the error that ended it. */
export type SequencedEvent =
  | { readonly _tag: "Chunk"; readonly chunk: ChatCompletionChunk }
  | { readonly _tag: "Error"; readonly error: ApiError }

/**
 * Backend chunks as wire chunks, ending with an Error event instead of a
 * failure. Interruption still propagates, so the backend is cancelled.
 */
export const sequenceChunks = <E>(
  chunks: Stream.Stream<ChatChunk, E>,
  meta: StreamMeta,
  toApiError: (error: E) => ApiError,
  onDefect: (cause: Cause.Cause<unknown>) => ApiError
): Stream.Stream<SequencedEvent> =>
  Stream.suspend(() => {
    const sequencer = new ChunkSequencer(meta)
    const asEvents = (out: Array<ChatCompletionChunk>): Array<SequencedEvent> => out.map((chunk) => ({ _tag: "Chunk", chunk }))
    // One step per pulled array of chunks (core/chat/ArrayStreams.ts).
    return mapArrays(chunks, (array) => {
      const out: Array<ChatCompletionChunk> = []
      for (let i = 0; i < array.length; i++) sequencer.push(array[i]!, out)
      return asEvents(out)
    }).pipe(
      (events) => withEnd(events, () => {
        const out: Array<ChatCompletionChunk> = []
        sequencer.end(out)
        return asEvents(out)
      }),
      Stream.catchCause((cause): Stream.Stream<SequencedEvent> => {
        if (Cause.hasInterruptsOnly(cause)) return Stream.failCause(cause as Cause.Cause<never>)
        const failure = Cause.findErrorOption(cause)
        const out: Array<ChatCompletionChunk> = []
        sequencer.flush(out)
        if (failure._tag === "Some") return Stream.fromArray([...asEvents(out), { _tag: "Error", error: toApiError(failure.value) }])
        // A defect: logged here, shown to the caller only as an internal error.
        return Stream.fromIterableEffect(
          Effect.as(Effect.logError("chat stream failed", cause), [...asEvents(out), { _tag: "Error" as const, error: onDefect(cause) }])
        )
      })
    )
  })

const encoder = new TextEncoder()

const frame = (event: SequencedEvent): string =>
  event._tag === "Chunk"
    ? `data: ${JSON.stringify(event.chunk)}\n\n`
    : `data: ${JSON.stringify(toChatErrorBody(event.error))}\n\n`

/**
 * How one kind of stream writes its events as SSE: chat's chunks here (chatSse), the Responses
 * API's named events (core/api/responses). openSse does the rest (first-event decision,
 * keep-alive comments, shutdown) the same for all of them.
 */
export interface SseWire<E> {
  /** One event's SSE text. */
  readonly frame: (event: E) => string
  /** The failure an event reports: as the stream's first event, the answer is refused with its status. */
  readonly failureOf: (event: E) => ApiError | undefined
  /** The body's last text; `shutDown` when a server shutdown cut the events short. */
  readonly last: (shutDown: boolean) => string
}

/** A keep-alive comment's place among the events, before framing. */
const keepAliveMark = { _tag: "KeepAlive" } as const
type BodyItem<E> = E | typeof keepAliveMark

/** Why a stream ended at a shutdown (ServerLifecycle.streamsEnd): its last event, or its answer before any chunk. */
export const shuttingDownError = new ApiError({ kind: "unavailable", message: "the server is shutting down; send the request again", param: null, code: "server_shutting_down" })
const shuttingDown: SequencedEvent = { _tag: "Error", error: shuttingDownError }
const shutDownEnd = frame(shuttingDown) + DONE_EVENT

/** Chat's stream: chat.completion.chunk events, an error event, then `data: [DONE]`. */
export const chatSse: SseWire<SequencedEvent> = {
  frame,
  failureOf: (event) => (event._tag === "Error" ? event.error : undefined),
  last: (shutDown) => (shutDown ? shutDownEnd : DONE_EVENT)
}

/** A chat stream's SSE answer: refused with the status of a failure before any chunk, or open. */
export type OpenedSse =
  | { readonly _tag: "Failed"; readonly error: ApiError }
  | { readonly _tag: "Open"; readonly body: Stream.Stream<Uint8Array> }

/**
 * Opens a stream's SSE answer, its events framed by `wire` (chat's by default;
 * the Responses API's events name themselves and end without [DONE]). The answer is decided by the first thing
 * the stream gives: a failure before any chunk (an upstream 500, 401 or 429, a
 * refused connection) is refused with its own status instead of 200 and an
 * error event; a first chunk, or a first token slower than `keepAlive` (the
 * keep-alive comment that silence brings), opens the 200 stream. The body is
 * the framed events, keep-alive comments after each `keepAlive` of silence,
 * then [DONE]. When `end` signals a shutdown the backend is interrupted and
 * the stream ends with an error event saying why, then [DONE].
 * Interrupting the body (the client went away) interrupts the backend.
 *
 * The events come through an EventHandoff (one fiber, a timer per wait) and
 * the body is one pull that frames them: each merge, forked wait, race or
 * stream stage per stream costs CPU on every streamed answer.
 */
export const openSse = <E = SequencedEvent>(
  events: Stream.Stream<E>,
  keepAlive: Duration.Input,
  end: StreamsEnd,
  wire: SseWire<E> = chatSse as unknown as SseWire<E>
): Effect.Effect<OpenedSse> =>
  Effect.flatMap(Scope.make(), (scope) =>
    openIn(events as Stream.Stream<unknown>, Duration.toMillis(Duration.fromInputUnsafe(keepAlive)), end, scope, wire as SseWire<unknown>).pipe(
      Effect.onError(() => Scope.close(scope, Exit.void))
    ))

const openIn = Effect.fnUntraced(function*(events: Stream.Stream<unknown>, keepAliveMs: number, end: StreamsEnd, scope: Scope.Closeable, wire: SseWire<unknown>) {
  const handoff = new EventHandoff<BodyItem<unknown>>(keepAliveMs, keepAliveMark)
  yield* handoff.start(events, end, scope)
  const first = yield* Pull.catchDone(handoff.take, () => Effect.succeed(undefined))
  const head = first?.[0]
  const failure = head === undefined || head === keepAliveMark ? undefined : wire.failureOf(head)
  if (failure !== undefined || (first === undefined && handoff.shutDown)) {
    yield* Scope.close(scope, Exit.void)
    return { _tag: "Failed", error: failure ?? shuttingDownError } satisfies OpenedSse
  }
  return { _tag: "Open", body: sseBody(handoff, first, scope, wire) } satisfies OpenedSse
})

/**
 * The framed body: the first items, then each array the handoff gives framed into one string (one
 * write on the socket, not one per event); at its end the shutdown's error event if there was one,
 * and [DONE]. Closing it closes the stream's scope, which interrupts the events.
 */
const sseBody = <E>(
  handoff: EventHandoff<BodyItem<E>>,
  first: NonEmptyReadonlyArray<BodyItem<E>> | undefined,
  scope: Scope.Closeable,
  wire: SseWire<E>
): Stream.Stream<Uint8Array> => {
  let held = first
  let finished = false
  const framed = (items: ReadonlyArray<BodyItem<E>>): NonEmptyReadonlyArray<Uint8Array> => {
    let text = ""
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      text += item === keepAliveMark ? KEEP_ALIVE_EVENT : wire.frame(item as E)
    }
    return [encoder.encode(text)]
  }
  const last = (): Pull.Pull<NonEmptyReadonlyArray<Uint8Array>> => {
    finished = true
    const text = wire.last(handoff.shutDown)
    // A stream whose last event was its own end (the Responses API's) has nothing more to write.
    return text === "" ? Cause.done() : Effect.succeed([encoder.encode(text)])
  }
  const pull: Pull.Pull<NonEmptyReadonlyArray<Uint8Array>> = Effect.suspend(() => {
    if (held !== undefined) {
      const items = held
      held = undefined
      return Effect.succeed(framed(items))
    }
    if (finished) return Cause.done()
    return Pull.matchEffect(handoff.take, {
      onSuccess: (items) => Effect.succeed(framed(items)),
      onFailure: Effect.failCause,
      onDone: last
    })
  })
  return fromArrayPull(pull, Scope.close(scope, Exit.void))
}
