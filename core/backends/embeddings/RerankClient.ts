/**
 * Reranker over a `/rerank` endpoint. Cohere, Jina, vLLM, Infinity and LiteLLM take
 * `{model, query, documents: [texts], top_n}` and answer `{results: [{index, relevance_score}]}`;
 * Text Embeddings Inference takes `{query, texts}` and answers `[{index, score}]`. Either
 * answer is read whatever was asked; `api` says which request to send.
 */
import { Effect, Layer, type Redacted } from "effect"
import type { HttpClient } from "effect/http"
import { ModelServerError, Reranker, type RerankScore } from "../../search/Embeddings.ts"
import { postJson } from "./ModelServerCall.ts"

export interface RerankClientSettings {
  readonly url: string
  readonly model?: string | undefined
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly api: "cohere" | "tei"
  readonly timeoutMs: number
  readonly retries: number
}

/** The scores of a rerank answer for `count` documents, best first; a string says why it is not one. */
export const scoresOfAnswer = (answer: unknown, count: number): Array<RerankScore> | string => {
  const list = Array.isArray(answer) ? answer : (answer as { readonly results?: unknown } | null)?.results
  if (!Array.isArray(list)) return "the answer is neither a list nor {results: [...]}"
  const seen = new Set<number>()
  const out: Array<RerankScore> = []
  for (let i = 0; i < list.length; i++) {
    const item = list[i] as { readonly index?: unknown; readonly relevance_score?: unknown; readonly score?: unknown } | null
    const index = item?.index
    const score = item?.relevance_score ?? item?.score
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) {
      return `result ${i}: index is missing, out of range or repeated`
    }
    if (typeof score !== "number" || !Number.isFinite(score)) return `result ${i}: relevance_score (or score) is not a number`
    seen.add(index)
    out.push({ index, score })
  }
  return out.sort((a, b) => b.score - a.score || a.index - b.index)
}

/** The request body `api` takes. */
export const rerankRequest = (settings: Pick<RerankClientSettings, "api" | "model">, query: string, documents: ReadonlyArray<string>, topN?: number) =>
  settings.api === "tei"
    ? { query, texts: documents, raw_scores: false }
    : { ...(settings.model === undefined ? {} : { model: settings.model }), query, documents, ...(topN === undefined ? {} : { top_n: topN }) }

export const makeRerankClient = (settings: RerankClientSettings) =>
  Effect.map(Effect.context<HttpClient.HttpClient>(), (context) => {
    const target = { server: "reranker", url: settings.url, apiKey: settings.apiKey, timeoutMs: settings.timeoutMs, retries: settings.retries }
    const rerank = (query: string, documents: ReadonlyArray<string>, topN?: number): Effect.Effect<Array<RerankScore>, ModelServerError> => {
      if (documents.length === 0) return Effect.succeed([])
      return postJson(target, rerankRequest(settings, query, documents, topN)).pipe(
        Effect.flatMap((answer) => {
          const scores = scoresOfAnswer(answer, documents.length)
          if (typeof scores === "string") return Effect.fail(new ModelServerError({ server: "reranker", reason: "bad_response", message: `the reranker's answer: ${scores}` }))
          return Effect.succeed(topN === undefined ? scores : scores.slice(0, topN))
        }),
        Effect.provideContext(context)
      )
    }
    return Reranker.of({ model: settings.model, rerank })
  })

export const RerankClient = {
  layer: (settings: RerankClientSettings): Layer.Layer<Reranker, never, HttpClient.HttpClient> => Layer.effect(Reranker, makeRerankClient(settings))
} as const
