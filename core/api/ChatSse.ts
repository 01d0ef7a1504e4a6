/**
 * Server-sent events for streamed chat: OpenAI chat.completion.chunk events,
 * usage on the last chunk (and as an extra `choices: []` chunk when asked),
 * keep-alive comments during silences, a failure as an error event, and
 * always `data: [DONE]` at the end. Encoding is plain string work per chunk.
 */
import { Cause, Duration, Effect, Stream } from "effect"
import type { ChatChunk, ChunkChoice, Usage } from "../chat/ChatCompletion.ts"
import { type ApiError, toChatErrorBody } from "./ApiError.ts"

export interface SseMeta {
  readonly id: string
  readonly created: number
  readonly model: string
  /** stream_options.include_usage: add the usage-only chunk before [DONE]. */
  readonly includeUsage: boolean
}

export const DONE_EVENT = "data: [DONE]\n\n"
export const KEEP_ALIVE_EVENT = ": keep-alive\n\n"

/**
 * Turns backend chunks into SSE event text. A chunk that finishes a choice is
 * held until the next event or the end, so that the last one can carry usage;
 * every other chunk is written as soon as it is produced.
 */
export class ChunkEncoder {
  private readonly prefix: string
  private held: ReadonlyArray<ChunkChoice> | undefined
  private usage: Usage | undefined
  private readonly roleSent = new Set<number>()
  private readonly meta: SseMeta

  constructor(meta: SseMeta) {
    this.meta = meta
    this.prefix = `data: {"id":${JSON.stringify(meta.id)},"object":"chat.completion.chunk","created":${meta.created},"model":${JSON.stringify(meta.model)},"choices":`
  }

  /** Events to write for one backend chunk (possibly none while a finish chunk is held). */
  push(chunk: ChatChunk): string {
    if (chunk.usage !== undefined) this.usage = chunk.usage
    if (chunk.choices.length === 0) return ""
    const choices = this.withRoles(chunk.choices)
    let out = this.flushHeld(false)
    if (choices.some((c) => c.finish_reason !== null)) this.held = choices
    else out += this.event(choices, undefined)
    return out
  }

  /** The events that end a successful stream. */
  end(): string {
    let out = this.flushHeld(true)
    if (this.meta.includeUsage && this.usage !== undefined) out += this.prefix + `[],"usage":${JSON.stringify(this.usage)}}\n\n`
    return out + DONE_EVENT
  }

  /** The events that end a failed stream: what was held, the error, then [DONE]. */
  fail(error: ApiError): string {
    return this.flushHeld(false) + `data: ${JSON.stringify(toChatErrorBody(error))}\n\n` + DONE_EVENT
  }

  private flushHeld(last: boolean): string {
    if (this.held === undefined) return ""
    const held = this.held
    this.held = undefined
    return this.event(held, last ? this.usage : undefined)
  }

  private event(choices: ReadonlyArray<ChunkChoice>, usage: Usage | undefined): string {
    return this.prefix + JSON.stringify(choices) + (usage === undefined ? "}\n\n" : `,"usage":${JSON.stringify(usage)}}\n\n`)
  }

  /** The first delta of each choice carries role "assistant", as OpenAI clients expect. */
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

const encoder = new TextEncoder()

/**
 * The SSE body of a chat stream. Interrupting it (the client went away)
 * interrupts `chunks`, which cancels the backend's work.
 */
export const chatEventStream = <E>(
  chunks: Stream.Stream<ChatChunk, E>,
  meta: SseMeta,
  toApiError: (error: E) => ApiError,
  onDefect: (cause: Cause.Cause<never>) => ApiError,
  keepAlive: Duration.Input = "15 seconds"
): Stream.Stream<Uint8Array> =>
  Stream.suspend(() => {
    const chunkEncoder = new ChunkEncoder(meta)
    let lastWrite = Date.now()
    const keepAliveMs = Duration.toMillis(Duration.fromInputUnsafe(keepAlive))
    const events = chunks.pipe(
      Stream.map((chunk) => chunkEncoder.push(chunk)),
      Stream.concat(Stream.sync(() => chunkEncoder.end())),
      Stream.catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Stream.failCause(cause as Cause.Cause<never>)
        const failure = Cause.findErrorOption(cause)
        const error = failure._tag === "Some" ? toApiError(failure.value) : onDefect(cause as Cause.Cause<never>)
        return Stream.succeed(chunkEncoder.fail(error))
      }),
      Stream.filter((text) => text.length > 0),
      Stream.tap(() => Effect.sync(() => { lastWrite = Date.now() }))
    )
    // Ticks at half the interval; a comment goes out only after a real silence.
    const keepAlives = Stream.tick(Duration.millis(Math.max(1, keepAliveMs / 2))).pipe(
      Stream.filter(() => Date.now() - lastWrite >= keepAliveMs),
      Stream.map(() => {
        lastWrite = Date.now()
        return KEEP_ALIVE_EVENT
      })
    )
    return Stream.merge(events, keepAlives, { haltStrategy: "left" }).pipe(
      Stream.map((text) => encoder.encode(text))
    )
  })
