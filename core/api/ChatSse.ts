/**
 * Streamed chat on the wire: OpenAI chat.completion.chunk objects, usage on
 * the last chunk (and as an extra `choices: []` chunk when asked), a failure
 * as an error event, and always `data: [DONE]` at the end; keep-alive
 * comments during silences. ChunkSequencer is the one place that decides
 * what chunks a stream shows; SSE framing is a plain string step after it.
 */
import { Cause, Duration, Effect, Stream } from "effect"
import type { ChatChunk, ChatCompletionChunk, ChunkChoice, GroundingReport, SearchResultItem, Usage } from "../chat/ChatCompletion.ts"
import { mapArrays } from "../chat/ArrayStreams.ts"
import { type ApiError, toChatErrorBody } from "./ApiError.ts"

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
      Stream.concat(Stream.suspend(() => {
        const out: Array<ChatCompletionChunk> = []
        sequencer.end(out)
        return Stream.fromArray(asEvents(out))
      })),
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
 * The SSE body of a chat stream: events, keep-alive comments after
 * `keepAlive` of silence, then [DONE]. Interrupting it (the client went away)
 * interrupts the backend stream.
 */
export const sseBody = (events: Stream.Stream<SequencedEvent>, keepAlive: Duration.Input): Stream.Stream<Uint8Array> =>
  Stream.suspend(() => {
    let lastWrite = Date.now()
    const keepAliveMs = Duration.toMillis(Duration.fromInputUnsafe(keepAlive))
    // The events of one pulled array are framed into one string: one write on the socket, not one per event.
    const framed = events.pipe(
      Stream.mapArray((array) => {
        let text = ""
        for (let i = 0; i < array.length; i++) text += frame(array[i]!)
        lastWrite = Date.now()
        return [text] as const
      }),
      Stream.concat(Stream.succeed(DONE_EVENT))
    )
    // Ticks at half the interval; a comment goes out only after a real silence.
    const keepAlives = Stream.tick(Duration.millis(Math.max(1, keepAliveMs / 2))).pipe(
      Stream.filter(() => Date.now() - lastWrite >= keepAliveMs),
      Stream.map(() => {
        lastWrite = Date.now()
        return KEEP_ALIVE_EVENT
      })
    )
    return Stream.merge(framed, keepAlives, { haltStrategy: "left" }).pipe(Stream.map((text) => encoder.encode(text)))
  })
