/**
 * n > 1 for backends that answer one choice at a time: n requests with n = 1,
 * run concurrently; whole answers are merged by index, streams interleave
 * their chunks as they arrive with each choice's index rewritten. An answer
 * with fewer choices than n (many OpenAI-compatible servers ignore n) is
 * topped up the same way: the missing indices asked one at a time.
 */
import { Effect, Stream } from "effect"
import type { ChatChoice, ChatChunk, ChatResult, Usage } from "./ChatCompletion.ts"
import type { ChatRequest } from "./ChatRequest.ts"

/** Usage of a fan-out is what every upstream request used: the prompt counts n times. */
export const sumUsage = (usages: ReadonlyArray<Usage | undefined>): Usage | undefined => {
  if (usages.some((u) => u === undefined)) return undefined
  let prompt = 0
  let completion = 0
  for (const u of usages as ReadonlyArray<Usage>) {
    prompt += u.prompt_tokens
    completion += u.completion_tokens
  }
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

export const fanOutComplete = <E>(
  request: ChatRequest,
  one: (request: ChatRequest) => Effect.Effect<ChatResult, E>
): Effect.Effect<ChatResult, E> =>
  Effect.map(
    Effect.all(Array.from({ length: request.n }, () => one({ ...request, n: 1 })), { concurrency: "unbounded" }),
    (results) => ({
      model: results[0]!.model,
      choices: results.map((r, i): ChatChoice => ({ ...r.choices[0]!, index: i })),
      usage: sumUsage(results.map((r) => r.usage))
    })
  )

const reindex = (index: number) => (chunk: ChatChunk): ChatChunk => ({
  ...chunk,
  choices: chunk.choices.map((c) => ({ ...c, index }))
})

export const fanOutStream = <E>(
  request: ChatRequest,
  one: (request: ChatRequest) => Stream.Stream<ChatChunk, E>
): Stream.Stream<ChatChunk, E> =>
  Stream.mergeAll(
    Array.from({ length: request.n }, (_, i) => one({ ...request, n: 1 }).pipe(Stream.map(reindex(i)))),
    { concurrency: "unbounded" }
  )

/** The indices below n that no choice has. */
const missingIndices = (n: number, present: ReadonlySet<number>): Array<number> => {
  const missing: Array<number> = []
  for (let i = 0; i < n; i++) if (!present.has(i)) missing.push(i)
  return missing
}

/**
 * A whole answer with every index below n: the missing choices are asked one
 * at a time (concurrently) and slotted in; usage is the sum of every request.
 * `short` runs when the answer had fewer choices than asked.
 */
export const topUpComplete = <E>(
  request: ChatRequest,
  first: ChatResult,
  one: (request: ChatRequest) => Effect.Effect<ChatResult, E>,
  short: () => void = () => {}
): Effect.Effect<ChatResult, E> => {
  const missing = missingIndices(request.n, new Set(first.choices.map((c) => c.index)))
  if (missing.length === 0) return Effect.succeed(first)
  short()
  return Effect.map(
    Effect.all(missing.map(() => one({ ...request, n: 1 })), { concurrency: "unbounded" }),
    (more) => ({
      model: first.model,
      choices: [...first.choices, ...more.map((r, j): ChatChoice => ({ ...r.choices[0]!, index: missing[j]! }))]
        .sort((a, b) => a.index - b.index),
      usage: sumUsage([first.usage, ...more.map((r) => r.usage)])
    })
  )
}

/**
 * A stream with every index below n: once `first` has ended, the indices it
 * never sent are streamed one request each (concurrently), reindexed. Their
 * usage chunks follow the first's; the gateway sums them.
 */
export const topUpStream = <E, E2>(
  request: ChatRequest,
  first: Stream.Stream<ChatChunk, E>,
  one: (request: ChatRequest) => Stream.Stream<ChatChunk, E2>,
  short: () => void = () => {}
): Stream.Stream<ChatChunk, E | E2> =>
  Stream.suspend(() => {
    const seen = new Set<number>()
    const watched = first.pipe(Stream.map((chunk) => {
      for (let i = 0; i < chunk.choices.length; i++) seen.add(chunk.choices[i]!.index)
      return chunk
    }))
    const rest = Stream.suspend(() => {
      const missing = missingIndices(request.n, seen)
      if (missing.length === 0) return Stream.empty
      short()
      return Stream.mergeAll(missing.map((index) => one({ ...request, n: 1 }).pipe(Stream.map(reindex(index)))), { concurrency: "unbounded" })
    })
    return Stream.concat(watched, rest)
  })
