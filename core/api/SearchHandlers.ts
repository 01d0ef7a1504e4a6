/**
 * webSearch and imageSearch: decode the body, ask FederatedSearch (the local
 * backend fused with the configured live providers), wrap the envelope with
 * provenance in `extra` when asked. A request without options, with no provider
 * configured, is answered exactly as the local backend answers it. The content
 * options (content, maxCharsPerResult, maxTokens) are web search's alone.
 * webFetch: decode the body, ask WebFetch, answer the page in the same envelope;
 * its failures get a status and exception.type per reason (FetchWire). With `urls`, every
 * URL past the first is charged to the key's limit, as Tavily's extract charges them, and each
 * failure is its entry's. map: decode, ask WebFetch's mapSite, answer the site's URLs.
 */
import { Effect, Option, Result } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { FederatedSearch, type SourceSelectionError } from "../search/FederatedSearch.ts"
import type { SearchBackendError } from "../search/SearchError.ts"
import { contentOptionsIssue, type SearchQuery } from "../search/SearchQuery.ts"
import { invalid } from "../schema/InvalidInput.ts"
import { WebFetch } from "../search/WebFetch.ts"
import type { PageIndexing } from "../search/PageIndexing.ts"
import type { FetchedPage } from "../search/WebFetch.ts"
import { Admission, CurrentPrincipal } from "./Admission.ts"
import { PeriscopeApi } from "./Api.ts"
import { type Answer, errorAnswer, jsonAnswer, toHttpResponse } from "./Answer.ts"
import type { ApiError } from "./ApiError.ts"
import { fromFederationError, fromInvalidInput } from "./DomainErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { fetchBodyIssue, fetchErrorResponse, fetchFailureEntry, FetchRequestBody, MapRequestBody } from "./FetchWire.ts"
import { decodeJsonBody, makeBodyDecoder, parseBody, readJsonText, SEARCH_BODY_LIMIT } from "./JsonBody.ts"
import { SearchBody, successEnvelopeWith, toSearchQuery } from "./SearchWire.ts"

const decodeSearchBody = makeBodyDecoder(SearchBody)

/** The body's content options checked against each other and the kind of search. */
const checkedFor = (kind: "web" | "images") => (query: SearchQuery): Result.Result<SearchQuery, ApiError> => {
  // The content options (and expand) are rare: a body without them is passed on with one look at its keys.
  if (query.content === undefined && query.maxCharsPerResult === undefined && query.maxTokens === undefined && query.expand === undefined) return Result.succeed(query)
  const issue = contentOptionsIssue(query, kind)
  return issue === undefined ? Result.succeed(query) : Result.fail(fromInvalidInput(invalid("request body", issue.path, issue.rule)))
}
const checkedWeb = checkedFor("web")
const checkedImages = checkedFor("images")

/** A web search body decoded into the search the backends run. */
export const decodeSearchRequest = (input: unknown) => Result.flatMap(Result.map(decodeSearchBody(input), toSearchQuery), checkedWeb)
/** An image search body decoded: the web search's, without content options. */
export const decodeImageSearchRequest = (input: unknown) => Result.flatMap(Result.map(decodeSearchBody(input), toSearchQuery), checkedImages)
const decodeFetchBody = makeBodyDecoder(FetchRequestBody)
/** A webFetch body decoded and its fields checked against each other. */
const decodeFetchRequest = (input: unknown) =>
  Result.flatMap(decodeFetchBody(input), (body) => {
    const issue = fetchBodyIssue(body)
    return issue === undefined ? Result.succeed(body) : Result.fail(fromInvalidInput(invalid("request body", issue.path, issue.rule)))
  })
const decodeMapRequest = makeBodyDecoder(MapRequestBody)
const renderError = (error: ApiError) => Effect.succeed(errorAnswer("search", error))
/** Written directly: the data's types already match the contract's schema, and encoding it again costs a third of the request. */
const renderSuccess = <A>(answer: { readonly data: A; readonly extra: unknown }) => jsonAnswer(successEnvelopeWith(answer.data, answer.extra))

/** One search route: decode the body, run the search, render its envelope or its error. */
const answerWith = <A>(
  decode: (input: unknown) => Result.Result<SearchQuery, ApiError>,
  run: (query: SearchQuery) => Effect.Effect<{ readonly data: A; readonly extra: unknown }, SearchBackendError | SourceSelectionError>
) =>
  (text: string): Effect.Effect<Answer> =>
    Effect.suspend(() => {
      const query = parseBody(text, decode)
      if (Result.isFailure(query)) return renderError(query.failure)
      return Effect.matchEffect(run(query.success), {
        onFailure: (error) => renderError(fromFederationError(error)),
        onSuccess: (answer) => Effect.succeed(renderSuccess(answer))
      })
    })

/**
 * webSearch and imageSearch from the body's text to the answer, errors rendered in the
 * search family: the HttpApi handlers below and the express lane (ExpressLane) answer with these.
 */
export const makeSearchAnswers = (search: FederatedSearch["Service"]) => ({
  web: answerWith(decodeSearchRequest, (query) => search.web(query)),
  images: answerWith(decodeImageSearchRequest, (query) => search.images(query))
})

/** The body under the search limit, then `answer`; a body that cannot be read is answered with its error. */
const fromBody = (request: HttpServerRequest.HttpServerRequest, answer: (text: string) => Effect.Effect<Answer>) =>
  readJsonText(request, SEARCH_BODY_LIMIT).pipe(
    Effect.matchEffect({ onFailure: renderError, onSuccess: answer }),
    Effect.map(toHttpResponse)
  )

/** webFetch's answer to addToIndex when the search backend has no local index. */
const noIndex: PageIndexing = { added: false, reason: "no_index", message: "the search backend has no local index to add the page to; it was fetched but not added" }

/** A page as `data` gives it: title, content, url and fromCache, then date and contentType, chunks with a query. */
const pageData = (page: FetchedPage) => ({
  title: page.title,
  content: page.content,
  url: page.url,
  fromCache: page.fromCache,
  date: page.date,
  contentType: page.contentType,
  ...(page.chunks === undefined ? {} : { chunks: page.chunks })
})

export const SearchHandlers = HttpApiBuilder.group(PeriscopeApi, "search", Effect.fnUntraced(function*(handlers) {
  const answers = makeSearchAnswers(yield* FederatedSearch)
  const fetcher = yield* WebFetch
  const admission = yield* Admission
  return handlers
    .handleRaw("webSearch", ({ request }) => fromBody(request, answers.web))
    .handleRaw("imageSearch", ({ request }) => fromBody(request, answers.images))
    .handleRaw("webFetch", ({ request }) =>
      decodeJsonBody(request, SEARCH_BODY_LIMIT, decodeFetchRequest).pipe(
        Effect.flatMap(({ url, urls, ...body }) =>
          Effect.flatMap(Effect.serviceOption(CurrentPrincipal), (found) => {
            const principal = Option.getOrUndefined(found)
            const options = { ...body, caller: principal?.keyName }
            if (urls !== undefined) {
              const more = principal === undefined ? 0 : urls.length - 1
              return Effect.forEach(Array.from({ length: more }), () => admission.charge(principal!), { discard: true }).pipe(
                Effect.andThen(fetcher.fetchMany({ ...options, urls })),
                Effect.map((outcomes) =>
                  HttpServerResponse.jsonUnsafe(successEnvelopeWith(
                    outcomes.map((outcome, i) => Result.isSuccess(outcome) ? pageData(outcome.success) : fetchFailureEntry(urls[i]!, outcome.failure)),
                    body.addToIndex === true ? { index: outcomes.map((outcome) => Result.isSuccess(outcome) ? outcome.success.index ?? noIndex : null) } : null
                  ))
                )
              )
            }
            return fetcher.fetch({ ...options, url: url! }).pipe(
              Effect.map((page) => HttpServerResponse.jsonUnsafe(successEnvelopeWith(pageData(page), body.addToIndex === true ? { index: page.index ?? noIndex } : null))),
              Effect.catchTag("WebFetchError", (error) => Effect.succeed(fetchErrorResponse(error)))
            )
          })
        ),
        Effect.catch((error) => Effect.succeed(errorResponse("search", error)))
      ))
    .handleRaw("map", ({ request }) =>
      decodeJsonBody(request, SEARCH_BODY_LIMIT, decodeMapRequest).pipe(
        Effect.flatMap((body) =>
          fetcher.mapSite(body).pipe(
            Effect.map((map) => HttpServerResponse.jsonUnsafe(successEnvelopeWith({ url: map.url, urls: map.urls, truncated: map.truncated }, null))),
            Effect.catchTag("WebFetchError", (error) => Effect.succeed(fetchErrorResponse(error)))
          )
        ),
        Effect.catch((error) => Effect.succeed(errorResponse("search", error)))
      ))
}))
