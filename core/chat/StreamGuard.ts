/**
 * The per-choice state of a streamed answer in the gateway: stop sequences
 * across chunks, tool calls held until validated, JSON content held under
 * the repair and retry policies, and usage at the end.
 */
import { Effect } from "effect"
import type { AnswerToolCall, ChatChunk, ChunkChoice, ChunkDelta, ToolCallDelta, Usage } from "./ChatCompletion.ts"
import type { ChatModelError } from "./ChatError.ts"
import type { ChatRequest } from "./ChatRequest.ts"
import { sumUsage } from "./FanOut.ts"
import { type FinishReason, finishReasonOf } from "./FinishReason.ts"
import type { Checks, Output, ValidationPolicy } from "./OutputValidation.ts"
import { StopScanner } from "./StopSequences.ts"
import type { TokenCount } from "./TokenCount.ts"

/** What a chunk that shows nothing gives (never written to). */
const noChunks: ReadonlyArray<ChatChunk> = []

interface ChoiceState {
  readonly scanner: StopScanner | undefined
  /** Content shown so far (or held, when the content must be validated first). */
  content: string
  held: string
  reasoning: string
  readonly calls: Map<number, { id: string; name: string; arguments: string }>
  done: boolean
}

export type Settle = (request: ChatRequest, checks: Checks, output: Output, usages: Array<Usage | undefined>, contentReplaceable: boolean) => Effect.Effect<Output, ChatModelError>

/**
 * Per-choice state of a stream: content goes out as produced (minus a tail
 * that may be a stop sequence), reasoning passes through, tool calls are held
 * until the choice finishes and are sent whole once validated; content under
 * a JSON response format with the repair or retry policy is held too.
 */
export class StreamGuard {
  private readonly states = new Map<number, ChoiceState>()
  private readonly usages: Array<Usage | undefined> = []
  private sawUsage = false
  private finished = 0
  private stoppedByGateway = false
  private readonly holdContent: boolean
  private readonly request: ChatRequest
  private readonly checks: Checks
  private readonly settle: Settle
  private readonly tokens: TokenCount["Service"]

  constructor(request: ChatRequest, checks: Checks, policy: ValidationPolicy, settle: Settle, tokens: TokenCount["Service"]) {
    this.request = request
    this.checks = checks
    this.settle = settle
    this.tokens = tokens
    this.holdContent = checks.content !== undefined && policy.mode !== "pass"
  }

  /**
   * Every choice is finished and a stop sequence ended one of them: the
   * backend would keep generating, so the stream ends here (cancelling it).
   * Choices that finish on their own leave the stream open for its usage chunk.
   */
  get cutShort(): boolean {
    return this.stoppedByGateway && this.finished >= this.request.n
  }

  private state(index: number): ChoiceState {
    let state = this.states.get(index)
    if (state === undefined) {
      state = {
        scanner: this.request.stop.length > 0 ? new StopScanner(this.request.stop) : undefined,
        content: "",
        held: "",
        reasoning: "",
        calls: new Map(),
        done: false
      }
      this.states.set(index, state)
    }
    return state
  }

  /**
   * The chunks for one backend chunk: at once, or an Effect when a choice finishes (its output is
   * settled). Per chunk of a stream: only what goes out is allocated (a chunk that shows nothing
   * gives the shared empty array).
   */
  step(chunk: ChatChunk): ReadonlyArray<ChatChunk> | Effect.Effect<Array<ChatChunk>, ChatModelError> {
    if (chunk.usage !== undefined) {
      this.usages.push(chunk.usage)
      this.sawUsage = true
    }
    let finishes: Array<[number, FinishReason | null]> | undefined
    let choices: Array<ChunkChoice> | undefined
    for (const choice of chunk.choices) {
      const state = this.state(choice.index)
      if (state.done) continue
      let reasoning: string | undefined
      let content: string | undefined
      if (choice.delta.reasoning_content) {
        state.reasoning += choice.delta.reasoning_content
        reasoning = choice.delta.reasoning_content
      }
      let stopHit = false
      if (choice.delta.content) {
        const shown = state.scanner === undefined ? choice.delta.content : state.scanner.push(choice.delta.content)
        stopHit = state.scanner?.stopped ?? false
        if (this.holdContent) state.held += shown
        else if (shown !== "") {
          state.content += shown
          content = shown
        }
      }
      if (choice.delta.tool_calls !== undefined) for (const call of choice.delta.tool_calls) this.addCallDelta(state, call)
      if (reasoning !== undefined || content !== undefined) {
        const delta: ChunkDelta = reasoning === undefined ? { content: content! } : content === undefined ? { reasoning_content: reasoning } : { reasoning_content: reasoning, content }
        ;(choices ??= []).push({ index: choice.index, delta, finish_reason: null })
      }
      if (stopHit) {
        this.stoppedByGateway = true
        ;(finishes ??= []).push([choice.index, null])
      }
      else if (choice.finish_reason !== null) (finishes ??= []).push([choice.index, choice.finish_reason])
    }
    const out: ReadonlyArray<ChatChunk> = choices === undefined ? noChunks : [{ choices }]
    if (finishes === undefined) return out
    return Effect.map(Effect.forEach(finishes, ([index, reason]) => this.finish(index, reason)), (ends) => [...out, ...ends.flat()])
  }

  /** Ends the stream: choices the backend left open finish, then usage. */
  end(): Effect.Effect<Array<ChatChunk>, ChatModelError> {
    return StreamGuard.endOf(this, [...this.states.entries()].filter(([, s]) => !s.done).map(([i]) => i))
  }

  private static readonly endOf = Effect.fnUntraced(function*(self: StreamGuard, open: ReadonlyArray<number>) {
    const out: Array<ChatChunk> = []
    for (const index of open) out.push(...(yield* self.finish(index, null)))
    const summed = self.sawUsage ? sumUsage(self.usages) : undefined
    const usage = summed ?? (yield* self.countedUsage())
    out.push({ choices: [], usage })
    return out
  })

  private addCallDelta(state: ChoiceState, delta: ToolCallDelta) {
    let call = state.calls.get(delta.index)
    if (call === undefined) {
      call = { id: "", name: "", arguments: "" }
      state.calls.set(delta.index, call)
    }
    if (delta.id) call.id = delta.id
    if (delta.function?.name) call.name += delta.function.name
    if (delta.function?.arguments) call.arguments += delta.function.arguments
  }

  /** `reported`: the backend's reason, null when it gave none (cut at a stop sequence, left open). */
  private finish(index: number, reported: FinishReason | null): Effect.Effect<Array<ChatChunk>, ChatModelError> {
    const state = this.state(index)
    if (state.done) return Effect.succeed([])
    state.done = true
    this.finished++
    const tail = state.scanner !== undefined && !state.scanner.stopped ? state.scanner.flush() : ""
    const out: Array<ChatChunk> = []
    if (this.holdContent) state.held += tail
    else if (tail !== "") {
      state.content += tail
      out.push({ choices: [{ index, delta: { content: tail }, finish_reason: null }] })
    }
    const toolCalls: Array<AnswerToolCall> = [...state.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c], i) => ({ id: c.id || `call_${index}_${i}`, type: "function", function: { name: c.name, arguments: c.arguments } }))
    const stopSequence = state.scanner?.stopped ?? false
    const finish = finishReasonOf({ reported, toolCalls: toolCalls.length, stopSequence })
    const output: Output = { content: this.holdContent ? state.held : state.content, reasoning: state.reasoning, toolCalls, finish }
    return Effect.map(this.settle(this.request, this.checks, output, this.usages, this.holdContent), (settled) => {
      if (this.holdContent && settled.content) {
        state.content = settled.content
        out.push({ choices: [{ index, delta: { content: settled.content }, finish_reason: null }] })
      }
      if (settled.toolCalls.length > 0) {
        out.push({
          choices: [{
            index,
            delta: {
              tool_calls: settled.toolCalls.map((call, i) => ({
                index: i,
                id: call.id,
                type: "function" as const,
                function: { name: call.function.name, arguments: call.function.arguments },
                ...(call.periscope_validation === undefined ? {} : { periscope_validation: call.periscope_validation })
              }))
            },
            finish_reason: null
          }]
        })
      }
      const finishReason = finishReasonOf({ reported: settled.finish, toolCalls: settled.toolCalls.length, stopSequence })
      out.push({
        choices: [{ index, delta: {}, finish_reason: finishReason, ...(settled.note === undefined ? {} : { periscope_validation: settled.note }) }]
      })
      state.reasoning = settled.reasoning
      state.calls.clear()
      settled.toolCalls.forEach((c, i) => state.calls.set(i, { id: c.id, name: c.function.name, arguments: c.function.arguments }))
      return out
    })
  }

  private countedUsage(): Effect.Effect<Usage> {
    const texts = [...this.states.values()].map((s) =>
      s.content + s.reasoning + [...s.calls.values()].map((c) => c.name + c.arguments).join(""))
    return this.tokens.countUsage(this.request, texts, 1 + Math.max(0, this.usages.length - (this.sawUsage ? 1 : 0)))
  }
}
