/**
 * POST /v1/embeddings and POST /v1/rerank in the contract: Periscope's keys and limits in front
 * of the configured embedding server and reranker (search.embeddings, search.reranker), as
 * LiteLLM's proxy does; errors in OpenAI's body, as chat's.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { KeyedRoute } from "../Admission.ts"
import { ChatErrorBody } from "../ApiError.ts"
import { Authorization } from "../Authorization.ts"
import { EMBEDDINGS_BODY_LIMIT, EmbeddingsRequest, EmbeddingsResponse, RerankRequest, RerankResponse } from "./EmbeddingsWire.ts"

/** Bodies: 400 413 415; the key: 401 429 503; nothing configured or another model: 404; the server: 429 502 503 504. */
const errors = [400, 401, 404, 413, 415, 429, 500, 502, 503, 504].map((status) => ChatErrorBody.pipe(HttpApiSchema.status(status)))
const keyed = KeyedRoute.of({ family: "chat", bodyLimit: EMBEDDINGS_BODY_LIMIT })

export class EmbeddingsGroup extends HttpApiGroup.make("embeddings")
  .add(
    HttpApiEndpoint.post("embeddings", "/v1/embeddings", {
      payload: EmbeddingsRequest,
      success: EmbeddingsResponse,
      error: errors
    }).annotate(KeyedRoute, keyed).annotateMerge(OpenApi.annotations({
      summary: "OpenAI-compatible embeddings, passed through to the configured embedding server (search.embeddings)",
      description: "`model` may be left out; another model than the configured one is refused (404 model_not_found). 404 when no embedding server is configured."
    })),
    HttpApiEndpoint.post("rerank", "/v1/rerank", {
      payload: RerankRequest,
      success: RerankResponse,
      error: errors
    }).annotate(KeyedRoute, keyed).annotateMerge(OpenApi.annotations({
      summary: "Cohere- and Jina-compatible rerank, passed through to the configured reranker (search.reranker)",
      description: "Results most relevant first; `document` only with return_documents. 404 when no reranker is configured."
    }))
  )
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "The embedding server and reranker hybrid search uses, behind Periscope's keys and limits, with OpenAI error bodies" }))
{}
