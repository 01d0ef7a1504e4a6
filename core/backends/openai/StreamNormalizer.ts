/**
 * An upstream's SSE body as our ChatChunks. Bytes go through a streaming
 * TextDecoder and Effect's SSE parser; each data event becomes at most one
 * chunk: content, reasoning (`reasoning_content` or `reasoning` deltas),
 * tool-call deltas with their index, finish reasons in the API's set, and
 * usage chunks. An error event or an "error" finish fails the stream, and so
 * does a body that ends without [DONE] while a choice is unfinished: a
 * stream never ends silently.
 *
 * Plain code on the hot path: called once per body read, no Effect inside.
 */
import { Predicate } from "effect"
import { Sse } from "effect/encoding"
import type { ChatChunk, ChunkChoice, ChunkDelta, ToolCallDelta } from "../../chat/ChatCompletion.ts"
import { type FinishReason, finishReasonOf, fromUpstream } from "../../chat/FinishReason.ts"
import { type AnswerIssue, contentTextOf, issueOfError, parseUsage, reasoningOf } from "./ResponseNormalizer.ts"

type Json = Record<string, unknown>

const preview = (text: string): string => (text.length > 80 ? `${text.slice(0, 80)}...` : text)

const toolCallDeltasOf = (value: unknown): Array<ToolCallDelta> | undefined => {
  if (!Array.isArray(value) || value.length === 0) return undefined
  const deltas: Array<ToolCallDelta> = []
  for (let i = 0; i < value.length; i++) {
    const call = value[i]
    if (!Predicate.isObject(call)) continue
    // Servers that send each call whole (older Ollama) leave out the index: position stands in.
    const index = typeof call.index === "number" && Number.isInteger(call.index) ? call.index : i
    const fn = Predicate.isObject(call.function) ? call.function : undefined
    let name: string | undefined
    let args: string | undefined
    if (fn !== undefined) {
      if (typeof fn.name === "string") name = fn.name
      if (typeof fn.arguments === "string") args = fn.arguments
      else if (fn.arguments !== undefined && fn.arguments !== null) args = JSON.stringify(fn.arguments)
    }
    deltas.push({
      index,
      ...(typeof call.id === "string" ? { id: call.id } : {}),
      ...(call.type === "function" || typeof call.id === "string" ? { type: "function" as const } : {}),
      ...(fn !== undefined ? { function: { ...(name !== undefined ? { name } : {}), ...(args !== undefined ? { arguments: args } : {}) } } : {})
    })
  }
  return deltas.length > 0 ? deltas : undefined
}

export class StreamNormalizer {
  /** A data event has arrived: an answer has begun, so no retry may follow. */
  started = false
  /** [DONE] arrived: nothing more is read. */
  done = false
  /** Why the stream failed, once it has. */
  issue: AnswerIssue | undefined
  private events = 0
  private readonly seen = new Set<number>()
  private readonly finished = new Set<number>()
  /** Choices that sent tool-call deltas. */
  private readonly calling = new Set<number>()
  private readonly decoder = new TextDecoder()
  private out: Array<ChatChunk> = []
  private readonly parser = Sse.makeParser((event) => {
    if (event._tag === "Event") this.onEvent(event.event, event.data)
  })
  /** Body bytes in; the chunks they complete are appended to `out`. */
  feed(bytes: Uint8Array, out: Array<ChatChunk>): void {
    if (this.done || this.issue !== undefined) return
    this.out = out
    const tooLarge = this.parser.feed(this.decoder.decode(bytes, { stream: true }))
    if (tooLarge !== undefined && this.issue === undefined) this.issue = { kind: "protocol", message: `the upstream sent ${tooLarge.message}` }
  }

  /** The body ended. An issue when that is not a proper end of the answer. */
  end(out: Array<ChatChunk>): AnswerIssue | undefined {
    if (!this.done && this.issue === undefined) {
      this.out = out
      // A last event without its blank line still counts; a cut one fails to parse below.
      const tail = this.decoder.decode()
      this.parser.feed(`${tail}\n\n`)
    }
    if (this.issue !== undefined || this.done) return this.issue
    // Without [DONE], every choice begun must have finished. Fewer choices than n asked is no cut:
    // many servers ignore n, and the router asks for the missing ones.
    if (this.finished.size > 0 && this.finished.size === this.seen.size) return undefined
    this.issue = {
      kind: "stream",
      message: this.events === 0
        ? "the upstream closed the stream before sending any event"
        : `the upstream stream ended without [DONE] or a finish_reason after ${this.events} events`
    }
    return this.issue
  }

  private onEvent(name: string, data: string): void {
    if (this.done || this.issue !== undefined) return
    this.events++
    if (data === "[DONE]") {
      this.started = true
      return this.onDone()
    }
    let json: unknown
    try {
      json = JSON.parse(data)
    } catch {
      this.issue = { kind: "protocol", message: `the upstream sent an event that is not JSON: ${preview(data)}` }
      return
    }
    if (name === "error" || (Predicate.isObject(json) && json.error !== undefined && json.error !== null)) {
      const issue = issueOfError(Predicate.isObject(json) && json.error !== undefined ? json.error : json, "the upstream sent an error event")
      // An error event is a broken stream whatever code it carries; the code stays as status.
      this.issue = { kind: "stream", message: issue.message, status: issue.status }
      return
    }
    if (!Predicate.isObject(json)) {
      this.issue = { kind: "protocol", message: `the upstream sent an event that is not a chunk object: ${preview(data)}` }
      return
    }
    // An error event is not an answer; anything else is its first byte.
    this.started = true
    this.onChunk(json)
  }

  private onChunk(json: Json): void {
    const choices: Array<ChunkChoice> = []
    const raw = json.choices
    if (Array.isArray(raw)) {
      for (let i = 0; i < raw.length; i++) {
        const choice = raw[i]
        if (!Predicate.isObject(choice)) continue
        const index = typeof choice.index === "number" && Number.isInteger(choice.index) ? choice.index : i
        const finish = fromUpstream(choice.finish_reason)
        if (finish === "error") {
          this.issue = { kind: "stream", message: `the upstream ended choice ${index} with finish_reason ${JSON.stringify(choice.finish_reason)}` }
          return
        }
        this.seen.add(index)
        const delta = this.deltaOf(choice.delta ?? choice.message)
        if (delta?.tool_calls !== undefined) this.calling.add(index)
        if (delta === undefined && finish === null) continue
        let finishReason: FinishReason | null = null
        if (finish !== null) {
          this.finished.add(index)
          finishReason = this.finishOf(index, finish)
        }
        choices.push({ index, delta: delta ?? {}, finish_reason: finishReason })
      }
    }
    const usage = parseUsage(json.usage)
    if (choices.length > 0 || usage !== undefined) this.out.push(usage === undefined ? { choices } : { choices, usage })
  }

  private deltaOf(value: unknown): ChunkDelta | undefined {
    if (!Predicate.isObject(value)) return undefined
    const content = contentTextOf(value.content)
    const reasoning = reasoningOf(value)
    const toolCalls = toolCallDeltasOf(value.tool_calls)
    const role = value.role === "assistant"
    if (!role && !content && !reasoning && toolCalls === undefined) return undefined
    return {
      ...(role ? { role: "assistant" as const } : {}),
      ...(content ? { content } : {}),
      ...(reasoning ? { reasoning_content: reasoning } : {}),
      ...(toolCalls !== undefined ? { tool_calls: toolCalls } : {})
    }
  }

  private finishOf(index: number, reported: FinishReason | null): FinishReason {
    return finishReasonOf({ reported, toolCalls: this.calling.has(index) ? 1 : 0 })
  }

  /** [DONE]: a choice the upstream never finished is finished here, so every choice the caller saw ends. */
  private onDone(): void {
    this.done = true
    const open: Array<ChunkChoice> = []
    for (const index of this.seen) if (!this.finished.has(index)) open.push({ index, delta: {}, finish_reason: this.finishOf(index, null) })
    if (open.length > 0) this.out.push({ choices: open })
  }
}
