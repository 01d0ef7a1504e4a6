/**
 * webSearch and imageSearch: decode the body, ask the service, wrap the envelope.
 * With FederatedSearch provided (the application always provides it), requests go
 * through it: live providers, options and provenance in `extra`; a request without
 * options is answered exactly as the plain service would.
 */
import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { FederatedSearch, type SourceSelectionError } from "../search/FederatedSearch.ts"
import { ImageSearch } from "../search/ImageSearch.ts"
import type { SearchBackendError } from "../search/SearchError.ts"
import { WebSearch } from "../search/WebSearch.ts"
import { PeriscopeApi } from "./Api.ts"
import { ApiError } from "./ApiError.ts"
import { fromSearchError } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { decodeJsonBody, makeBodyDecoder, SEARCH_BODY_LIMIT } from "./JsonBody.ts"
import { SearchRequest, successEnvelopeWith } from "./SearchWire.ts"

const decodeSearchRequest = makeBodyDecoder(SearchRequest)
const renderError = (error: ApiError) => Effect.succeed(errorResponse("search", error))
/** Written directly: the data's types already match the contract's schema, and encoding it again costs a third of the request. */
const renderSuccess = <A>(answer: { readonly data: A; readonly extra: unknown }) =>
  HttpServerResponse.jsonUnsafe(successEnvelopeWith(answer.data, answer.extra))

const fromFederationError = (error: SearchBackendError | SourceSelectionError): ApiError =>
  error._tag === "SourceSelectionError"
    ? new ApiError({ kind: "invalid_request", message: error.message, param: error.path })
    : fromSearchError(error)

const plain = <A>(data: A) => ({ data, extra: null })

export const SearchHandlers = HttpApiBuilder.group(PeriscopeApi, "search", Effect.fnUntraced(function*(handlers) {
  const web = yield* WebSearch
  const images = yield* ImageSearch
  const federated = Option.getOrUndefined(yield* Effect.serviceOption(FederatedSearch))
  const webSearch = (query: SearchRequest) =>
    federated === undefined ? Effect.mapError(Effect.map(web.search(query), plain), fromSearchError) : Effect.mapError(federated.web(query), fromFederationError)
  const imageSearch = (query: SearchRequest) =>
    federated === undefined ? Effect.mapError(Effect.map(images.search(query), plain), fromSearchError) : Effect.mapError(federated.images(query), fromFederationError)
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
}))
