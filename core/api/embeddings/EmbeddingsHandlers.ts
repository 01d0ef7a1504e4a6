/**
 * The pass-through routes' handlers: the body decoded, sent on to the TextEmbedder or Reranker
 * the application was given (none: 404 naming the setting), the server's failure rendered as
 * the OpenAI error its reason means (its 429 as ours, with Retry-After).
 */
import { Effect, Option, Result } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { type ModelServerError, Reranker, TextEmbedder } from "../../search/Embeddings.ts"
import { type Answer, errorAnswer, jsonAnswer, toHttpResponse } from "../Answer.ts"
import { PeriscopeApi } from "../Api.ts"
import { ApiError } from "../ApiError.ts"
import { makeBodyDecoder, parseBody, readJsonText } from "../JsonBody.ts"
import { EMBEDDINGS_BODY_LIMIT, EmbeddingsRequest, RerankRequest, type RerankResponse } from "./EmbeddingsWire.ts"

const decodeEmbeddings = makeBodyDecoder(EmbeddingsRequest)
const decodeRerank = makeBodyDecoder(RerankRequest)

const refuse = (error: ApiError): Answer => errorAnswer("chat", error)

/** A model server's failure as the caller sees it: its own 429 is ours; what it refused is the request's fault; the rest is ours (502, 504). */
export const fromModelServerError = (error: ModelServerError): ApiError => {
  switch (error.reason) {
    case "rate_limited":
      return new ApiError({
        kind: "rate_limited",
        message: error.message,
        param: null,
        ...(error.retryAfterMs === undefined ? {} : { retryAfterSeconds: Math.max(1, Math.ceil(error.retryAfterMs / 1000)) })
      })
    case "refused":
      return new ApiError({ kind: "invalid_request", message: error.message, param: null })
    case "timeout":
      return new ApiError({ kind: "timeout", message: error.message, param: null })
    case "not_configured":
      return new ApiError({ kind: "not_found", message: error.message, param: null })
    default:
      return new ApiError({ kind: "upstream", message: error.message, param: null })
  }
}

const notConfigured = (route: string, setting: string) =>
  new ApiError({ kind: "not_found", message: `${route}: no ${setting === "search.embeddings" ? "embedding server" : "reranker"} is configured here (${setting} in the config file)`, param: null, code: "not_configured" })

const otherModel = (model: string, served: string) =>
  new ApiError({ kind: "model_not_found", message: `model: ${JSON.stringify(model)} is not served here; this server's embedding model is ${JSON.stringify(served)}`, param: "model" })

/** The two routes' answers from a body's text, over the services the application has (when it has them). */
export const makeEmbeddingsAnswers = (embedder: TextEmbedder["Service"] | undefined, reranker: Reranker["Service"] | undefined) => ({
  embeddings: (text: string): Effect.Effect<Answer> => {
    if (embedder === undefined) return Effect.succeed(refuse(notConfigured("/v1/embeddings", "search.embeddings")))
    const decoded = parseBody(text, decodeEmbeddings)
    if (Result.isFailure(decoded)) return Effect.succeed(refuse(decoded.failure))
    const body = decoded.success
    if (body.model !== undefined && body.model !== embedder.model) return Effect.succeed(refuse(otherModel(body.model, embedder.model)))
    return Effect.match(embedder.passThrough(body), {
      onFailure: (error) => refuse(fromModelServerError(error)),
      onSuccess: (answer) =>
        typeof answer === "object" && answer !== null && !Array.isArray(answer)
          ? jsonAnswer(answer)
          : refuse(new ApiError({ kind: "upstream", message: "the embedding server's answer is not a JSON object", param: null }))
    })
  },
  rerank: (text: string): Effect.Effect<Answer> => {
    if (reranker === undefined) return Effect.succeed(refuse(notConfigured("/v1/rerank", "search.reranker")))
    const decoded = parseBody(text, decodeRerank)
    if (Result.isFailure(decoded)) return Effect.succeed(refuse(decoded.failure))
    const body = decoded.success
    if (body.model !== undefined && reranker.model !== undefined && body.model !== reranker.model) {
      return Effect.succeed(refuse(new ApiError({
        kind: "model_not_found",
        message: `model: ${JSON.stringify(body.model)} is not served here; this server's reranker is ${JSON.stringify(reranker.model)}`,
        param: "model"
      })))
    }
    const documents = body.documents.map((d) => (typeof d === "string" ? d : d.text))
    return Effect.match(reranker.rerank(body.query, documents, body.top_n), {
      onFailure: (error) => refuse(fromModelServerError(error)),
      onSuccess: (scores) =>
        jsonAnswer({
          model: reranker.model ?? null,
          results: scores.map((s) => ({
            index: s.index,
            relevance_score: s.score,
            ...(body.return_documents === true ? { document: { text: documents[s.index]! } } : {})
          }))
        } satisfies RerankResponse)
    })
  }
})

export const EmbeddingsHandlers = HttpApiBuilder.group(PeriscopeApi, "embeddings", Effect.fnUntraced(function*(handlers) {
  const answers = makeEmbeddingsAnswers(
    Option.getOrUndefined(yield* Effect.serviceOption(TextEmbedder)),
    Option.getOrUndefined(yield* Effect.serviceOption(Reranker))
  )
  const route = (answer: (text: string) => Effect.Effect<Answer>) => ({ request }: { readonly request: Parameters<typeof readJsonText>[0] }) =>
    readJsonText(request, EMBEDDINGS_BODY_LIMIT).pipe(
      Effect.matchEffect({ onFailure: (error) => Effect.succeed(refuse(error)), onSuccess: answer }),
      Effect.map(toHttpResponse)
    )
  return handlers.handleRaw("embeddings", route(answers.embeddings)).handleRaw("rerank", route(answers.rerank))
}))
