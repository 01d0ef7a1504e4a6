/**
 * Token counts for usage when a backend reports none: OpenAI's o200k_base BPE
 * (gpt-tokenizer, pure JS). Exact for OpenAI's current models, a close
 * estimate for others. The ranks load lazily (about 150 ms) on first use.
 */
import { Effect } from "effect"
import type { ChatMessage } from "./ChatRequest.ts"
import { contentText } from "./ChatRequest.ts"

type Counter = (text: string) => number

let loaded: Promise<Counter> | undefined
const loadCounter = (): Promise<Counter> =>
  (loaded ??= import("gpt-tokenizer/encoding/o200k_base").then((m) => (text: string) => (text === "" ? 0 : m.countTokens(text))))

/** The counter, loaded once per process. */
export const tokenCounter: Effect.Effect<Counter> = Effect.promise(loadCounter)

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
