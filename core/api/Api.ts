/**
 * The HTTP contract: every endpoint with its schemas, grouped by wire family.
 * Handlers live beside it (SearchHandlers, ChatHandlers, MetaHandlers);
 * HttpApp wires them. /openapi.json is generated from this definition.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ChatCompletionChunk, ChatCompletionResponse, ModelList } from "../chat/ChatCompletion.ts"
import { ChatCompletionRequest } from "../chat/ChatRequest.ts"
import { KeyedRoute } from "./Admission.ts"
import { ChatErrorBody, McpErrorBody, SearchErrorBody, SearxngErrorBody, TavilyErrorBody } from "./ApiError.ts"
import { Authorization } from "./Authorization.ts"
import { EmbeddingsGroup } from "./embeddings/EmbeddingsApi.ts"
import { fetchErrorSchemas, FetchRequestBody, MapRequestBody, MapResponse, WebFetchResponse } from "./FetchWire.ts"
import { finishDocument } from "./OpenApiDocument.ts"
import { OwnAdmission } from "./OwnAdmission.ts"
import { SEARXNG_BODY_LIMIT, SearxngParams, SearxngResponse } from "./searxng/SearxngWire.ts"
import { TAVILY_BODY_LIMIT, TavilyExtractRequest, TavilyExtractResponse, TavilySearchRequest, TavilySearchResponse } from "./tavily/TavilyWire.ts"
import { CHAT_BODY_LIMIT, MCP_BODY_LIMIT, SEARCH_BODY_LIMIT } from "./JsonBody.ts"
import { ImageSearchResponse, SearchBody, WebSearchResponse } from "./SearchWire.ts"
import { ResponseObject, ResponseStreamEvent } from "./responses/ResponseObject.ts"
import { ResponseCreateRequest } from "./responses/ResponsesRequest.ts"

// Every status each endpoint can answer with (ApiError.statusOf, FetchWire's RENDERING); what each
// means is in OpenApiDocument. 503 is also the Node server's answer to every request while it drains.
const searchStatuses = (statuses: ReadonlyArray<number>) => statuses.map((status) => SearchErrorBody.pipe(HttpApiSchema.status(status)))
const chatStatuses = (statuses: ReadonlyArray<number>) => statuses.map((status) => ChatErrorBody.pipe(HttpApiSchema.status(status)))
/** Bodies: 400 413 415; the key: 401 429 503; backends: 502 503 504; defects: 500. */
const searchErrors = searchStatuses([400, 401, 413, 415, 429, 500, 502, 503, 504])
/** As search, and 404 for a model this service does not answer for. */
const chatErrors = chatStatuses([400, 401, 404, 413, 415, 429, 500, 502, 503, 504])
/** GET endpoints behind the key: no body to refuse, no backend to fail. */
const keyedGetErrors = [401, 429, 500, 503]

/** How a keyed endpoint is admitted (Admission): its wire family and body limit. */
const searchBody = KeyedRoute.of({ family: "search", bodyLimit: SEARCH_BODY_LIMIT })
const chatBody = KeyedRoute.of({ family: "chat", bodyLimit: CHAT_BODY_LIMIT })
const chatNoBody = KeyedRoute.of({ family: "chat", bodyLimit: undefined })
const searchNoBody = KeyedRoute.of({ family: "search", bodyLimit: undefined })

export class SearchGroup extends HttpApiGroup.make("search")
  .add(
    HttpApiEndpoint.post("webSearch", "/api/search/webSearch", {
      payload: SearchBody,
      success: WebSearchResponse,
      error: searchErrors
    }).annotate(KeyedRoute, searchBody).annotateMerge(OpenApi.annotations({ summary: "Web search: keywords in, ranked pages out" })),
    HttpApiEndpoint.post("imageSearch", "/api/search/imageSearch", {
      payload: SearchBody,
      success: ImageSearchResponse,
      error: searchErrors
    }).annotate(KeyedRoute, searchBody).annotateMerge(OpenApi.annotations({ summary: "Image search: keywords in, images out" })),
    HttpApiEndpoint.post("webFetch", "/api/search/webFetch", {
      payload: FetchRequestBody,
      success: WebFetchResponse,
      error: fetchErrorSchemas
    }).annotate(KeyedRoute, searchBody).annotateMerge(OpenApi.annotations({
      summary: "Web fetch: a URL (or up to 20) in, the page's main content (Markdown, text or HTML) out, or its chunks most relevant to a query",
      description: "Send url or urls, exactly one. With urls, data is a list in the order asked: each entry a page, or {url, error: {type, detail, status}} " +
        "with what a fetch of that URL alone would have answered; the request itself succeeds. Each URL past the first counts as one more request against the key's limit."
    })),
    HttpApiEndpoint.post("map", "/api/search/map", {
      payload: MapRequestBody,
      success: MapResponse,
      // As webFetch's, but for rendering (501): a map reads no page in a browser.
      error: searchStatuses([400, 401, 403, 413, 415, 429, 500, 502, 503, 504])
    }).annotate(KeyedRoute, searchBody).annotateMerge(OpenApi.annotations({
      summary: "Map a site: a URL in, the site's URLs out (its sitemaps' pages, then the page's links; same host, robots.txt honoured)"
    }))
  )
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "Web search, image search, web fetch and site maps, answered in the search envelope {success, code, message, exception, data, extra}" }))
{}

/** Server-sent events of chat.completion.chunk objects, ending with `data: [DONE]` (each event's schema: OpenApiDocument). */
const ChatEventStream = Schema.String.annotate({
  description: "Server-sent events, one `data: <JSON>` line each: chat.completion.chunk objects (schema: x-sse-data), " +
    "then `data: [DONE]`. A failure after the first chunk is sent as `data: {\"error\":{...}}` and then `data: [DONE]`. " +
    "Lines starting with `:` keep the connection alive."
}).pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))

export class ChatGroup extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("completions", "/v1/chat/completions", {
      payload: ChatCompletionRequest,
      success: [ChatCompletionResponse, ChatEventStream],
      error: chatErrors
    }).annotate(KeyedRoute, chatBody).annotateMerge(OpenApi.annotations({ summary: "OpenAI-compatible chat completions (stream:true answers SSE)" })),
    HttpApiEndpoint.get("models", "/v1/models", {
      success: ModelList,
      error: chatStatuses(keyedGetErrors)
    }).annotate(KeyedRoute, chatNoBody).annotateMerge(OpenApi.annotations({ summary: "Models this service answers for" }))
  )
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "OpenAI-compatible chat completions and the model list, with OpenAI error bodies" }))
{}

/** Server-sent events of the Responses API, each named by its type (each event's schema: OpenApiDocument). */
const ResponseEventStream = Schema.String.annotate({
  description: "Server-sent events, `event: <type>` and `data: <JSON>` each (schema: x-sse-data), with a sequence_number: " +
    "response.created, response.in_progress, the output items' events, then response.completed (response.incomplete when " +
    "max_output_tokens cut the answer, response.failed when it failed). Lines starting with `:` keep the connection alive."
}).pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))

export class ResponsesGroup extends HttpApiGroup.make("responses")
  .add(
    HttpApiEndpoint.post("createResponse", "/v1/responses", {
      payload: ResponseCreateRequest,
      success: [ResponseObject, ResponseEventStream],
      error: chatErrors
    }).annotate(KeyedRoute, chatBody).annotateMerge(OpenApi.annotations({
      summary: "OpenAI's Responses API over the chat gateway: web_search grounds the answer, function tools, text.format, stream:true answers SSE",
      description: "Nothing is stored (store is false): previous_response_id, background and conversation are refused; send the earlier turns in input. " +
        "Unlike the other endpoints, a top-level field this document does not name is refused (400 unknown_parameter), as OpenAI's Responses API does."
    }))
  )
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "OpenAI's Responses API (responses.create, responses.stream), with OpenAI error bodies" }))
{}

const mcpStatuses = (statuses: ReadonlyArray<number>) => statuses.map((status) => McpErrorBody.pipe(HttpApiSchema.status(status)))

/** One JSON-RPC message of the Model Context Protocol (as documented: the handler reads the body itself). */
const JsonRpcMessageFields = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optionalKey(Schema.Union([Schema.String, Schema.Number])),
  method: Schema.String,
  params: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
const McpMessage = Schema.Union([JsonRpcMessageFields, Schema.Array(JsonRpcMessageFields)]).annotate({
  identifier: "JsonRpcMessage",
  description: "A JSON-RPC 2.0 message of the Model Context Protocol: initialize, ping, tools/list, tools/call, " +
    "or a notification (notifications/initialized, notifications/cancelled); a batch of them under protocol 2025-03-26."
})
const McpResponse = Schema.Unknown.annotate({ description: "The JSON-RPC response (a result or an error with its code)" })
/** A tools/call that sent a progress token: notifications/progress events, then the response. */
const McpEventStream = Schema.String.annotate({
  description: "Server-sent events: `event: message` with `data: <JSON-RPC message>`: notifications/progress, then the response."
}).pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))

export class McpGroup extends HttpApiGroup.make("mcp")
  .add(
    HttpApiEndpoint.post("mcp", "/mcp", {
      payload: McpMessage,
      success: [McpResponse, McpEventStream, HttpApiSchema.Accepted],
      // 401, 403 (Origin), 406 (Accept), 413, 415; each tool call is charged to the key's limit inside the protocol.
      error: mcpStatuses([400, 401, 403, 406, 413, 415, 500, 503])
    }).annotate(KeyedRoute, KeyedRoute.of({ family: "mcp", bodyLimit: MCP_BODY_LIMIT, chargePerRequest: false }))
      .annotateMerge(OpenApi.annotations({ summary: "MCP over Streamable HTTP (stateless): the tools web_search, image_search, web_fetch, map_site and answer" }))
  )
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "The Model Context Protocol for agents, with JSON-RPC error bodies" }))
{}

const tavilyStatuses = (statuses: ReadonlyArray<number>) => statuses.map((status) => TavilyErrorBody.pipe(HttpApiSchema.status(status)))
const tavilyBody = KeyedRoute.of({ family: "tavily", bodyLimit: TAVILY_BODY_LIMIT })

export class TavilyGroup extends HttpApiGroup.make("tavily")
  .add(
    HttpApiEndpoint.post("tavilySearch", "/tavily/search", {
      payload: TavilySearchRequest,
      success: TavilySearchResponse,
      error: tavilyStatuses([400, 401, 413, 415, 429, 500, 502, 503, 504])
    }).annotate(KeyedRoute, tavilyBody).annotateMerge(OpenApi.annotations({
      summary: "Tavily-compatible search: results with snippets or page passages, raw page content, an answer, images",
      description: "The key as Authorization: Bearer, or as api_key in the body (older Tavily clients)."
    })),
    HttpApiEndpoint.post("tavilyExtract", "/tavily/extract", {
      payload: TavilyExtractRequest,
      success: TavilyExtractResponse,
      error: tavilyStatuses([400, 401, 413, 415, 429, 500, 503])
    }).annotate(KeyedRoute, tavilyBody).annotateMerge(OpenApi.annotations({
      summary: "Tavily-compatible extract: pages' main content; a page that cannot be read is listed in failed_results",
      description: "The key as Authorization: Bearer, or as api_key in the body (older Tavily clients)."
    }))
  )
  .middleware(OwnAdmission)
  .annotateMerge(OpenApi.annotations({ description: "Tavily's API for its clients (@tavily/core, tavily-python, LangChain): set the client's base URL to <server>/tavily. Errors as {\"detail\": {\"error\"}}" }))
{}

const searxngStatuses = (statuses: ReadonlyArray<number>) => statuses.map((status) => SearxngErrorBody.pipe(HttpApiSchema.status(status)))
const searxngErrors = searxngStatuses([400, 401, 429, 500, 502, 503, 504])

/** SearXNG's parameters as the document's query parameters (the handler reads them itself: its errors are SearXNG's). */
const searxngParameters = (() => {
  const document = Schema.toJsonSchemaDocument(SearxngParams)
  type Params = { readonly properties?: Record<string, Record<string, unknown>>; readonly required?: ReadonlyArray<string> }
  const schema = (document.definitions["SearxngSearchParameters"] ?? document.schema) as Params
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: schema.required?.includes(name) === true,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
    schema: property
  }))
})()

export class SearxngGroup extends HttpApiGroup.make("searxng")
  .add(
    HttpApiEndpoint.get("searxngSearch", "/searxng/search", {
      success: SearxngResponse,
      error: searxngErrors
    }).annotate(KeyedRoute, KeyedRoute.of({ family: "searxng", bodyLimit: undefined })).annotateMerge(OpenApi.annotations({
      summary: "SearXNG-compatible search (format=json): the parameters in the query string",
      override: { parameters: searxngParameters }
    })),
    HttpApiEndpoint.post("searxngSearchForm", "/searxng/search", {
      payload: SearxngParams.pipe(HttpApiSchema.asFormUrlEncoded()),
      success: SearxngResponse,
      error: searxngStatuses([400, 401, 413, 415, 429, 500, 502, 503, 504])
    }).annotate(KeyedRoute, KeyedRoute.of({ family: "searxng", bodyLimit: SEARXNG_BODY_LIMIT })).annotateMerge(OpenApi.annotations({
      summary: "SearXNG-compatible search (format=json): the parameters as a form"
    }))
  )
  .middleware(OwnAdmission)
  .annotateMerge(OpenApi.annotations({
    description: "SearXNG's search API for its callers (Open WebUI, LangChain): use <server>/searxng/search as the instance's search URL. " +
      "The key as Authorization: Bearer, or none from a private network when searxng.openOnPrivateNetwork is on. Errors as {\"error\"}"
  }))
{}

export class MetaGroup extends HttpApiGroup.make("meta")
  .add(
    HttpApiEndpoint.get("openapi", "/openapi.json", {
      success: Schema.Record(Schema.String, Schema.Unknown),
      error: searchStatuses(keyedGetErrors)
    }).annotate(KeyedRoute, searchNoBody).annotateMerge(OpenApi.annotations({ summary: "This document" }))
  )
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "This document (needs the API key, like the API)" }))
{}

/** /readyz: each check's state; 503 with the same body when one fails. */
const ReadinessBody = Schema.Struct({
  status: Schema.Literals(["ready", "not_ready"]),
  checks: Schema.Record(Schema.String, Schema.Struct({ ok: Schema.Boolean, detail: Schema.String }))
})

export class HealthGroup extends HttpApiGroup.make("health").annotateMerge(OpenApi.annotations({
  description: "Probes for load balancers and orchestrators; no API key needed"
})).add(
  HttpApiEndpoint.get("healthz", "/healthz", {
    success: Schema.Struct({ status: Schema.Literal("ok") }),
    error: searchStatuses([503])
  }).annotateMerge(OpenApi.annotations({ summary: "Liveness probe (no auth)" })),
  HttpApiEndpoint.get("readyz", "/readyz", {
    success: ReadinessBody,
    error: [ReadinessBody.pipe(HttpApiSchema.status(503)), ...searchStatuses([503])]
  }).annotateMerge(OpenApi.annotations({ summary: "Readiness probe (no auth): the index loaded, the shared store reachable" })),
  HttpApiEndpoint.get("version", "/version", {
    success: Schema.Struct({ name: Schema.String, version: Schema.String, commit: Schema.NullOr(Schema.String) }),
    error: searchStatuses([503])
  }).annotateMerge(OpenApi.annotations({ summary: "Name, version and commit of this build (no auth)" }))
) {}

export class PeriscopeApi extends HttpApi.make("periscope")
  .add(SearchGroup)
  .add(ChatGroup)
  .add(ResponsesGroup)
  .add(EmbeddingsGroup)
  .add(McpGroup)
  .add(TavilyGroup)
  .add(SearxngGroup)
  .add(MetaGroup)
  .add(HealthGroup)
  .annotateMerge(OpenApi.annotations({
    title: "Periscope",
    version: "0.1.0",
    description: "Web search, image search, web fetch, OpenAI-compatible chat completions and OpenAI's Responses API for AI agents, " +
      "and the Tavily and SearXNG APIs their clients already speak. " +
      "Request bodies are open: fields this document does not name are ignored, as OpenAI's API does " +
      "(but /v1/responses, which refuses them as OpenAI's Responses API does, and /tavily and /searxng, which refuse them by name).",
    license: { name: "MIT", identifier: "MIT" },
    // Relative: resolved against wherever this document was fetched from, so one document serves every host and adapter.
    servers: [{ url: "/", description: "The server that served this document" }],
    transform: finishDocument
  }))
  .annotate(HttpApi.AdditionalSchemas, [ChatCompletionChunk, ResponseStreamEvent])
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
