/** webSearch and imageSearch: decode the body, ask the service, wrap the envelope. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { ImageSearch } from "../search/ImageSearch.ts"
import { WebSearch } from "../search/WebSearch.ts"
import { PeriscopeApi } from "./Api.ts"
import type { ApiError } from "./ApiError.ts"
import { fromSearchError } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { decodeJsonBody, makeBodyDecoder, SEARCH_BODY_LIMIT } from "./JsonBody.ts"
import { SearchRequest, successEnvelope } from "./SearchWire.ts"

const decodeSearchRequest = makeBodyDecoder(SearchRequest)
const renderError = (error: ApiError) => Effect.succeed(errorResponse("search", error))
/** Written directly: the data's types already match the contract's schema, and encoding it again costs a third of the request. */
const renderSuccess = <A>(data: A) => HttpServerResponse.jsonUnsafe(successEnvelope(data))

export const SearchHandlers = HttpApiBuilder.group(PeriscopeApi, "search", Effect.fnUntraced(function*(handlers) {
  const web = yield* WebSearch
  const images = yield* ImageSearch
  return handlers
    .handleRaw("webSearch", ({ request }) =>
      decodeJsonBody(request, SEARCH_BODY_LIMIT, decodeSearchRequest).pipe(
        Effect.flatMap((query) => Effect.mapError(web.search(query), fromSearchError)),
        Effect.map(renderSuccess),
        Effect.catch(renderError)
      ))
    .handleRaw("imageSearch", ({ request }) =>
      decodeJsonBody(request, SEARCH_BODY_LIMIT, decodeSearchRequest).pipe(
        Effect.flatMap((query) => Effect.mapError(images.search(query), fromSearchError)),
        Effect.map(renderSuccess),
        Effect.catch(renderError)
      ))
}))
