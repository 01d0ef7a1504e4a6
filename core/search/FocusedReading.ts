/**
 * webFetch's budgets on what a page gives: with a `query`, its most relevant chunks (PageChunks,
 * chosen on the job runner) within `maxChars` and `maxTokens`; without one, the content cut to
 * `maxTokens`. Tokens are o200k_base's, as search content and chat usage count them; a token
 * budget is met by choosing again within fewer characters, so chunks stay whole sentences.
 */
import { Effect } from "effect"
import type { JobError, JobRunnerShape } from "../jobs/JobRunner.ts"
import { joinChunks, type PageChunk, pageChunksJob } from "./PageChunks.ts"
import { type Encoding, o200kEncoding } from "./TokenEncoding.ts"

/** The chunks' joined characters when the request gives neither maxChars nor maxTokens: several passages. */
export const DEFAULT_QUERY_CHARS = 4_000

/** Characters first allowed per token of a budget: few texts need more; those that do are chosen again. */
const CHARS_PER_TOKEN = 4
/** Characters tokenized per token of a budget, at most, when content is cut to it. */
const MAX_CHARS_PER_TOKEN = 8
/** Choices within a token budget before the last chunks give way. */
const TOKEN_ROUNDS = 3

export interface FocusOptions {
  readonly query: string
  readonly maxChars?: number | undefined
  readonly maxTokens?: number | undefined
  /** Chunks as plain text (format text). */
  readonly plain: boolean
  /** For each choice on the job runner. */
  readonly deadlineMs: () => number
}

export interface Focused {
  readonly chunks: ReadonlyArray<PageChunk>
  readonly content: string
}

/** The longest prefix of `text` within `max` tokens, pulled back to a line end or a space in its last half. */
export const cutToTokens = (encoding: Encoding, text: string, max: number): string => {
  const prefix = encoding.truncate(text, max)
  if (prefix.length === text.length) return text
  const line = prefix.lastIndexOf("\n")
  if (line >= prefix.length / 2) return prefix.slice(0, line).trimEnd()
  const space = prefix.lastIndexOf(" ")
  return (space >= prefix.length / 2 ? prefix.slice(0, space) : prefix).trimEnd()
}

/** The page's chunks for the query within the budgets. */
export const focusedReading = (jobs: JobRunnerShape, markdown: string, options: FocusOptions): Effect.Effect<Focused, JobError> =>
  Effect.gen(function*() {
    const choose = (maxChars: number) =>
      jobs.run(pageChunksJob, { markdown, query: options.query, maxChars, plain: options.plain }, { deadlineMs: options.deadlineMs() })
    const byChars = options.maxChars ?? (options.maxTokens === undefined ? DEFAULT_QUERY_CHARS : Number.MAX_SAFE_INTEGER)
    const maxTokens = options.maxTokens
    if (maxTokens === undefined) {
      const chunks = yield* choose(byChars)
      return { chunks, content: joinChunks(chunks) }
    }
    const encoding = yield* o200kEncoding
    let maxChars = Math.min(byChars, maxTokens * CHARS_PER_TOKEN)
    let chunks = yield* choose(maxChars)
    for (let round = 1; round < TOKEN_ROUNDS; round++) {
      const tokens = encoding.count(joinChunks(chunks))
      if (tokens <= maxTokens) break
      maxChars = Math.max(1, Math.floor((maxChars * maxTokens / tokens) * 0.95))
      chunks = yield* choose(maxChars)
    }
    const kept = [...chunks]
    while (kept.length > 1 && encoding.count(joinChunks(kept)) > maxTokens) kept.pop()
    if (kept.length === 1 && encoding.count(kept[0]!.text) > maxTokens) kept[0] = { ...kept[0]!, text: cutToTokens(encoding, kept[0]!.text, maxTokens) }
    return { chunks: kept, content: joinChunks(kept) }
  })

/**
 * Content within `maxTokens` (a request without a query). Only its first characters are
 * tokenized, as many as the budget could take at a generous length per token: a page of
 * megabytes costs what its answer costs.
 */
export const contentWithinTokens = (content: string, maxTokens: number): Effect.Effect<string> =>
  Effect.map(o200kEncoding, (encoding) => {
    const limit = maxTokens * MAX_CHARS_PER_TOKEN
    if (content.length <= limit) return cutToTokens(encoding, content, maxTokens)
    // The head fits in the budget: it ends where the next word may begin.
    const head = content.slice(0, limit)
    const cut = cutToTokens(encoding, head, maxTokens)
    return cut.length < head.length ? cut : head.slice(0, Math.max(head.lastIndexOf("\n"), head.lastIndexOf(" "), 1)).trimEnd()
  })
