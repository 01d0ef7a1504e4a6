/**
 * The pass-through routes' wire: POST /v1/embeddings takes OpenAI's embeddings request and
 * answers the embedding server's own answer; POST /v1/rerank takes the `/rerank` request Cohere
 * and Jina share and answers their `{model, results: [{index, relevance_score, document?}]}`,
 * whatever request the configured reranker speaks.
 */
import { Schema } from "effect"
import { ruledNumber, ruledString } from "../../schema/Rules.ts"

/** Inputs per request at most, as OpenAI's API allows. */
export const MAX_EMBEDDING_INPUTS = 2048
/** Documents per rerank request at most. */
export const MAX_RERANK_DOCUMENTS = 1000
/** Bodies of both routes at most (2,048 inputs of a few kilobytes). */
export const EMBEDDINGS_BODY_LIMIT = 8 * 1024 * 1024

const inputRule = `must be a string, or an array of 1 to ${MAX_EMBEDDING_INPUTS} strings or token arrays`
const Tokens = Schema.Array(ruledNumber("must be an integer token", { integer: true, min: 0 })).annotate({ message: inputRule })
const EmbeddingInput = Schema.Union([
  Schema.String,
  Schema.Array(Schema.String).check(Schema.isMinLength(1, { message: inputRule }), Schema.isMaxLength(MAX_EMBEDDING_INPUTS, { message: inputRule })),
  Tokens.check(Schema.isMinLength(1, { message: inputRule })),
  Schema.Array(Tokens).check(Schema.isMinLength(1, { message: inputRule }), Schema.isMaxLength(MAX_EMBEDDING_INPUTS, { message: inputRule }))
]).annotate({ message: inputRule, description: "The texts to embed: a string or an array of strings (or token arrays)" })

const modelRule = "must be a model name"

/** OpenAI's embeddings request; fields it does not name are passed on to the server as they are. */
export const EmbeddingsRequest = Schema.Struct({
  input: EmbeddingInput,
  /** The configured model's name, or none. */
  model: Schema.optionalKey(ruledString(modelRule)),
  dimensions: Schema.optionalKey(ruledNumber("must be an integer from 1 to 8192", { integer: true, min: 1, max: 8192 })),
  encoding_format: Schema.optionalKey(Schema.Literals(["float", "base64"]).annotate({ message: "must be float or base64" })),
  user: Schema.optionalKey(ruledString("must be a string"))
}).annotate({ identifier: "EmbeddingsRequest", message: "must be a JSON object with input" })
export type EmbeddingsRequest = typeof EmbeddingsRequest.Type

/** The server's answer as it sent it (OpenAI's shape: {object: "list", data: [{index, embedding}], model, usage}). */
export const EmbeddingsResponse = Schema.Record(Schema.String, Schema.Unknown).annotate({
  identifier: "EmbeddingsResponse",
  description: "The embedding server's answer as it sent it: {object: \"list\", data: [{object: \"embedding\", index, embedding}], model, usage}"
})

const documentsRule = `must be an array of 1 to ${MAX_RERANK_DOCUMENTS} strings or {text} objects`
const RerankDocument = Schema.Union([Schema.String, Schema.Struct({ text: Schema.String })]).annotate({ message: documentsRule })

export const RerankRequest = Schema.Struct({
  query: ruledString("must be a non-empty string").check(Schema.isMinLength(1, { message: "must be a non-empty string" })),
  documents: Schema.Array(RerankDocument).annotate({ message: documentsRule }).check(
    Schema.isMinLength(1, { message: documentsRule }),
    Schema.isMaxLength(MAX_RERANK_DOCUMENTS, { message: documentsRule })
  ),
  top_n: Schema.optionalKey(ruledNumber(`must be an integer from 1 to ${MAX_RERANK_DOCUMENTS}`, { integer: true, min: 1, max: MAX_RERANK_DOCUMENTS })),
  model: Schema.optionalKey(ruledString(modelRule)),
  return_documents: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
}).annotate({ identifier: "RerankRequest", message: "must be a JSON object with query and documents" })
export type RerankRequest = typeof RerankRequest.Type

export const RerankResponse = Schema.Struct({
  model: Schema.NullOr(Schema.String),
  results: Schema.Array(Schema.Struct({
    index: Schema.Number,
    relevance_score: Schema.Number,
    document: Schema.optionalKey(Schema.Struct({ text: Schema.String }))
  }))
}).annotate({ identifier: "RerankResponse" })
export type RerankResponse = typeof RerankResponse.Type
