/**
 * webSearch and imageSearch: decode the body, ask FederatedSearch (the local
 * backend fused with the configured live providers), wrap the envelope with
 * provenance in `extra` when asked. A request without options, with no provider
 * configured, is answered exactly as the local backend answers it.
 * webFetch: decode the body, ask WebFetch, answer the page in the same envelope;
 * its failures get a status and exception.type per reason (FetchWire).
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { FederatedSearch } from "../search/FederatedSearch.ts"
import { WebFetch } from "../search/WebFetch.ts"
import { PeriscopeApi } from "./Api.ts"
import type { ApiError } from "./ApiError.ts"
import { fromFederationError } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { fetchErrorResponse, FetchRequestBody } from "./FetchWire.ts"
import { decodeJsonBody, makeBodyDecoder, SEARCH_BODY_LIMIT } from "./JsonBody.ts"
import { SearchRequest, successEnvelope, successEnvelopeWith } from "./SearchWire.ts"

const decodeSearchRequest = makeBodyDecoder(SearchRequest)
const decodeFetchRequest = makeBodyDecoder(FetchRequestBody)
const renderError = (error: ApiError) => Effect.succeed(errorResponse("search", error))
/** Written directly: the data's types already match the contract's schema, and encoding it again costs a third of the request. */
const renderSuccess = <A>(answer: { readonly data: A; readonly extra: unknown }) =>
  HttpServerResponse.jsonUnsafe(successEnvelopeWith(answer.data, answer.extra))

export const SearchHandlers = HttpApiBuilder.group(PeriscopeApi, "search", Effect.fnUntraced(function*(handlers) {
  const search = yield* FederatedSearch
  const webSearch = (query: SearchRequest) => Effect.mapError(search.web(query), fromFederationError)
  const imageSearch = (query: SearchRequest) => Effect.mapError(search.images(query), fromFederationError)
  const fetcher = yield* WebFetch
  return handlers
    .handleRaw("webSearch", ({ request }) =>
      decodeJsonBody(request, SEARCH_BODY_LIMIT, decodeSearchRequest).pipe(
        Effect.flatMap(webSearch),
        Effect.map(renderSuccess),
        Effect.catch(renderError)
      ))
    .handleRaw("imageSearch", ({ request }) =>
      decodeJsonBody(request, SEARCH_BODY_LIMIT, decodeSearchRequest).pipe(
        Effect.flatMap(imageSearch),
        Effect.map(renderSuccess),
        Effect.catch(renderError)
      ))
    .handleRaw("webFetch", ({ request }) =>
      decodeJsonBody(request, SEARCH_BODY_LIMIT, decodeFetchRequest).pipe(
        Effect.flatMap((body) =>
          fetcher.fetch(body).pipe(
            Effect.map((page) =>
              HttpServerResponse.jsonUnsafe(successEnvelope({
                title: page.title,
                content: page.content,
                url: page.url,
                fromCache: page.fromCache,
                date: page.date,
                contentType: page.contentType
              }))
            ),
            Effect.catchTag("WebFetchError", (error) => Effect.succeed(fetchErrorResponse(error)))
          )
        ),
        Effect.catch(renderError)
      ))
}))
