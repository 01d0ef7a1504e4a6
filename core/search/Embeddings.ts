/**
 * The model servers hybrid retrieval talks to, as contracts: a TextEmbedder (an OpenAI-compatible
 * `/v1/embeddings` server) and a Reranker (a `/rerank` endpoint). Backends implement them
 * (core/backends/embeddings/); the search, `periscope index` and the pass-through routes
 * `/v1/embeddings` and `/v1/rerank` use them. A failure says why in `reason`, which decides
 * the HTTP status the pass-through answers with; `message` never carries a key.
 */
import { Context, type Effect, Schema } from "effect"

export const MODEL_SERVER_ERROR_REASONS = [
  /** No connection, or a 5xx answer. */
  "unavailable",
  "timeout",
  /** 429 after the retries; retryAfterMs when the server said. */
  "rate_limited",
  /** 401 or 403: a missing or refused key. */
  "unauthorized",
  /** Another 4xx: the server refused the request (an unknown model, inputs too long); `message` says what it said. */
  "refused",
  /** An answer that is not the documented shape (or vectors of another dimension than configured). */
  "bad_response",
  /** Nothing is configured for this. */
  "not_configured"
] as const
export type ModelServerErrorReason = typeof MODEL_SERVER_ERROR_REASONS[number]

export class ModelServerError extends Schema.TaggedError<ModelServerError>()("ModelServerError", {
  /** "embeddings" or "reranker": which server. */
  server: Schema.String,
  reason: Schema.Literals(MODEL_SERVER_ERROR_REASONS),
  message: Schema.String,
  /** The server's HTTP status, when it answered. */
  status: Schema.optional(Schema.Number),
  retryAfterMs: Schema.optional(Schema.Number)
}) {}

/** Whether a call is a search waiting for its query's vector or an index run: their timeouts and retries differ. */
export type EmbeddingPurpose = "query" | "index"

export class TextEmbedder extends Context.Service<TextEmbedder, {
  /** The configured model: the snapshot's vectors must have been made by it. */
  readonly model: string
  /** The configured dimension, when there is one. */
  readonly dimensions: number | undefined
  /** One vector per text, in order: batched, some batches at once, retried on 429 and 5xx (purpose "index"). */
  embed(texts: ReadonlyArray<string>, purpose: EmbeddingPurpose): Effect.Effect<Array<Float32Array>, ModelServerError>
  /** `/v1/embeddings` passed through (no retries: the caller retries): the client's body with the configured model, the server's JSON answer as it is. */
  passThrough(body: Readonly<Record<string, unknown>>): Effect.Effect<unknown, ModelServerError>
}>()("periscope/search/TextEmbedder") {}

/** One reordered document: its index in the request and its relevance. */
export interface RerankScore {
  readonly index: number
  readonly score: number
}

export class Reranker extends Context.Service<Reranker, {
  readonly model: string | undefined
  /** The documents' relevance to `query`, most relevant first (at most `topN` of them when given). */
  rerank(query: string, documents: ReadonlyArray<string>, topN?: number): Effect.Effect<Array<RerankScore>, ModelServerError>
}>()("periscope/search/Reranker") {}
