/**
 * Token counts for usage when a backend reports none: OpenAI's o200k_base BPE
 * (gpt-tokenizer, pure JS). Exact for OpenAI's current models, a close
 * estimate for others. The ranks load on first use (a noticeable wait, and memory
 * a server whose upstreams report usage never needs), once per process
 * (core/search/TokenEncoding.ts, which search content budgets share);
 * after that the encoding comes back synchronously, with no async hop per
 * request (that hop showed in the gateway bench), and counting is plain code.
 */
import { Context, Effect, Layer } from "effect"
import { type Encoding, o200kEncoding } from "../search/TokenEncoding.ts"
import type { Usage } from "./ChatCompletion.ts"
import type { ChatMessage, ChatRequest } from "./ChatRequest.ts"
import { contentText } from "./ChatRequest.ts"

export type Counter = (text: string) => number

export type { Encoding }

const loadEncoding: Effect.Effect<Encoding> = o200kEncoding

/** OpenAI's chat framing: about 3 tokens per message plus 3 to prime the reply. */
const PER_MESSAGE = 3
const REPLY_PRIMING = 3

export const countPromptTokens = (count: Counter, messages: ReadonlyArray<ChatMessage>): number => {
  let total = REPLY_PRIMING
  for (const m of messages) {
    total += PER_MESSAGE + count(contentText(m.content))
    if (m.name !== undefined) total += 1 + count(m.name)
    for (const call of m.tool_calls ?? []) total += count(call.function.name) + count(call.function.arguments)
  }
  return total
}

/** Usage of `completions` for `request`: the prompt once per request made (fan-out, retries). */
export const usageOf = (count: Counter, request: ChatRequest, completions: ReadonlyArray<string>, requests: number): Usage => {
  const prompt = countPromptTokens(count, request.messages) * requests
  let completion = 0
  for (const text of completions) completion += count(text)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/** The o200k_base encoding, loaded once per service on first use. */
export class TokenCount extends Context.Service<TokenCount, {
  /** Loads on first use; after that it succeeds at once. */
  readonly encoding: Effect.Effect<Encoding>
  /** Usage counted when a backend reports none (see `usageOf`). */
  countUsage(request: ChatRequest, completions: ReadonlyArray<string>, requests: number): Effect.Effect<Usage>
}>()("periscope/chat/TokenCount") {
  /** A service whose encoding loads lazily, for those that build services by hand. */
  static readonly make: Effect.Effect<TokenCount["Service"]> = Effect.map(
    Effect.cached(loadEncoding),
    (encoding) =>
      TokenCount.of({
        encoding,
        countUsage: (request, completions, requests) => Effect.map(encoding, ({ count }) => usageOf(count, request, completions, requests))
      })
  )

  static readonly layer: Layer.Layer<TokenCount> = Layer.effect(TokenCount, TokenCount.make)
}
