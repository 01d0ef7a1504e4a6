/**
 * `periscope-grounded`: a model that needs no upstream. It answers the last
 * user message from the local search index, quoting the top passages with
 * their links; reasoning_content says what was searched. It retrieves and
 * quotes, it does not generate. It streams like any model, honours
 * max_tokens (finish_reason length) and n, never calls a tool, and leaves
 * stop sequences to the gateway like every backend.
 */
import { Effect, Stream } from "effect"
import type { WebSearchData } from "../search/SearchResult.ts"
import type { WebSearch } from "../search/WebSearch.ts"
import type { ChatChoice, ChatChunk, ChatResult, ModelInfo } from "./ChatCompletion.ts"
import { ChatModelError } from "./ChatError.ts"
import type { ChatModel } from "./ChatModel.ts"
import { type ChatRequest, contentText } from "./ChatRequest.ts"
import { finishReasonOf } from "./FinishReason.ts"
import { TokenCount } from "./TokenCount.ts"

export const GROUNDED_MODEL = "periscope-grounded"
const PASSAGES = 3
const MAX_QUERY_LENGTH = 1000

interface Answer {
  readonly content: string
  readonly reasoning: string
  /** Cut to max_tokens: the model reports length. */
  readonly truncated: boolean
}

const lastUserText = (request: ChatRequest): string => {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!
    if (message.role === "user") return contentText(message.content).replace(/\s+/g, " ").trim().slice(0, MAX_QUERY_LENGTH)
  }
  return ""
}

const compose = (query: string, data: WebSearchData): { content: string; reasoning: string } => {
  const top = data.organic.slice(0, PASSAGES)
  if (top.length === 0) {
    return {
      content: `The local index has nothing on "${query}".`,
      reasoning: `Searched the local index for "${query}": no results. This model retrieves and quotes; it does not generate.`
    }
  }
  const quotes = top.map((r, i) => `${i + 1}. ${r.title}\n   "${r.snippet}"\n   Source: ${r.link}`).join("\n\n")
  return {
    content: `From the local index, on "${query}":\n\n${quotes}`,
    reasoning: `Searched the local index for "${query}": ${data.organic.length} results; quoting the top ${top.length}. This model retrieves and quotes; it does not generate.`
  }
}

const finishOf = (answer: Answer) => finishReasonOf({ reported: answer.truncated ? "length" : null, toolCalls: 0 })

const splitWords = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? []

/** `tokens` counts max_tokens and usage. */
export const makeGroundedModel = (web: WebSearch["Service"], tokens: TokenCount["Service"]): ChatModel["Service"] => {
  const answer = Effect.fnUntraced(function*(request: ChatRequest): Effect.fn.Return<Answer, ChatModelError> {
    const query = lastUserText(request)
    const { count, truncate } = yield* tokens.encoding
    if (query === "") {
      return { content: "There is no user message to search for.", reasoning: "No user message: nothing was searched.", truncated: false }
    }
    const data = yield* web.search({ keywords: query, num: 10 }).pipe(
      Effect.mapError((e) => new ChatModelError({ reason: "unavailable", message: `the local index could not answer: ${e.message}` }))
    )
    const { content, reasoning } = compose(query, data)
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
  return { models: Effect.succeed([info]), defaultModel: GROUNDED_MODEL, supportsN: () => true, complete, stream }
}
