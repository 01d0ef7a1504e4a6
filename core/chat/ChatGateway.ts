/**
 * The chat pipeline, the same whatever the backend: n by fan-out when the
 * backend cannot do n, stop sequences enforced across chunk boundaries,
 * tool calls and JSON output validated under a policy (pass, repair, retry),
 * and usage always reported. The HTTP layer and the embed library talk to
 * this service; backends provide ChatModel underneath it.
 */
import { Context, Effect, Layer, Stream } from "effect"
import type { AnswerToolCall, ChatChoice, ChatChunk, ChatResult, ChunkChoice, ChunkDelta, FinishReason, ModelInfo, ToolCallDelta, Usage } from "./ChatCompletion.ts"
import { ChatModelError } from "./ChatError.ts"
import { ChatModel } from "./ChatModel.ts"
import type { ChatMessage, ChatRequest, ToolCall } from "./ChatRequest.ts"
import { fanOutComplete, fanOutStream, sumUsage } from "./FanOut.ts"
import { applyStops, StopScanner } from "./StopSequences.ts"
import { countPromptTokens, tokenCounter } from "./TokenCount.ts"
import { makeContentCheck, repairJson, ToolCatalog, type Verdict } from "./ToolValidation.ts"

/**
 * What happens to a tool call or JSON reply that fails validation:
 * pass: it goes out, marked with `periscope_validation`; repair: broken JSON
 * is fixed with jsonrepair, then validated; retry: the model is asked again
 * with the validation error, up to `retries` times. Still invalid after
 * repair or retries: the request fails with a clear error.
 */
export interface ValidationPolicy {
  readonly mode: "pass" | "repair" | "retry"
  readonly retries: number
}

export const defaultValidationPolicy: ValidationPolicy = { mode: "retry", retries: 2 }

export interface GatewayResult extends ChatResult {
  readonly usage: Usage
}

export class ChatGateway extends Context.Service<ChatGateway, {
  readonly models: Effect.Effect<ReadonlyArray<ModelInfo>>
  readonly defaultModel: string
  complete(request: ChatRequest): Effect.Effect<GatewayResult, ChatModelError>
  /** Interrupting the stream (or stopping early on a stop sequence) cancels the backend. */
  stream(request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError>
}>()("periscope/chat/ChatGateway") {
  /** The pipeline over whichever ChatModel backend is provided. */
  static readonly layer = (policy: ValidationPolicy = defaultValidationPolicy): Layer.Layer<ChatGateway, never, ChatModel> =>
    Layer.effect(ChatGateway, Effect.map(Effect.service(ChatModel), (model) => makeGateway(model, policy)))
}

// --- validation of one finished choice ----------------------------------------

type Problem = { readonly kind: "tool"; readonly index: number; readonly error: string } | { readonly kind: "content"; readonly error: string }

interface Checks {
  readonly catalog: ToolCatalog
  readonly content: ((content: string) => Verdict) | undefined
}

const problemsOf = (checks: Checks, content: string | null, toolCalls: ReadonlyArray<ToolCall>): Array<Problem> => {
  const problems: Array<Problem> = []
  toolCalls.forEach((call, index) => {
    const verdict = checks.catalog.check(call)
    if (!verdict.ok) problems.push({ kind: "tool", index, error: `tool call ${call.function.name} ${verdict.error}` })
  })
  // A reply that only calls tools has no content to hold to the response format.
  if (checks.content !== undefined && !(toolCalls.length > 0 && (content === null || content === ""))) {
    const verdict = checks.content(content ?? "")
    if (!verdict.ok) problems.push({ kind: "content", error: verdict.error })
  }
  return problems
}

const describeProblems = (problems: ReadonlyArray<Problem>) => problems.map((p) => p.error).join("; ")

const invalidOutput = (problems: ReadonlyArray<Problem>, after: string) =>
  new ChatModelError({
    reason: "upstream",
    code: problems.some((p) => p.kind === "tool") ? "tool_call_invalid" : "response_format_invalid",
    message: `the model's reply failed validation ${after}: ${describeProblems(problems)}`
  })

/** The messages that tell the model what was wrong, for a retry. */
const feedbackMessages = (content: string | null, toolCalls: ReadonlyArray<ToolCall>, problems: ReadonlyArray<Problem>): Array<ChatMessage> => {
  const messages: Array<ChatMessage> = [{
    role: "assistant",
    content: content === "" ? null : content,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {})
  }]
  toolCalls.forEach((call, index) => {
    const problem = problems.find((p) => p.kind === "tool" && p.index === index)
    messages.push({
      role: "tool",
      tool_call_id: call.id,
      content: problem === undefined
        ? "Not run: another call in this turn was invalid. Repeat every call with valid arguments."
        : `Error: ${problem.error}. Call the tool again with arguments that match its JSON Schema.`
    })
  })
  const contentProblem = problems.find((p) => p.kind === "content")
  if (contentProblem !== undefined) {
    messages.push({ role: "user", content: `Your reply was rejected: ${contentProblem.error}. Reply again with only JSON in the required format.` })
  }
  return messages
}

/** The output of one choice as the validator sees it. */
interface Output {
  readonly content: string | null
  readonly reasoning: string
  readonly toolCalls: ReadonlyArray<AnswerToolCall>
  readonly finish: FinishReason
  readonly note?: { readonly valid: boolean; readonly error: string } | undefined
}

const makeGateway = (model: ChatModel["Service"], policy: ValidationPolicy): ChatGateway["Service"] => {
  const completeOnce = (request: ChatRequest) =>
    request.n > 1 && !model.supportsN(request.model) ? fanOutComplete(request, model.complete) : model.complete(request)
  const streamOnce = (request: ChatRequest) =>
    request.n > 1 && !model.supportsN(request.model) ? fanOutStream(request, model.stream) : model.stream(request)

  /** Applies the policy to one finished output; may ask the model again. */
  const settle = (request: ChatRequest, checks: Checks, output: Output, usages: Array<Usage | undefined>, contentReplaceable: boolean): Effect.Effect<Output, ChatModelError> =>
    Effect.gen(function*() {
      let current = output
      for (let attempt = 0;; attempt++) {
        const problems = problemsOf(checks, contentReplaceable ? current.content : null, current.toolCalls)
        if (!contentReplaceable && checks.content !== undefined && current.content !== null && current.toolCalls.length === 0) {
          // Streamed content cannot be taken back: it can only be marked.
          const verdict = checks.content(current.content)
          if (!verdict.ok && policy.mode === "pass") return { ...current, note: { valid: false, error: verdict.error } }
        }
        if (problems.length === 0) return current
        switch (policy.mode) {
          case "pass":
            return {
              ...current,
              toolCalls: current.toolCalls.map((call, index) => {
                const problem = problems.find((p) => p.kind === "tool" && p.index === index)
                return problem === undefined ? call : { ...call, periscope_validation: { valid: false, error: problem.error } }
              }),
              note: problems.find((p) => p.kind === "content") === undefined
                ? undefined
                : { valid: false, error: problems.find((p) => p.kind === "content")!.error }
            }
          case "repair": {
            const toolCalls = current.toolCalls.map((call) => checks.catalog.repair(call).call)
            const content = current.content !== null && problems.some((p) => p.kind === "content") ? repairJson(current.content) ?? current.content : current.content
            const repaired = { ...current, toolCalls, content }
            const remaining = problemsOf(checks, contentReplaceable ? content : null, toolCalls)
            if (remaining.length === 0) return repaired
            return yield* invalidOutput(remaining, "after repair")
          }
          case "retry": {
            if (attempt >= policy.retries) return yield* invalidOutput(problems, `after ${policy.retries} ${policy.retries === 1 ? "retry" : "retries"}`)
            const again = yield* completeOnce({
              ...request,
              n: 1,
              stream: false,
              messages: [...request.messages, ...feedbackMessages(current.content, current.toolCalls, problems)]
            })
            usages.push(again.usage)
            const choice = stopped(again.choices[0]!, request.stop)
            current = {
              content: contentReplaceable ? choice.message.content : current.content,
              reasoning: current.reasoning + choice.message.reasoning_content,
              toolCalls: choice.message.tool_calls ?? [],
              finish: choice.finish_reason
            }
          }
        }
      }
    })

  const checksOf = (request: ChatRequest): Checks => ({
    catalog: new ToolCatalog(request.tools),
    content: makeContentCheck(request.response_format)
  })

  const complete = (request: ChatRequest): Effect.Effect<GatewayResult, ChatModelError> => {
    const checks = checksOf(request)
    return Effect.flatMap(completeOnce(request), (first) =>
      // Nothing to validate (no tools, no JSON format, no tool calls) and usage reported: only stops apply.
      first.usage !== undefined && checks.catalog.names.length === 0 && checks.content === undefined &&
        first.choices.every((c) => (c.message.tool_calls?.length ?? 0) === 0)
        ? Effect.succeed({ model: first.model, choices: first.choices.map((c) => stopped(c, request.stop)), usage: first.usage })
        : settleAll(request, checks, first))
  }

  const settleAll = (request: ChatRequest, checks: Checks, first: ChatResult): Effect.Effect<GatewayResult, ChatModelError> =>
    Effect.gen(function*() {
      const usages: Array<Usage | undefined> = [first.usage]
      const choices: Array<ChatChoice> = []
      for (const raw of first.choices) {
        const choice = stopped(raw, request.stop)
        const output = yield* settle(request, checks, {
          content: choice.message.content,
          reasoning: choice.message.reasoning_content,
          toolCalls: choice.message.tool_calls ?? [],
          finish: choice.finish_reason
        }, usages, true)
        choices.push(toChoice(choice.index, output))
      }
      const usage = sumUsage(usages) ?? (yield* countUsage(request, choices.map((c) => textOfChoice(c)), usages.length))
      return { model: first.model, choices, usage }
    })

  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> =>
    Stream.unwrap(Effect.map(tokenCounter, () => {
      const guard = new StreamGuard(request, checksOf(request), policy, settle)
      return streamOnce(request).pipe(
        Stream.mapEffect((chunk) => guard.push(chunk)),
        Stream.takeUntil(() => guard.cutShort),
        Stream.concat(Stream.fromEffect(Effect.suspend(() => guard.end()))),
        Stream.flattenIterable
      )
    }))

  return ChatGateway.of({ models: model.models, defaultModel: model.defaultModel, complete, stream })
}

/** A whole choice cut at the first stop sequence (finish_reason becomes stop). */
const stopped = (choice: ChatChoice, stops: ReadonlyArray<string>): ChatChoice => {
  if (stops.length === 0 || choice.message.content === null) return choice
  const cut = applyStops(choice.message.content, stops)
  if (!cut.stopped) return choice
  return { ...choice, message: { ...choice.message, content: cut.text }, finish_reason: choice.message.tool_calls?.length ? choice.finish_reason : "stop" }
}

const toChoice = (index: number, output: Output): ChatChoice => ({
  index,
  message: {
    role: "assistant",
    content: output.content,
    reasoning_content: output.reasoning,
    ...(output.toolCalls.length > 0 ? { tool_calls: output.toolCalls } : {}),
    ...(output.note === undefined ? {} : { periscope_validation: output.note })
  },
  finish_reason: output.toolCalls.length > 0 && output.finish !== "length" ? "tool_calls" : output.finish,
  logprobs: null
})

const textOfChoice = (choice: ChatChoice): string =>
  (choice.message.content ?? "") + choice.message.reasoning_content +
  (choice.message.tool_calls ?? []).map((c) => c.function.name + c.function.arguments).join("")

/** Usage counted with the tokenizer when the backend reports none: the prompt once per request made. */
const countUsage = (request: ChatRequest, completions: ReadonlyArray<string>, requests: number): Effect.Effect<Usage> =>
  Effect.map(tokenCounter, (count) => {
    const prompt = countPromptTokens(count, request.messages) * requests
    let completion = 0
    for (const text of completions) completion += count(text)
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  })

// --- streams --------------------------------------------------------------------

interface ChoiceState {
  readonly scanner: StopScanner | undefined
  /** Content shown so far (or held, when the content must be validated first). */
  content: string
  held: string
  reasoning: string
  readonly calls: Map<number, { id: string; name: string; arguments: string }>
  done: boolean
}

type Settle = (request: ChatRequest, checks: Checks, output: Output, usages: Array<Usage | undefined>, contentReplaceable: boolean) => Effect.Effect<Output, ChatModelError>

/**
 * Per-choice state of a stream: content goes out as produced (minus a tail
 * that may be a stop sequence), reasoning passes through, tool calls are held
 * until the choice finishes and are sent whole once validated; content under
 * a JSON response format with the repair or retry policy is held too.
 */
class StreamGuard {
  private readonly states = new Map<number, ChoiceState>()
  private readonly usages: Array<Usage | undefined> = []
  private sawUsage = false
  private finished = 0
  private stoppedByGateway = false
  private readonly holdContent: boolean
  private readonly request: ChatRequest
  private readonly checks: Checks
  private readonly settle: Settle

  constructor(request: ChatRequest, checks: Checks, policy: ValidationPolicy, settle: Settle) {
    this.request = request
    this.checks = checks
    this.settle = settle
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

  push(chunk: ChatChunk): Effect.Effect<Array<ChatChunk>, ChatModelError> {
    if (chunk.usage !== undefined) {
      this.usages.push(chunk.usage)
      this.sawUsage = true
    }
    const out: Array<ChatChunk> = []
    const finishes: Array<[number, FinishReason]> = []
    const choices: Array<ChunkChoice> = []
    for (const choice of chunk.choices) {
      const state = this.state(choice.index)
      if (state.done) continue
      const delta: { -readonly [K in keyof ChunkDelta]: ChunkDelta[K] } = {}
      if (choice.delta.reasoning_content) {
        state.reasoning += choice.delta.reasoning_content
        delta.reasoning_content = choice.delta.reasoning_content
      }
      let stopHit = false
      if (choice.delta.content) {
        const shown = state.scanner === undefined ? choice.delta.content : state.scanner.push(choice.delta.content)
        stopHit = state.scanner?.stopped ?? false
        if (this.holdContent) state.held += shown
        else if (shown !== "") {
          state.content += shown
          delta.content = shown
        }
      }
      for (const call of choice.delta.tool_calls ?? []) this.addCallDelta(state, call)
      if (Object.keys(delta).length > 0) choices.push({ index: choice.index, delta, finish_reason: null })
      if (stopHit) {
        this.stoppedByGateway = true
        finishes.push([choice.index, "stop"])
      }
      else if (choice.finish_reason !== null) finishes.push([choice.index, choice.finish_reason])
    }
    if (choices.length > 0) out.push({ choices })
    if (finishes.length === 0) return Effect.succeed(out)
    return Effect.map(Effect.forEach(finishes, ([index, reason]) => this.finish(index, reason)), (ends) => [...out, ...ends.flat()])
  }

  /** Ends the stream: choices the backend left open finish as stop, then usage. */
  end(): Effect.Effect<Array<ChatChunk>, ChatModelError> {
    const open = [...this.states.entries()].filter(([, s]) => !s.done).map(([i]) => i)
    const self = this
    return Effect.gen(function*() {
      const out: Array<ChatChunk> = []
      for (const index of open) out.push(...(yield* self.finish(index, "stop")))
      const summed = self.sawUsage ? sumUsage(self.usages) : undefined
      const usage = summed ?? (yield* self.countedUsage())
      out.push({ choices: [], usage })
      return out
    })
  }

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

  private finish(index: number, reason: FinishReason): Effect.Effect<Array<ChatChunk>, ChatModelError> {
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
    const output: Output = { content: this.holdContent ? state.held : state.content, reasoning: state.reasoning, toolCalls, finish: reason }
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
      const finishReason: FinishReason = reason === "stop" && state.scanner?.stopped ? "stop" : settled.toolCalls.length > 0 && reason !== "length" ? "tool_calls" : reason
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
    return countUsage(this.request, texts, 1 + Math.max(0, this.usages.length - (this.sawUsage ? 1 : 0)))
  }
}
