/**
 * The HTTP contract: every endpoint with its schemas, grouped by wire family.
 * Handlers live beside it (SearchHandlers, ChatHandlers, MetaHandlers);
 * HttpApp wires them. /openapi.json is generated from this definition.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ChatCompletionResponse, ModelList } from "../chat/ChatCompletion.ts"
import { ChatCompletionRequest } from "../chat/ChatRequest.ts"
import { ChatErrorBody, SearchErrorBody } from "./ApiError.ts"
import { Authorization } from "./Authorization.ts"
import { fetchErrorSchemas, FetchRequestBody, WebFetchResponse } from "./FetchWire.ts"
import { ImageSearchResponse, SearchRequest, WebSearchResponse } from "./SearchWire.ts"

const searchErrors = [400, 401, 413, 415, 429, 500, 502, 503, 504].map((status) =>
  SearchErrorBody.pipe(HttpApiSchema.status(status))
)
const chatErrors = [400, 401, 404, 413, 415, 429, 500, 502, 503, 504].map((status) =>
  ChatErrorBody.pipe(HttpApiSchema.status(status))
)

export class SearchGroup extends HttpApiGroup.make("search")
  .add(
    HttpApiEndpoint.post("webSearch", "/api/search/webSearch", {
      payload: SearchRequest,
      success: WebSearchResponse,
      error: searchErrors
    }).annotateMerge(OpenApi.annotations({ summary: "Web search: keywords in, ranked pages out" })),
    HttpApiEndpoint.post("imageSearch", "/api/search/imageSearch", {
      payload: SearchRequest,
      success: ImageSearchResponse,
      error: searchErrors
    }).annotateMerge(OpenApi.annotations({ summary: "Image search: keywords in, images out" })),
    HttpApiEndpoint.post("webFetch", "/api/search/webFetch", {
      payload: FetchRequestBody,
      success: WebFetchResponse,
      error: fetchErrorSchemas
    }).annotateMerge(OpenApi.annotations({ summary: "Web fetch: a URL in, the page's main content (Markdown, text or HTML) out" }))
  )
  .middleware(Authorization)
{}

/** Server-sent events of chat.completion.chunk objects, ending with `data: [DONE]`. */
const ChatEventStream = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))

export class ChatGroup extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("completions", "/v1/chat/completions", {
      payload: ChatCompletionRequest,
      success: [ChatCompletionResponse, ChatEventStream],
      error: chatErrors
    }).annotateMerge(OpenApi.annotations({ summary: "OpenAI-compatible chat completions (stream:true answers SSE)" })),
    HttpApiEndpoint.get("models", "/v1/models", {
      success: ModelList,
      error: chatErrors
    }).annotateMerge(OpenApi.annotations({ summary: "Models this service answers for" }))
  )
  .middleware(Authorization)
{}

export class MetaGroup extends HttpApiGroup.make("meta")
  .add(
    HttpApiEndpoint.get("openapi", "/openapi.json", {
      success: Schema.Record(Schema.String, Schema.Unknown)
    }).annotateMerge(OpenApi.annotations({ summary: "This document" }))
  )
  .middleware(Authorization)
{}

/** /readyz: each check's state; 503 with the same body when one fails. */
const ReadinessBody = Schema.Struct({
  status: Schema.Literals(["ready", "not_ready"]),
  checks: Schema.Record(Schema.String, Schema.Struct({ ok: Schema.Boolean, detail: Schema.String }))
})

export class HealthGroup extends HttpApiGroup.make("health").add(
  HttpApiEndpoint.get("healthz", "/healthz", {
    success: Schema.Struct({ status: Schema.Literal("ok") })
  }).annotateMerge(OpenApi.annotations({ summary: "Liveness probe (no auth)" })),
  HttpApiEndpoint.get("readyz", "/readyz", {
    success: ReadinessBody,
    error: ReadinessBody.pipe(HttpApiSchema.status(503))
  }).annotateMerge(OpenApi.annotations({ summary: "Readiness probe (no auth): the index loaded, the shared store reachable" })),
  HttpApiEndpoint.get("version", "/version", {
    success: Schema.Struct({ name: Schema.String, version: Schema.String, commit: Schema.NullOr(Schema.String) })
  }).annotateMerge(OpenApi.annotations({ summary: "Name, version and commit of this build (no auth)" }))
) {}

export class PeriscopeApi extends HttpApi.make("periscope")
  .add(SearchGroup)
  .add(ChatGroup)
  .add(MetaGroup)
  .add(HealthGroup)
  .annotateMerge(OpenApi.annotations({
    title: "Periscope",
    version: "0.1.0",
    description: "Web search, image search and OpenAI-compatible chat completions for AI agents."
  }))
{}

/** Paths of the contract and the methods each accepts, for 405 answers. */
export const allowedMethods: ReadonlyMap<string, string> = (() => {
  const methods = new Map<string, Set<string>>()
  for (const group of Object.values(PeriscopeApi.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      const set = methods.get(endpoint.path) ?? new Set<string>()
      set.add(endpoint.method)
      methods.set(endpoint.path, set)
    }
  }
  return new Map([...methods].map(([path, set]) => [path, [...set].sort().join(", ")]))
})()
