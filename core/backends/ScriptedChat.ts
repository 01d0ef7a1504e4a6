/**
 * A chat backend that answers from a script: replies, reasoning, tool calls
 * and stream pieces given by the caller, with delays and failures (before a
 * completion or mid-stream). Public API for testing agents offline; it also
 * reports how each answer ended (completed, failed, interrupted) through
 * `onEnd`, so tests can see that a client going away stopped the work.
 */
import { Cause, Effect, Exit, Layer, Stream } from "effect"
import type { ChatChoice, ChatChunk, ChatResult, ModelInfo, ToolCallDelta, Usage } from "../chat/ChatCompletion.ts"
import { ChatModelError } from "../chat/ChatError.ts"
import { ChatModel } from "../chat/ChatModel.ts"
import type { ChatRequest, ToolCall } from "../chat/ChatRequest.ts"
import { type FinishReason, finishReasonOf } from "../chat/FinishReason.ts"
import { type Counter, countPromptTokens, TokenCount } from "../chat/TokenCount.ts"

export interface ScriptedToolCall {
  readonly name: string
  /** JSON text, or an object that is serialised; invalid JSON text is sent as is. */
  readonly arguments: string | Record<string, unknown>
  readonly id?: string
}

/** One streamed piece: text, reasoning, or a fragment of a tool call. */
export type ScriptedPiece =
  | { readonly content: string }
  | { readonly reasoning: string }
  | { readonly toolCall: ToolCallDelta }

export interface ScriptedReply {
  readonly content?: string
  readonly reasoning?: string
  readonly toolCalls?: ReadonlyArray<ScriptedToolCall>
  /** Default: tool_calls when the reply calls tools, stop otherwise. */
  readonly finishReason?: FinishReason
  /** Stream exactly these pieces; by default reasoning and content go word by word, tool calls whole. */
  readonly pieces?: ReadonlyArray<ScriptedPiece>
  /** Wait before each streamed piece, and before a whole completion. */
  readonly delayMs?: number
  /** Fail after this many streamed pieces (0: before any); a whole completion fails outright. */
  readonly failAfter?: number
  readonly failure?: { readonly reason: ChatModelError["reason"]; readonly message: string }
  /** Default: counted with the o200k_base tokenizer. */
  readonly usage?: Usage
}

/**
 * How an answer ended: completed (everything was delivered), failed (a
 * scripted failure), or cancelled (the consumer went away first: the client
 * disconnected, or stopped reading).
 */
export type ScriptedEnd = { readonly kind: "completed" | "failed" | "cancelled"; readonly model: string }

export interface ScriptedChatOptions {
  /** Model names served; the first is the default. Default ["periscope-scripted"]. */
  readonly models?: ReadonlyArray<string>
  /** Replies used in turn (one per choice, cycling), or a function of the request and choice index. */
  readonly replies: ReadonlyArray<ScriptedReply> | ((request: ChatRequest, choice: number) => ScriptedReply)
  readonly onEnd?: (end: ScriptedEnd) => void
  /** Whether it answers n > 1 itself (default true); false makes the gateway fan out, like many upstreams. */
  readonly answersN?: boolean
  /** Whether it reports usage (default true); false makes the gateway count tokens itself. */
  readonly reportsUsage?: boolean
}

const splitWords = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? []

/** The pieces a reply streams as, in order: reasoning, content, then tool calls. */
const piecesOf = (reply: ScriptedReply): ReadonlyArray<ScriptedPiece> => {
  if (reply.pieces !== undefined) return reply.pieces
  const pieces: Array<ScriptedPiece> = []
  for (const word of splitWords(reply.reasoning ?? "")) pieces.push({ reasoning: word })
  for (const word of splitWords(reply.content ?? "")) pieces.push({ content: word })
  reply.toolCalls?.forEach((call, index) => {
    const full = toToolCall(call, index)
    pieces.push({ toolCall: { index, id: full.id, type: "function", function: { name: full.function.name, arguments: full.function.arguments } } })
  })
  return pieces
}

const toToolCall = (call: ScriptedToolCall, index: number): ToolCall => ({
  id: call.id ?? `call_scripted_${index}`,
  type: "function",
  function: {
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)
  }
})

/** What the script says, as a backend reports it; unsaid, as any unreported finish reads. */
const finishOf = (reply: ScriptedReply): FinishReason =>
  reply.finishReason ?? finishReasonOf({ reported: undefined, toolCalls: reply.toolCalls?.length ?? 0 })

const failureOf = (reply: ScriptedReply) =>
  new ChatModelError(reply.failure ?? { reason: "upstream", message: "scripted failure" })

const makeScriptedChat = (options: ScriptedChatOptions, tokens: TokenCount["Service"]): ChatModel["Service"] => {
  const models = options.models ?? ["periscope-scripted"]
  let turn = 0
  const replyFor = (request: ChatRequest, choice: number): ScriptedReply => {
    if (typeof options.replies === "function") return options.replies(request, choice)
    const replies = options.replies
    if (replies.length === 0) return { content: "" }
    return replies[turn++ % replies.length]!
  }
  // A loop: Array.from over {length: n} takes V8's generic array-like path, and `npm start` answers
  // every chat here until a model is configured.
  const repliesFor = (request: ChatRequest): Array<ScriptedReply> => {
    const replies = new Array<ScriptedReply>(request.n)
    for (let i = 0; i < request.n; i++) replies[i] = replyFor(request, i)
    return replies
  }
  const report = (model: string, exit: Exit.Exit<unknown, unknown>, delivered: boolean) =>
    Effect.sync(() =>
      options.onEnd?.({
        kind: Exit.isSuccess(exit) ? (delivered ? "completed" : "cancelled") : Cause.hasInterruptsOnly(exit.cause) ? "cancelled" : "failed",
        model
      })
    )

  const unknownModel = (request: ChatRequest) =>
    new ChatModelError({ reason: "model_not_found", message: `model ${JSON.stringify(request.model)} does not exist; GET /v1/models lists the models`, param: "model" })
  const checkModel = (request: ChatRequest) => models.includes(request.model) ? Effect.void : Effect.fail(unknownModel(request))

  // The tokenizer loads on first use; after that it is kept here and used without a step.
  let counter: Counter | undefined
  const withCounter = <A>(f: (count: Counter) => A): Effect.Effect<A> =>
    counter !== undefined ? Effect.sync(() => f(counter!)) : Effect.map(tokens.encoding, ({ count }) => f(counter = count))
  const usageOf = (request: ChatRequest, replies: ReadonlyArray<ScriptedReply>) => withCounter((count) => countUsage(count, request, replies))
  const countUsage = (count: Counter, request: ChatRequest, replies: ReadonlyArray<ScriptedReply>): Usage => {
    const given = replies.length === 1 ? replies[0]!.usage : undefined
    if (given !== undefined) return given
    const prompt = countPromptTokens(count, request.messages)
    let completion = 0
    for (const r of replies) {
      if (r.usage !== undefined) { completion += r.usage.completion_tokens; continue }
      completion += count(r.content ?? "") + count(r.reasoning ?? "")
      for (const call of r.toolCalls ?? []) completion += count(toToolCall(call, 0).function.arguments)
    }
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  }

  const choiceOf = (r: ScriptedReply, index: number): ChatChoice => ({
    index,
    message: {
      role: "assistant",
      content: r.content ?? ((r.toolCalls?.length ?? 0) > 0 ? null : ""),
      reasoning_content: r.reasoning ?? "",
      ...(r.toolCalls !== undefined && r.toolCalls.length > 0 ? { tool_calls: r.toolCalls.map(toToolCall) } : {})
    },
    finish_reason: finishOf(r),
    logprobs: null
  })

  // Plain code: test/bench/http.ts measures the server's own cost over this backend, so it should add little.
  const answer = (request: ChatRequest): Effect.Effect<ChatResult, ChatModelError> => {
    if (!models.includes(request.model)) return Effect.fail(unknownModel(request))
    const replies = repliesFor(request)
    let delay = 0
    for (const r of replies) delay = Math.max(delay, r.delayMs ?? 0)
    const failing = replies.find((r) => r.failAfter !== undefined || r.failure !== undefined)
    const result: Effect.Effect<ChatResult, ChatModelError> = failing !== undefined
      ? Effect.fail(failureOf(failing))
      : options.reportsUsage === false
      // No usage to report: the tokenizer is not needed (nor loaded).
      ? Effect.sync(() => ({ model: request.model, choices: replies.map(choiceOf) }))
      : withCounter((count) => ({ model: request.model, choices: replies.map(choiceOf), usage: countUsage(count, request, replies) }))
    return delay > 0 ? Effect.andThen(Effect.sleep(delay), result) : result
  }

  const complete = (request: ChatRequest): Effect.Effect<ChatResult, ChatModelError> => {
    const answered = Effect.suspend(() => answer(request))
    return options.onEnd === undefined ? answered : Effect.onExit(answered, (exit) => report(request.model, exit, true))
  }

  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> => {
    // A consumer that stops pulling ends the stream without an error: only the last chunk marks delivery.
    const delivery = { delivered: false }
    return Stream.unwrap(streamOf(request, delivery)).pipe(Stream.onExit((exit) => report(request.model, exit, delivery.delivered)))
  }

  const streamOf = Effect.fnUntraced(function*(request: ChatRequest, delivery: { delivered: boolean }) {
    yield* checkModel(request)
    const replies = repliesFor(request)
    const usage = yield* usageOf(request, replies)
    // Choices stream one after another; each piece is one chunk.
    const perChoice = replies.map((reply, index) => {
      const pieces = piecesOf(reply)
      const body = Stream.fromIterable(pieces.map((piece, at) => ({ piece, at }))).pipe(
        Stream.mapEffect(({ piece, at }) => {
          const wait = reply.delayMs ? Effect.sleep(reply.delayMs) : Effect.void
          const fail = reply.failAfter === at ? Effect.fail(failureOf(reply)) : Effect.void
          return Effect.andThen(wait, Effect.as(fail, pieceChunk(index, piece)))
        })
      )
      const tail: Stream.Stream<ChatChunk, ChatModelError> = reply.failAfter !== undefined && reply.failAfter >= pieces.length
        ? Stream.fail(failureOf(reply))
        : Stream.succeed({ choices: [{ index, delta: {}, finish_reason: finishOf(reply) }] })
      return Stream.concat(body, tail)
    })
    const all = perChoice.reduce((acc, s) => Stream.concat(acc, s))
    const last = Stream.sync((): ChatChunk => {
      delivery.delivered = true
      return options.reportsUsage === false ? { choices: [] } : { choices: [], usage }
    })
    return Stream.concat(all, last)
  })

  const modelInfos: ReadonlyArray<ModelInfo> = models.map((id) => ({ id, object: "model", created: 0, owned_by: "periscope" }))

  return ChatModel.of({
    models: Effect.succeed(modelInfos),
    defaultModel: models[0]!,
    supportsN: () => options.answersN !== false,
    hasModel: (model) => models.includes(model),
    complete,
    stream
  })
}

const pieceChunk = (index: number, piece: ScriptedPiece): ChatChunk => ({
  choices: [{
    index,
    delta: "content" in piece
      ? { content: piece.content }
      : "reasoning" in piece
      ? { reasoning_content: piece.reasoning }
      : { tool_calls: [piece.toolCall] },
    finish_reason: null
  }]
})

export const ScriptedChat = {
  /** ChatModel answered from a script; it brings its own TokenCount for the usage it reports. */
  layer: (options: ScriptedChatOptions): Layer.Layer<ChatModel> =>
    Layer.effect(ChatModel, Effect.map(Effect.service(TokenCount), (tokens) => makeScriptedChat(options, tokens))).pipe(
      Layer.provide(TokenCount.layer)
    )
} as const

/** The chat Periscope answers with until a model is configured: it says so. */
export const unconfiguredChat: ScriptedChatOptions = {
  models: ["periscope-scripted"],
  replies: [{
    content: "Periscope is running without a chat model upstream; this reply comes from the scripted backend."
  }]
}
