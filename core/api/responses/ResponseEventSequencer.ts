/**
 * A streamed answer as the Responses API's events, each with its sequence_number, in the order
 * OpenAI's SDK assembles them (lib/responses/ResponseStream): response.created and
 * response.in_progress with the gateway's first chunk; the search grounding made before the
 * answer as a web_search_call item (added, in_progress, searching, completed, done with its
 * sources); then a reasoning item, a message (content_part.added, output_text.delta ...,
 * output_text.annotation.added for each verified citation, output_text.done) and function_call
 * items, each closed when the answer finishes; last response.completed (response.incomplete
 * when the output-token limit cut it) with the whole response and its usage. A failure after
 * the first event ends the stream with response.failed; one before it is the caller's to refuse
 * with its HTTP status (`fail` says which). Plain code: it runs per chunk.
 */
import type { ChatChunk, GroundingReport, SearchResultItem, ToolCallDelta, Usage } from "../../chat/ChatCompletion.ts"
import type { FinishReason } from "../../chat/FinishReason.ts"
import { type ApiError, toChatErrorBody } from "../ApiError.ts"
import type { ItemStatus, OutputItem, ResponseObject, ResponseStreamEvent, UrlCitation } from "./ResponseObject.ts"
import {
  citationOf,
  endingOf,
  functionCallItem,
  itemId,
  messageItem,
  reasoningItem,
  type ResponseShell,
  usageOf,
  webSearchCall
} from "./ResponseOutput.ts"

interface OpenText {
  readonly index: number
  readonly id: string
  text: string
}

interface OpenCall {
  readonly index: number
  readonly id: string
  readonly callId: string
  readonly name: string
  arguments: string
  validation?: { readonly valid: boolean; readonly error: string } | undefined
}

type Validation = { readonly valid: boolean; readonly error: string }

/** What a stream item is: an event, or the failure that came before any event. */
export type ResponseStreamItem = ResponseStreamEvent | ApiError

export class ResponseEventSequencer {
  private readonly shell: ResponseShell
  private readonly now: () => number
  private sequence = 0
  private started = false
  private finished = false
  /** The output items as they stand, by output index. */
  private readonly output: Array<OutputItem> = []
  private search: { readonly index: number; readonly id: string } | undefined
  private reasoning: OpenText | undefined
  private message: OpenText | undefined
  private annotations: ReadonlyArray<UrlCitation> = []
  private messageValidation: Validation | undefined
  private readonly calls = new Map<number, OpenCall>()
  /** A message or a function call was opened: an answer with neither still gets its (empty) message, as a whole one does. */
  private answered = false
  private finish: FinishReason | null = null
  private usage: Usage | undefined
  private grounding: GroundingReport | undefined
  private sources: ReadonlyArray<SearchResultItem> = []

  /** `now`: Unix seconds, for completed_at. */
  constructor(shell: ResponseShell, now: () => number) {
    this.shell = shell
    this.now = now
  }

  /** The events of one gateway chunk. */
  push(chunk: ChatChunk, out: Array<ResponseStreamEvent>): void {
    if (!this.started) this.start(out)
    if (chunk.usage !== undefined) this.usage = chunk.usage
    if (chunk.periscope_grounding !== undefined || chunk.search_results !== undefined) this.searched(chunk, out)
    for (let i = 0; i < chunk.choices.length; i++) {
      const choice = chunk.choices[i]!
      const delta = choice.delta
      if (delta.reasoning_content) this.reason(delta.reasoning_content, out)
      if (delta.content) this.write(delta.content, out)
      if (delta.tool_calls !== undefined) for (const call of delta.tool_calls) this.call(call, out)
      if (delta.annotations !== undefined) this.annotations = delta.annotations.map(citationOf)
      if (choice.periscope_validation !== undefined) this.messageValidation = choice.periscope_validation
      if (choice.finish_reason !== null) {
        this.finish = choice.finish_reason
        if (!this.answered) this.openMessage(out)
        this.closeAll(out)
      }
    }
  }

  /** The events that end a stream the gateway finished. */
  end(out: Array<ResponseStreamEvent>): void {
    if (this.finished) return
    if (!this.started) this.start(out)
    this.closeAll(out)
    this.finished = true
    const ending = endingOf(this.finish)
    const response: ResponseObject = {
      ...this.snapshot(ending.status),
      incomplete_details: ending.incomplete_details,
      completed_at: ending.status === "completed" ? this.now() : null,
      usage: this.usage === undefined ? null : usageOf(this.usage),
      ...(this.grounding === undefined ? {} : { periscope_grounding: this.grounding })
    }
    out.push({ type: ending.status === "completed" ? "response.completed" : "response.incomplete", sequence_number: this.sequence++, response })
  }

  /**
   * How a failure ends the stream: before any event, the error itself (the answer is refused with
   * its status); after, response.failed with the items as they stood; once ended, nothing.
   */
  fail(error: ApiError): Array<ResponseStreamItem> {
    if (this.finished) return []
    if (!this.started) return [error]
    this.finished = true
    for (const open of [this.reasoning, this.message, ...this.calls.values()]) {
      if (open !== undefined) this.output[open.index] = this.current(open, "incomplete")
    }
    const code = toChatErrorBody(error).error.code ?? "server_error"
    return [{
      type: "response.failed",
      sequence_number: this.sequence++,
      response: { ...this.snapshot("failed"), error: { code, message: error.message }, usage: this.usage === undefined ? null : usageOf(this.usage) }
    }]
  }

  /** The sequence number the next event gets (an `error` event that opens a stream gets 0). */
  get nextSequence(): number {
    return this.sequence
  }

  private snapshot(status: ResponseObject["status"]): ResponseObject {
    return { ...this.shell, status, completed_at: null, error: null, incomplete_details: null, output: [...this.output], usage: null }
  }

  private start(out: Array<ResponseStreamEvent>): void {
    this.started = true
    out.push({ type: "response.created", sequence_number: this.sequence++, response: this.snapshot("in_progress") })
    out.push({ type: "response.in_progress", sequence_number: this.sequence++, response: this.snapshot("in_progress") })
  }

  /** The search made before the answer, told at once as a whole web_search_call (the later, final report updates it). */
  private searched(chunk: ChatChunk, out: Array<ResponseStreamEvent>): void {
    if (chunk.search_results !== undefined) this.sources = chunk.search_results
    if (chunk.periscope_grounding !== undefined) this.grounding = chunk.periscope_grounding
    const report = this.grounding
    if (report === undefined || report.retrieval === "skipped") return
    if (this.search !== undefined) {
      this.output[this.search.index] = webSearchCall(this.search.id, report, this.sources)
      return
    }
    const search = { index: this.output.length, id: itemId("ws_") }
    this.search = search
    const started: OutputItem = { ...webSearchCall(search.id, report, []), status: "in_progress" }
    const done = webSearchCall(search.id, report, this.sources)
    this.output.push(done)
    const at = { item_id: search.id, output_index: search.index }
    out.push({ type: "response.output_item.added", sequence_number: this.sequence++, output_index: search.index, item: started })
    out.push({ type: "response.web_search_call.in_progress", sequence_number: this.sequence++, ...at })
    out.push({ type: "response.web_search_call.searching", sequence_number: this.sequence++, ...at })
    if (done.status === "completed") out.push({ type: "response.web_search_call.completed", sequence_number: this.sequence++, ...at })
    out.push({ type: "response.output_item.done", sequence_number: this.sequence++, output_index: search.index, item: done })
  }

  /** A new output item with its one content part: output_item.added, then content_part.added. */
  private addItem(open: OpenText, item: OutputItem, part: Extract<ResponseStreamEvent, { type: "response.content_part.added" }>["part"], out: Array<ResponseStreamEvent>): void {
    this.output.push(item)
    out.push({ type: "response.output_item.added", sequence_number: this.sequence++, output_index: open.index, item })
    out.push({ type: "response.content_part.added", sequence_number: this.sequence++, item_id: open.id, output_index: open.index, content_index: 0, part })
  }

  private reason(text: string, out: Array<ResponseStreamEvent>): void {
    let open = this.reasoning
    if (open === undefined) {
      open = this.reasoning = { index: this.output.length, id: itemId("rs_"), text: "" }
      this.addItem(open, { ...reasoningItem(open.id, "", "in_progress"), content: [] }, { type: "reasoning_text", text: "" }, out)
    }
    open.text += text
    out.push({ type: "response.reasoning_text.delta", sequence_number: this.sequence++, item_id: open.id, output_index: open.index, content_index: 0, delta: text })
  }

  private openMessage(out: Array<ResponseStreamEvent>): OpenText {
    if (this.reasoning !== undefined) this.closeReasoning(this.reasoning, out)
    this.answered = true
    const open: OpenText = this.message = { index: this.output.length, id: itemId("msg_"), text: "" }
    this.addItem(open, { ...messageItem(open.id, "", [], "in_progress"), content: [] }, { type: "output_text", text: "", annotations: [], logprobs: [] }, out)
    return open
  }

  private write(text: string, out: Array<ResponseStreamEvent>): void {
    if (this.reasoning !== undefined) this.closeReasoning(this.reasoning, out)
    const open = this.message ?? this.openMessage(out)
    open.text += text
    out.push({
      type: "response.output_text.delta",
      sequence_number: this.sequence++,
      item_id: open.id,
      output_index: open.index,
      content_index: 0,
      delta: text,
      logprobs: []
    })
  }

  private call(delta: ToolCallDelta, out: Array<ResponseStreamEvent>): void {
    if (this.reasoning !== undefined) this.closeReasoning(this.reasoning, out)
    let open = this.calls.get(delta.index)
    if (open === undefined) {
      this.answered = true
      open = { index: this.output.length, id: itemId("fc_"), callId: delta.id ?? "", name: delta.function?.name ?? "", arguments: "" }
      this.calls.set(delta.index, open)
      const item = functionCallItem(open.id, { id: open.callId, name: open.name, arguments: "" }, "in_progress")
      this.output.push(item)
      out.push({ type: "response.output_item.added", sequence_number: this.sequence++, output_index: open.index, item })
    }
    if (delta.periscope_validation !== undefined) open.validation = delta.periscope_validation
    const args = delta.function?.arguments
    if (args) {
      open.arguments += args
      out.push({ type: "response.function_call_arguments.delta", sequence_number: this.sequence++, item_id: open.id, output_index: open.index, delta: args })
    }
  }

  /** An open item as it stands. */
  private current(open: OpenText | OpenCall, status: ItemStatus): OutputItem {
    if ("callId" in open) return functionCallItem(open.id, { id: open.callId, name: open.name, arguments: open.arguments }, status, open.validation)
    return open === this.reasoning ? reasoningItem(open.id, open.text, status) : messageItem(open.id, open.text, this.annotations, status, this.messageValidation)
  }

  private closeReasoning(open: OpenText, out: Array<ResponseStreamEvent>): void {
    this.reasoning = undefined
    const at = { item_id: open.id, output_index: open.index, content_index: 0 }
    out.push({ type: "response.reasoning_text.done", sequence_number: this.sequence++, ...at, text: open.text })
    out.push({ type: "response.content_part.done", sequence_number: this.sequence++, ...at, part: { type: "reasoning_text", text: open.text } })
    const item = reasoningItem(open.id, open.text, "completed")
    this.output[open.index] = item
    out.push({ type: "response.output_item.done", sequence_number: this.sequence++, output_index: open.index, item })
  }

  private closeMessage(open: OpenText, out: Array<ResponseStreamEvent>): void {
    this.message = undefined
    const at = { item_id: open.id, output_index: open.index, content_index: 0 }
    const annotations = this.annotations
    for (let i = 0; i < annotations.length; i++) {
      out.push({ type: "response.output_text.annotation.added", sequence_number: this.sequence++, ...at, annotation_index: i, annotation: annotations[i]! })
    }
    out.push({ type: "response.output_text.done", sequence_number: this.sequence++, ...at, text: open.text, logprobs: [] })
    out.push({ type: "response.content_part.done", sequence_number: this.sequence++, ...at, part: { type: "output_text", text: open.text, annotations, logprobs: [] } })
    const status: ItemStatus = this.finish === "length" ? "incomplete" : "completed"
    const item = messageItem(open.id, open.text, annotations, status, this.messageValidation)
    this.output[open.index] = item
    out.push({ type: "response.output_item.done", sequence_number: this.sequence++, output_index: open.index, item })
  }

  private closeCall(open: OpenCall, out: Array<ResponseStreamEvent>): void {
    out.push({ type: "response.function_call_arguments.done", sequence_number: this.sequence++, item_id: open.id, output_index: open.index, arguments: open.arguments })
    const item = this.current(open, "completed")
    this.output[open.index] = item
    out.push({ type: "response.output_item.done", sequence_number: this.sequence++, output_index: open.index, item })
  }

  /** Closes every open item, in output order (the answer finished). */
  private closeAll(out: Array<ResponseStreamEvent>): void {
    const open: Array<OpenText | OpenCall> = []
    if (this.reasoning !== undefined) open.push(this.reasoning)
    if (this.message !== undefined) open.push(this.message)
    for (const call of this.calls.values()) open.push(call)
    if (open.length === 0) return
    open.sort((a, b) => a.index - b.index)
    for (const item of open) {
      if (item === this.reasoning) this.closeReasoning(item, out)
      else if (item === this.message) this.closeMessage(item, out)
      else this.closeCall(item as OpenCall, out)
    }
    this.calls.clear()
  }
}
