/**
 * `periscope-grounded`: a model that needs no upstream. The gateway grounds every request to
 * it (the same path as `web_search_options` and `:online`: FederatedSearch, numbered sources);
 * it quotes whole sentences of the sources it was given (Quote.ts), each cited as `[k]`, so its
 * answers carry the same annotations and search_results as any grounded answer. reasoning_content says what was
 * searched. It retrieves and quotes, it does not generate. It streams like any model, honours
 * max_tokens (finish_reason length) and n, never calls a tool, and leaves stop sequences to
 * the gateway like every backend.
 */
import { Effect, Stream } from "effect"
import type { ChatChoice, ChatChunk, ChatResult, ModelInfo } from "./ChatCompletion.ts"
import type { ChatModelError } from "./ChatError.ts"
import type { ChatModel } from "./ChatModel.ts"
import type { ChatRequest, GroundingSource } from "./ChatRequest.ts"
import { finishReasonOf } from "./FinishReason.ts"
import { quoteOf } from "./Quote.ts"
import type { TokenCount } from "./TokenCount.ts"

export const GROUNDED_MODEL = "periscope-grounded"

interface Answer {
  readonly content: string
  readonly reasoning: string
  /** Cut to max_tokens: the model reports length. */
  readonly truncated: boolean
}

/** A source's line: its title, whole sentences from its text (or else its snippet) when it has any, its marker. */
const lineOf = (source: GroundingSource, query: string, position: number): string => {
  const quote = quoteOf(source.text, query, source.title) ?? (source.snippet === source.text ? undefined : quoteOf(source.snippet, query, source.title))
  return `${position}. ${source.title || source.url}${quote === undefined ? "" : `: "${quote}"`} [${source.number}]`
}

const compose = (request: ChatRequest): { content: string; reasoning: string } => {
  const grounding = request.grounding
  if (grounding === undefined || grounding.query === "") {
    return { content: "There is no user message to search for.", reasoning: "No user message: nothing was searched." }
  }
  const { query, sources } = grounding
  if (sources.length === 0) {
    return {
      content: `The search found nothing on "${query}".`,
      reasoning: `Searched for "${query}": no results. This model retrieves and quotes; it does not generate.`
    }
  }
  const quotes = sources.map((s, i) => lineOf(s, query, i + 1)).join("\n\n")
  return {
    content: `From the sources found for "${query}":\n\n${quotes}`,
    reasoning: `Searched for "${query}": ${sources.length} sources; quoting each. This model retrieves and quotes; it does not generate.`
  }
}

const finishOf = (answer: Answer) => finishReasonOf({ reported: answer.truncated ? "length" : null, toolCalls: 0 })

const splitWords = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? []

/** `tokens` counts max_tokens and usage. The sources come with the request (`request.grounding`). */
export const makeGroundedModel = (tokens: TokenCount["Service"]): ChatModel["Service"] => {
  const answer = Effect.fnUntraced(function*(request: ChatRequest): Effect.fn.Return<Answer, ChatModelError> {
    const { count, truncate } = yield* tokens.encoding
    const { content, reasoning } = compose(request)
    // max_tokens bounds what is generated: the reasoning comes first, then the content; a cut answer reports length.
    const budget = request.max_tokens
    const reasoningTokens = count(reasoning)
    if (reasoningTokens >= budget) return { content: "", reasoning: truncate(reasoning, budget), truncated: true }
    const left = budget - reasoningTokens
    if (count(content) <= left) return { content, reasoning, truncated: false }
    return { content: truncate(content, left), reasoning, truncated: true }
  })

  /** Retrieval is deterministic: every choice gets the same answer, and the same usage. */
  const usageFor = (request: ChatRequest, one: Answer) =>
    tokens.countUsage(request, Array.from({ length: request.n }, () => [one.content, one.reasoning]).flat(), 1)

  const complete = Effect.fn("GroundedModel.complete")(function*(request: ChatRequest): Effect.fn.Return<ChatResult, ChatModelError> {
    const one = yield* answer(request)
    const choices: Array<ChatChoice> = Array.from({ length: request.n }, (_, index) => ({
      index,
      message: { role: "assistant", content: one.content, reasoning_content: one.reasoning },
      finish_reason: finishOf(one),
      logprobs: null
    }))
    return { model: GROUNDED_MODEL, choices, usage: yield* usageFor(request, one) }
  })

  /** The answer is ready before the first chunk: the span covers the search. */
  const open = Effect.fn("GroundedModel.stream")(function*(request: ChatRequest): Effect.fn.Return<Stream.Stream<ChatChunk>, ChatModelError> {
    const one = yield* answer(request)
    const usage = yield* usageFor(request, one)
    const chunks: Array<ChatChunk> = []
    for (let index = 0; index < request.n; index++) {
      for (const word of splitWords(one.reasoning)) chunks.push({ choices: [{ index, delta: { reasoning_content: word }, finish_reason: null }] })
      for (const word of splitWords(one.content)) chunks.push({ choices: [{ index, delta: { content: word }, finish_reason: null }] })
      chunks.push({ choices: [{ index, delta: {}, finish_reason: finishOf(one) }] })
    }
    chunks.push({ choices: [], usage })
    return Stream.fromIterable(chunks)
  })

  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ChatModelError> => Stream.unwrap(open(request))

  const info: ModelInfo = { id: GROUNDED_MODEL, object: "model", created: 0, owned_by: "periscope" }
  return { models: Effect.succeed([info]), defaultModel: GROUNDED_MODEL, supportsN: () => true, hasModel: (m) => m === GROUNDED_MODEL, complete, stream }
}
