/**
 * The chat pipeline, the same whatever the backend: n by fan-out when the
 * backend cannot do n, stop sequences enforced across chunk boundaries,
 * tool calls and JSON output validated under a policy (pass, repair, retry),
 * and usage always reported. The HTTP layer and the embed library talk to
 * this service; backends provide ChatModel underneath it.
 */
import { Context, Effect, Layer, Stream } from "effect"
import type { ChatChoice, ChatChunk, ChatResult, ModelInfo, Usage } from "./ChatCompletion.ts"
import type { ChatModelError } from "./ChatError.ts"
import { ChatModel } from "./ChatModel.ts"
import type { ChatRequest } from "./ChatRequest.ts"
import { fanOutComplete, fanOutStream, sumUsage } from "./FanOut.ts"
import { finishReasonOf } from "./FinishReason.ts"
import { type Checks, checksOf, defaultValidationPolicy, feedbackMessages, invalidOutput, type Output, type Problem, problemsOf, type ValidationPolicy } from "./OutputValidation.ts"
import { applyStops } from "./StopSequences.ts"
import { StreamGuard } from "./StreamGuard.ts"
import { TokenCount } from "./TokenCount.ts"
import { repairJson } from "./ToolValidation.ts"

export { defaultValidationPolicy, type ValidationPolicy }

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
  /** The pipeline over whichever ChatModel backend is provided; it brings its own TokenCount. */
  static readonly layer = (policy: ValidationPolicy = defaultValidationPolicy): Layer.Layer<ChatGateway, never, ChatModel> =>
    Layer.effect(
      ChatGateway,
      Effect.gen(function*() {
        return makeGateway(yield* ChatModel, yield* TokenCount, policy)
      })
    ).pipe(Layer.provide(TokenCount.layer))
}

const makeGateway = (model: ChatModel["Service"], tokens: TokenCount["Service"], policy: ValidationPolicy): ChatGateway["Service"] => {
  const completeOnce = (request: ChatRequest) =>
    request.n > 1 && !model.supportsN(request.model) ? fanOutComplete(request, model.complete) : model.complete(request)
  const streamOnce = (request: ChatRequest) =>
    request.n > 1 && !model.supportsN(request.model) ? fanOutStream(request, model.stream) : model.stream(request)

  /**
   * Applies the policy to one finished output; may ask the model again.
   * `contentReplaceable` is false for content already streamed to the client:
   * a retry then replaces only the tool calls.
   */
  const settle = Effect.fnUntraced(function*(request: ChatRequest, checks: Checks, output: Output, usages: Array<Usage | undefined>, contentReplaceable: boolean): Effect.fn.Return<Output, ChatModelError> {
    // Pass: everything is judged and marked; nothing is taken back or asked again.
    if (policy.mode === "pass") return marked(output, problemsOf(checks, output.content, output.toolCalls))
    let current = output
    for (let attempt = 0;; attempt++) {
      const problems = problemsOf(checks, current.content, current.toolCalls)
      if (problems.length === 0) return current
      if (policy.mode === "repair") {
        const toolCalls = current.toolCalls.map((call) => checks.catalog.repair(call).call)
        const content = current.content !== null && problems.some((p) => p.kind === "content") ? repairJson(current.content) ?? current.content : current.content
        const remaining = problemsOf(checks, content, toolCalls)
        if (remaining.length === 0) return { ...current, toolCalls, content }
        return yield* invalidOutput(remaining, "after repair")
      }
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
  })

  const complete = Effect.fn("ChatGateway.complete")(function*(request: ChatRequest): Effect.fn.Return<GatewayResult, ChatModelError> {
    const checks = checksOf(request)
    const first = yield* completeOnce(request)
    // Nothing to validate (no tools, no JSON format, no tool calls) and usage reported: only stops apply.
    if (
      first.usage !== undefined && checks.catalog.names.length === 0 && checks.content === undefined &&
      first.choices.every((c) => (c.message.tool_calls?.length ?? 0) === 0)
    ) return { model: first.model, choices: first.choices.map((c) => stopped(c, request.stop)), usage: first.usage }
    return yield* settleAll(request, checks, first)
  })

  const settleAll = Effect.fnUntraced(function*(request: ChatRequest, checks: Checks, first: ChatResult): Effect.fn.Return<GatewayResult, ChatModelError> {
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
    const usage = sumUsage(usages) ?? (yield* tokens.countUsage(request, choices.map((c) => textOfChoice(c)), usages.length))
    return { model: first.model, choices, usage }
  })

  // No span around the stream: Stream.withSpan costs about 1 µs per chunk (measured on a bare
  // stream); the backend's opening of the stream is traced (OpenAiUpstream.stream, GroundedModel.stream).
  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> =>
    Stream.suspend(() => {
      const guard = new StreamGuard(request, checksOf(request), policy, settle, tokens)
      return streamOnce(request).pipe(
        Stream.mapEffect((chunk) => guard.push(chunk)),
        Stream.takeUntil(() => guard.cutShort),
        Stream.concat(Stream.fromEffect(Effect.suspend(() => guard.end()))),
        Stream.flattenIterable
      )
    })

  return ChatGateway.of({ models: model.models, defaultModel: model.defaultModel, complete, stream })
}

/** Under the pass policy: invalid tool calls and content go out, each marked with what is wrong. */
const marked = (output: Output, problems: ReadonlyArray<Problem>): Output => {
  if (problems.length === 0) return output
  const content = problems.find((p) => p.kind === "content")
  return {
    ...output,
    toolCalls: output.toolCalls.map((call, index) => {
      const problem = problems.find((p) => p.kind === "tool" && p.index === index)
      return problem === undefined ? call : { ...call, periscope_validation: { valid: false, error: problem.error } }
    }),
    note: content === undefined ? undefined : { valid: false, error: content.error }
  }
}

/** A whole choice cut at the first stop sequence. */
const stopped = (choice: ChatChoice, stops: ReadonlyArray<string>): ChatChoice => {
  if (stops.length === 0 || choice.message.content === null) return choice
  const cut = applyStops(choice.message.content, stops)
  if (!cut.stopped) return choice
  return {
    ...choice,
    message: { ...choice.message, content: cut.text },
    finish_reason: finishReasonOf({ reported: choice.finish_reason, toolCalls: choice.message.tool_calls?.length ?? 0, stopSequence: true })
  }
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
  finish_reason: finishReasonOf({ reported: output.finish, toolCalls: output.toolCalls.length }),
  logprobs: null
})

const textOfChoice = (choice: ChatChoice): string =>
  (choice.message.content ?? "") + choice.message.reasoning_content +
  (choice.message.tool_calls ?? []).map((c) => c.function.name + c.function.arguments).join("")
