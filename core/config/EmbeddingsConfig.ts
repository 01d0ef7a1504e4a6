/**
 * The `search.embeddings` and `search.reranker` sections of the config file: the embedding
 * server that hybrid retrieval and `periscope index` use, and the optional reranker that
 * reorders a search's best results. Keys are never written here: each names the environment
 * variable that holds it, as chat upstreams do.
 */
import { Schema } from "effect"
import { ruledNumber, ruledString } from "../schema/Rules.ts"

const optionalKey = Schema.optionalKey
const envNameRule = "must be an environment variable name"
const EnvName = ruledString(envNameRule).check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: envNameRule }))
const urlRule = "must be an http(s) URL"
const HttpUrl = ruledString(urlRule).check(Schema.isPattern(/^https?:\/\/[^\s/]+[^\s]*$/i, { message: urlRule }))
const modelRule = "must be a model name of 1 to 256 characters"
const ModelName = ruledString(modelRule).check(Schema.isMinLength(1, { message: modelRule }), Schema.isMaxLength(256, { message: modelRule }))
const prefixRule = "must be a string of at most 200 characters"
const Prefix = ruledString(prefixRule).check(Schema.isMaxLength(200, { message: prefixRule }))
const int = (min: number, max: number) => ruledNumber(`must be an integer from ${min} to ${max}`, { integer: true, min, max })

/** How the vector and the BM25 rankings are fused: reciprocal ranks, or a weighted sum of normalised scores. */
export const FUSION_METHODS = ["rrf", "weighted"] as const
export type FusionMethod = typeof FUSION_METHODS[number]

/** An OpenAI-compatible `/v1/embeddings` server (Ollama, vLLM, Text Embeddings Inference, OpenAI). */
export const EmbeddingsConfig = Schema.Struct({
  /** The API's base URL, as for an OpenAI client: requests go to `<baseUrl>/embeddings` (e.g. http://127.0.0.1:11434/v1). */
  baseUrl: HttpUrl,
  /** The model the server knows (e.g. nomic-embed-text); stored in the snapshot with the vectors and checked at load. */
  model: ModelName,
  /** The environment variable holding the key, sent as a bearer token. */
  apiKeyEnv: optionalKey(EnvName),
  /** Sent as `dimensions` (models that can shorten their vectors, such as OpenAI's text-embedding-3); checked against the vectors. */
  dimensions: optionalKey(int(1, 8192)),
  /** Texts per request. Default 32. */
  batchSize: optionalKey(int(1, 2048)),
  /** Requests at once while indexing. Default 2. */
  concurrency: optionalKey(int(1, 32)),
  /** One request of `periscope index` (and of /v1/embeddings). Default 60000. */
  timeoutMs: optionalKey(int(1, 600_000)),
  /** A search's query embedding; past it the search answers from BM25 alone. Default 2000. */
  queryTimeoutMs: optionalKey(int(1, 60_000)),
  /** Retries of a request that failed with 429, 5xx or no connection (Retry-After honoured). Default 3. */
  retries: optionalKey(int(0, 10)),
  /** Put before every query (e.g. "search_query: " for nomic-embed-text, "query: " for e5). Default none. */
  queryPrefix: optionalKey(Prefix),
  /** Put before every passage (e.g. "search_document: ", "passage: "). Default none. */
  documentPrefix: optionalKey(Prefix),
  /** Characters of page text per passage embedded. Default 1000. */
  passageChars: optionalKey(int(200, 16_000)),
  /** Passages embedded per page, from its start. Default 8. */
  maxPassagesPerPage: optionalKey(int(1, 256)),
  /** rrf (default) or weighted. */
  fusion: optionalKey(Schema.Literals(FUSION_METHODS).annotate({ message: "must be rrf or weighted" })),
  /** The vector ranking's share of the fused score, 0 to 1 (rrf: its list's weight against BM25's 1 - w). Default 0.5. */
  vectorWeight: optionalKey(ruledNumber("must be a number from 0 to 1", { min: 0, max: 1 })),
  /** Candidates taken from each ranking before fusion. Default 50. */
  candidates: optionalKey(int(10, 1000))
}).annotate({
  message: "must be an object {baseUrl, model, apiKeyEnv?, dimensions?, batchSize?, concurrency?, timeoutMs?, queryTimeoutMs?, retries?, " +
    "queryPrefix?, documentPrefix?, passageChars?, maxPassagesPerPage?, fusion?, vectorWeight?, candidates?}"
})
export type EmbeddingsConfig = typeof EmbeddingsConfig.Type

/** Which request a reranker takes: Cohere's and Jina's `{query, documents, top_n}` (vLLM, Infinity, LiteLLM too) or TEI's `{query, texts}`. */
export const RERANK_APIS = ["cohere", "tei"] as const
export type RerankApi = typeof RERANK_APIS[number]

/** A `/rerank` endpoint that reorders a search's best results. */
export const RerankerConfig = Schema.Struct({
  /** The endpoint itself (e.g. http://127.0.0.1:8081/rerank, https://api.jina.ai/v1/rerank, https://api.cohere.com/v2/rerank). */
  url: HttpUrl,
  /** Sent as `model` (Cohere, Jina and vLLM need it; TEI serves one model). */
  model: optionalKey(ModelName),
  apiKeyEnv: optionalKey(EnvName),
  /** cohere (default) or tei. */
  api: optionalKey(Schema.Literals(RERANK_APIS).annotate({ message: "must be cohere or tei" })),
  /** How many of the best results are reordered. Default 20. */
  topK: optionalKey(int(2, 200)),
  /** Characters of each result sent (title and text). Default 2000. */
  maxChars: optionalKey(int(100, 32_000)),
  /** Past it the results keep their order. Default 3000. */
  timeoutMs: optionalKey(int(1, 60_000))
}).annotate({ message: "must be an object {url, model?, apiKeyEnv?, api?, topK?, maxChars?, timeoutMs?}" })
export type RerankerConfig = typeof RerankerConfig.Type
