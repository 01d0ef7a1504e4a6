/**
 * The chat pipeline, the same whatever the backend: n by fan-out when the
 * backend cannot do n, stop sequences enforced across chunk boundaries,
 * tool calls and JSON output validated under a policy (pass, repair, retry),
 * and usage always reported. The HTTP layer and the embed library talk to
 * this service; backends provide ChatModel underneath it.
 */
import { Clock, Context, Effect, Layer, Option, Stream } from "effect"
import { JobRunner } from "../jobs/JobRunner.ts"
import { spannedIn } from "../store/Spans.ts"
import { mapArrays, stepArrays, withEnd, withStart } from "./ArrayStreams.ts"
import type { ChatChoice, ChatChunk, ChatResult, ModelInfo, Usage } from "./ChatCompletion.ts"
import { ChatModelError } from "./ChatError.ts"
import { ChatModel } from "./ChatModel.ts"
import type { ChatRequest } from "./ChatRequest.ts"
import { fanOutComplete, fanOutStream, sumUsage } from "./FanOut.ts"
import { finishReasonOf } from "./FinishReason.ts"
import { CitationPass, citeChoices, type GroundingPlan, groundedRequest, planOf, queryOf, reportOf } from "./GroundedAnswer.ts"
import { defaultGroundingSettings, Grounding, type Retrieval } from "./Grounding.ts"
import { searchResultsOf, SourceRegistry } from "./GroundingSources.ts"
import { type LoopState, loopComplete, loopStream } from "./ServerToolLoop.ts"
import { assessOutput } from "./OutputAssessment.ts"
import { type Checks, checksOf, defaultValidationPolicy, feedbackMessages, invalidOutput, limitsOf, type Output, type Problem, type ValidationPolicy } from "./OutputValidation.ts"
import { applyStops } from "./StopSequences.ts"
import { StreamGuard } from "./StreamGuard.ts"
import { TokenCount } from "./TokenCount.ts"
import { schemaBoundProblem } from "./ToolValidation.ts"

export { defaultValidationPolicy, type ValidationPolicy }

export interface GatewayResult extends ChatResult {
  readonly usage: Usage
}

export { Grounding }

export class ChatGateway extends Context.Service<ChatGateway, {
  readonly models: Effect.Effect<ReadonlyArray<ModelInfo>>
  readonly defaultModel: string
  complete(request: ChatRequest): Effect.Effect<GatewayResult, ChatModelError>
  /** Interrupting the stream (or stopping early on a stop sequence) cancels the backend. */
  stream(request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError>
}>()("periscope/chat/ChatGateway") {
  /**
   * The pipeline over whichever ChatModel backend is provided; it brings its own TokenCount.
   * Grounded requests need a Grounding service in context (core/app provides one); without
   * it they are refused with 400. A JobRunner in context takes the judging of large outputs
   * off the answering thread; without one, they are judged here, within the size bounds.
   */
  static readonly layer = (policy: ValidationPolicy = defaultValidationPolicy): Layer.Layer<ChatGateway, never, ChatModel> =>
    Layer.effect(
      ChatGateway,
      Effect.gen(function*() {
        const grounding = yield* Effect.serviceOption(Grounding)
        // Job threads, where the application provides them: large outputs are judged there.
        const jobs = yield* Effect.serviceOption(JobRunner)
        const model = yield* ChatModel
        // A wrapper that does not pass hasModel on still lists its models (aliases then read as unknown).
        const listed = new Set((yield* model.models).map((m) => m.id))
        const hasModel = model.hasModel ?? ((name: string) => listed.has(name))
        return makeGateway(model, yield* TokenCount, policy, Option.getOrUndefined(grounding), hasModel, Option.getOrUndefined(jobs))
      })
    ).pipe(Layer.provide(TokenCount.layer))
}

/** Per request: the sources found so far and how the tool loop went. */
interface GroundedRun {
  readonly plan: GroundingPlan
  readonly query: string
  readonly registry: SourceRegistry
  readonly retrieval: Retrieval | undefined
  readonly loop: LoopState
  /** What the model gets. */
  readonly request: ChatRequest
}

const isoDay = (millis: number) => new Date(millis).toISOString().slice(0, 10)

const makeGateway = (
  model: ChatModel["Service"],
  tokens: TokenCount["Service"],
  policy: ValidationPolicy,
  grounding: Grounding["Service"] | undefined,
  hasModel: (model: string) => boolean,
  jobs: JobRunner["Service"] | undefined
): ChatGateway["Service"] => {
  const settings = grounding?.settings ?? defaultGroundingSettings
  const limits = limitsOf(policy)
  // Server tools are set only on grounded requests; every choice then runs its own tool loop.
  const loops = new WeakMap<ChatRequest, GroundedRun>()
  const completeOnce = (request: ChatRequest): Effect.Effect<ChatResult, ChatModelError> => {
    const run = loops.get(request)
    if (run !== undefined && grounding !== undefined && (request.serverTools?.length ?? 0) > 0) {
      const loop = loopComplete({ grounding, registry: run.registry, maxRounds: settings.maxToolRounds, state: run.loop }, model.complete)
      return request.n > 1 ? fanOutComplete(request, loop) : loop(request)
    }
    return request.n > 1 && !model.supportsN(request.model) ? fanOutComplete(request, model.complete) : model.complete(request)
  }
  const streamOnce = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> => {
    const run = loops.get(request)
    if (run !== undefined && grounding !== undefined && (request.serverTools?.length ?? 0) > 0) {
      const loop = loopStream({ grounding, registry: run.registry, maxRounds: settings.maxToolRounds, state: run.loop }, model.stream)
      return request.n > 1 ? fanOutStream(request, loop) : loop(request)
    }
    return request.n > 1 && !model.supportsN(request.model) ? fanOutStream(request, model.stream) : model.stream(request)
  }

  /** Searches and builds the model's request for a grounded request (its plan made by planOf). */
  const prepare = Effect.fnUntraced(function*(request: ChatRequest, plan: GroundingPlan | ChatModelError): Effect.fn.Return<GroundedRun, ChatModelError> {
    if (plan instanceof ChatModelError) return yield* plan
    if (grounding === undefined) {
      return yield* new ChatModelError({ reason: "invalid_request", param: "web_search_options", message: "web_search_options: web search is not configured on this server" })
    }
    const query = queryOf(request.messages)
    const registry = new SourceRegistry()
    const retrieval = plan.search && query !== "" ? yield* grounding.retrieve(query, plan.size, request.web_search_options, registry) : undefined
    const today = isoDay(yield* Clock.currentTimeMillis)
    const modelRequest = groundedRequest(request, plan, query, registry, retrieval, today)
    const run: GroundedRun = { plan, query, registry, retrieval, loop: { rounds: 0, limitReached: false, calls: 0 }, request: modelRequest }
    loops.set(modelRequest, run)
    return run
  })

  /**
   * Applies the policy to one finished output; may ask the model again.
   * `contentReplaceable` is false for content already streamed to the client:
   * a retry then replaces only the tool calls.
   */
  const settle = Effect.fnUntraced(function*(request: ChatRequest, checks: Checks, output: Output, usages: Array<Usage | undefined>, contentReplaceable: boolean): Effect.fn.Return<Output, ChatModelError> {
    // An assessment is an Effect only when a large text went to a job thread.
    const first = assessOutput(checks, output)
    const assessed = Effect.isEffect(first) ? yield* first : first
    // Pass: everything is judged and marked; nothing is taken back or asked again.
    if (policy.mode === "pass") return marked(output, assessed.problems)
    let current = output
    let problems = assessed.problems
    for (let attempt = 0;; attempt++) {
      if (problems.length === 0) return current
      if (policy.mode === "repair") {
        const again = assessOutput(checks, current, problems)
        const repaired = Effect.isEffect(again) ? yield* again : again
        if (repaired.problems.length === 0) return repaired.output
        return yield* invalidOutput(repaired.problems, "after repair")
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
      const next = assessOutput(checks, current)
      problems = (Effect.isEffect(next) ? yield* next : next).problems
    }
  })

  // Traced without Effect.fn, whose call-site and span stack captures are two Errors per request;
  // the span keeps its name.
  const complete = (request: ChatRequest): Effect.Effect<GatewayResult, ChatModelError> =>
    Effect.withFiber((fiber) => spannedIn(fiber, completeNow(request), "ChatGateway.complete"))

  /**
   * A request schema over the configured size or depth: 400 naming it. The arrival check
   * (requestSchemaProblem) holds schemas to the most the settings allow; this, to the settings.
   */
  const boundError = (request: ChatRequest): ChatModelError | undefined => {
    const problem = schemaBoundProblem(request, limits)
    return problem === undefined ? undefined : new ChatModelError({ reason: "invalid_request", param: problem.param, message: problem.message })
  }

  const completeNow = (request: ChatRequest): Effect.Effect<GatewayResult, ChatModelError> => {
    const bound = boundError(request)
    if (bound !== undefined) return Effect.fail(bound)
    const plan = planOf(request, settings, hasModel)
    if (plan !== undefined) return Effect.flatMap(prepare(request, plan), (run) => completeGrounded(request, run))
    const checks = checksOf(request, limits, jobs)
    return Effect.flatMap(completeOnce(request), (first) =>
      // Nothing to validate (no tools, no JSON format, no tool calls) and usage reported: only stops apply.
      first.usage !== undefined && checks.catalog.names.length === 0 && checks.content === undefined &&
          first.choices.every((c) => (c.message.tool_calls?.length ?? 0) === 0)
        ? Effect.succeed({ model: first.model, choices: first.choices.map((c) => stopped(c, request.stop)), usage: first.usage })
        : settleAll(request, checks, first))
  }

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

  /** The answer names the model as asked (`x:online` included); citations verified last, after stops and validation. */
  const completeGrounded = Effect.fnUntraced(function*(asked: ChatRequest, run: GroundedRun): Effect.fn.Return<GatewayResult, ChatModelError> {
    const settled = yield* settleAll(run.request, checksOf(run.request, limits, jobs), yield* completeOnce(run.request))
    const cited = citeChoices(settled.choices, run.registry)
    return {
      model: asked.model,
      choices: cited.choices,
      usage: settled.usage,
      search_results: run.registry.sources.map((s) => ({ title: s.title, url: s.url, snippet: s.snippet, date: s.date })),
      periscope_grounding: reportOf(run.plan, run.query, run.registry, run.retrieval, run.loop, cited.removed)
    }
  })

  // No span around the stream: Stream.withSpan is paid on every chunk (test/bench/gateway.ts, CPU
  // per stream); the backend's opening of the stream is traced (OpenAiUpstream.stream, GroundedModel.stream).
  // One step per pulled array, an Effect only when a choice finishes (see ArrayStreams).
  const guarded = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> =>
    Stream.suspend(() => {
      const guard = new StreamGuard(request, checksOf(request, limits, jobs), policy, settle, tokens)
      return withEnd(stepArrays(streamOnce(request), (chunk) => guard.step(chunk), () => guard.cutShort), () => guard.end())
    })

  /** Retrieval happens before the first chunk; then the guarded stream, then the citation step. */
  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> =>
    Stream.suspend(() => {
      const bound = boundError(request)
      if (bound !== undefined) return Stream.fail(bound)
      const plan = planOf(request, settings, hasModel)
      return plan === undefined ? guarded(request) : Stream.unwrap(Effect.map(prepare(request, plan), groundedStream))
    })

  /**
   * A grounded answer's stream: citations checked and numbered as the chunks pass. A search made
   * before the model is asked is told first, in a chunk without choices (its sources and report so
   * far), so that a wire can show the search as done before the answer (the Responses API's
   * web_search_call); chat's stream shows sources only on its last chunk.
   */
  const groundedStream = (run: GroundedRun): Stream.Stream<ChatChunk, ChatModelError> => {
    const report = (removed: number) => reportOf(run.plan, run.query, run.registry, run.retrieval, run.loop, removed)
    const pass = new CitationPass(run.registry, report)
    const answer = mapArrays(guarded(run.request), (chunks) => {
      const out: Array<ChatChunk> = []
      for (const chunk of chunks) out.push(...pass.push(chunk))
      return out
    }).pipe((chunks) => withEnd(chunks, () => [pass.end()]))
    if (!run.plan.search) return answer
    return withStart([{ choices: [], search_results: searchResultsOf(run.registry.sources), periscope_grounding: report(0) }], answer)
  }

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
