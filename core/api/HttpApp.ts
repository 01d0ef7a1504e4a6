/**
 * The whole HTTP application as Layers: the contract's routes with their
 * handlers, the auth middleware and the error boundary. Adapters add a server
 * (Node) or turn it into a fetch handler (Deno, embed); backends come in as
 * the services Layer.
 */
import { Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { ApiKeys } from "../auth/ApiKeys.ts"
import type { Admission } from "./Admission.ts"
import type { RateLimits } from "../auth/RateLimits.ts"
import type { ChatGateway } from "../chat/ChatGateway.ts"
import type { FederatedSearch } from "../search/FederatedSearch.ts"
import type { ImageSearch } from "../search/ImageSearch.ts"
import type { WebFetch } from "../search/WebFetch.ts"
import type { WebSearch } from "../search/WebSearch.ts"
import { PeriscopeApi } from "./Api.ts"
import type { Readiness } from "./Readiness.ts"
import { Authorization } from "./Authorization.ts"
import { ChatHandlers } from "./ChatHandlers.ts"
import { EmbeddingsHandlers } from "./embeddings/EmbeddingsHandlers.ts"
import { ErrorBoundary } from "./ErrorBoundary.ts"
import { McpHandlers } from "./McpHandlers.ts"
import type { McpEndpoint } from "./mcp/McpEndpoint.ts"
import { HealthHandlers, MetaHandlers } from "./MetaHandlers.ts"
import { MetricsRoute } from "./MetricsRoute.ts"
import { OwnAdmission } from "./OwnAdmission.ts"
import { PlaygroundRoutes } from "./Playground.ts"
import { RequestTelemetry } from "./RequestTelemetry.ts"
import { ResponsesHandlers } from "./responses/ResponsesHandlers.ts"
import { SearchHandlers } from "./SearchHandlers.ts"
import { SearxngHandlers } from "./searxng/SearxngHandlers.ts"
import { TavilyHandlers } from "./tavily/TavilyHandlers.ts"

/** Everything the routes and the embed library need: the search services (local and federated), webFetch, the chat gateway, keys, limits and the admission over them, the MCP server. */
export type AppServices = WebSearch | ImageSearch | FederatedSearch | ChatGateway | ApiKeys | RateLimits | Admission | McpEndpoint | WebFetch | Readiness

export const PeriscopeRoutes = Layer.mergeAll(
  // First: the outermost global middleware, so it sees the status the error boundary renders.
  RequestTelemetry,
  MetricsRoute,
  HttpApiBuilder.layer(PeriscopeApi).pipe(
    Layer.provide([SearchHandlers, ChatHandlers, ResponsesHandlers, EmbeddingsHandlers, McpHandlers, TavilyHandlers, SearxngHandlers, MetaHandlers, HealthHandlers]),
    Layer.provide([Authorization.layer, OwnAdmission.layer])
  ),
  PlaygroundRoutes,
  ErrorBoundary
)

/**
 * A fetch-style handler over the given services: `(Request) => Promise<Response>`.
 * Used by the Deno adapter and the embed library; `dispose` releases the services.
 */
export const makeWebHandler = <E>(services: Layer.Layer<AppServices, E>, options?: { readonly memoMap?: Layer.MemoMap }) =>
  HttpRouter.toWebHandler(
    PeriscopeRoutes.pipe(Layer.provide(services), Layer.provide(HttpServer.layerServices)),
    { disableLogger: true, ...(options?.memoMap === undefined ? {} : { memoMap: options.memoMap }) }
  )
