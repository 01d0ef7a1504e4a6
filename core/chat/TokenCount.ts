/**
 * Token counts for usage when a backend reports none: OpenAI's o200k_base BPE
 * (gpt-tokenizer, pure JS). Exact for OpenAI's current models, a close
 * estimate for others. The ranks load lazily (about 150 ms) on first use.
 */
import { Effect } from "effect"
import type { Usage } from "./ChatCompletion.ts"
import type { ChatMessage, ChatRequest } from "./ChatRequest.ts"
import { contentText } from "./ChatRequest.ts"

type Counter = (text: string) => number

interface Tokenizer {
  readonly count: Counter
  /** The longest prefix of `text` that fits in `max` tokens. */
  readonly truncate: (text: string, max: number) => string
}

let loading: Promise<Tokenizer> | undefined
let loaded: Tokenizer | undefined
const loadTokenizer = (): Promise<Tokenizer> =>
  (loading ??= import("gpt-tokenizer/encoding/o200k_base").then((m) => {
    loaded = {
      count: (text: string) => (text === "" ? 0 : m.countTokens(text)),
      truncate: (text: string, max: number) => {
        const tokens = m.encode(text)
        return tokens.length <= max ? text : m.decode(tokens.slice(0, max))
      }
    }
    return loaded
  }))

/** The tokenizer, loaded once per process; after that, synchronously (no async hop per request). */
export const tokenizer: Effect.Effect<Tokenizer> = Effect.suspend(() =>
  loaded !== undefined ? Effect.succeed(loaded) : Effect.promise(loadTokenizer)
)

/** The counter, loaded once per process. */
export const tokenCounter: Effect.Effect<Counter> = Effect.map(tokenizer, (t) => t.count)

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

/** Usage counted with the tokenizer when the backend reports none: the prompt once per request made. */
export const countUsage = (request: ChatRequest, completions: ReadonlyArray<string>, requests: number): Effect.Effect<Usage> =>
  Effect.map(tokenCounter, (count) => {
    const prompt = countPromptTokens(count, request.messages) * requests
    let completion = 0
    for (const text of completions) completion += count(text)
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  })

