/**
 * OpenAI's o200k_base BPE (gpt-tokenizer, pure JS): the tokens search content is budgeted in
 * (`maxTokens`) and chat usage is counted in (core/chat/TokenCount.ts). Exact for OpenAI's
 * current models, a close estimate for others. The ranks load on first use, once per process,
 * so a server that never counts never holds them.
 */
import { Effect } from "effect"

export interface Encoding {
  readonly count: (text: string) => number
  /** The longest prefix of `text` that fits in `max` tokens. */
  readonly truncate: (text: string, max: number) => string
}

let loading: Promise<Encoding> | undefined

const load = (): Promise<Encoding> =>
  loading ??= import("gpt-tokenizer/encoding/o200k_base").then((m): Encoding => ({
    count: (text) => (text === "" ? 0 : m.countTokens(text)),
    truncate: (text, max) => {
      const tokens = m.encode(text)
      return tokens.length <= max ? text : m.decode(tokens.slice(0, Math.max(0, max)))
    }
  }))

/** The o200k_base encoding; loads on first use, then succeeds at once. */
export const o200kEncoding: Effect.Effect<Encoding> = Effect.promise(load)
