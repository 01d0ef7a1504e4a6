/**
 * n > 1 for backends that answer one choice at a time: n requests with n = 1,
 * run concurrently; whole answers are merged by index, streams interleave
 * their chunks as they arrive with each choice's index rewritten.
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
