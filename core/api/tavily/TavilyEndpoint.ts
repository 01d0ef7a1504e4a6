/**
 * The Tavily wire's two routes from a request's body text and head to the answer: admitted
 * (TavilyAdmission), decoded (TavilyWire: unknown keys refused), answered (TavilySearch,
 * TavilyExtract) and every error rendered in Tavily's `{"detail": {"error"}}` body. The HttpApi
 * handlers (TavilyHandlers) and the express lane answer with the same functions.
 */
import { Effect, Option, Result } from "effect"
import type { Principal } from "../../auth/AuthError.ts"
import { ChatGateway } from "../../chat/ChatGateway.ts"
import { FederatedSearch } from "../../search/FederatedSearch.ts"
import { StoredPages } from "../../search/StoredPages.ts"
import { WebFetch } from "../../search/WebFetch.ts"
import { Admission } from "../Admission.ts"
import { type Answer, errorAnswer, jsonAnswer } from "../Answer.ts"
import type { ApiError } from "../ApiError.ts"
import { closedDecoder } from "../ClosedDecoder.ts"
import { fromInvalidInput } from "../DomainErrors.ts"
import type { RequestHead } from "../RequestTelemetry.ts"
import { makeTavilyAdmission } from "./TavilyAdmission.ts"
import { makeTavilyExtract } from "./TavilyExtract.ts"
import { makePageReader } from "./TavilyPages.ts"
import { makeTavilySearch } from "./TavilySearch.ts"
import { TAVILY_BODY_LIMIT, TavilyExtractRequest, TavilySearchRequest } from "./TavilyWire.ts"

const decoderOf = <S extends typeof TavilySearchRequest | typeof TavilyExtractRequest>(schema: S) => {
  const decode = closedDecoder(schema, "request body", Object.keys(schema.fields))
  return (input: unknown): Result.Result<S["Type"], ApiError> => Result.mapError(decode(input), fromInvalidInput)
}

const renderError = (error: ApiError): Answer => errorAnswer("tavily", error)
const renderSuccess = (value: unknown): Answer => jsonAnswer(value)

/** One route: admit, decode, answer; the answer never fails (errors are Tavily's bodies). */
const route = <A>(
  admit: ReturnType<typeof makeTavilyAdmission>,
  decode: (input: unknown) => Result.Result<A, ApiError>,
  run: (request: A, principal: Principal) => Effect.Effect<unknown, ApiError>
) =>
  (body: string | undefined, request: RequestHead): Effect.Effect<Answer> =>
    admit(body, request).pipe(
      Effect.flatMap(({ json, principal }) => {
        const decoded = decode(json)
        return Result.isSuccess(decoded) ? run(decoded.success, principal) : Effect.fail(decoded.failure)
      }),
      Effect.match({ onFailure: renderError, onSuccess: renderSuccess })
    )

/** A route that admits itself (the express lane's SelfAdmitted): from the body's text (undefined when over the limit) and the head. */
export interface TavilyRoute {
  readonly admitsItself: (body: string | undefined, request: RequestHead) => Effect.Effect<Answer>
}

export interface TavilyRoutes {
  readonly search: TavilyRoute
  readonly extract: TavilyRoute
}

/** The routes over the application's services, built once per server. */
export const makeTavilyRoutes = Effect.gen(function*() {
  const admission = yield* Admission
  const chat = yield* ChatGateway
  const pages = makePageReader(yield* WebFetch, Option.getOrUndefined(yield* Effect.serviceOption(StoredPages)))
  const search = makeTavilySearch({ search: yield* FederatedSearch, pages, chat, hasModel: (yield* chat.models).length > 0 })
  const extract = makeTavilyExtract(pages)
  const admit = makeTavilyAdmission(admission, TAVILY_BODY_LIMIT)
  // Each URL past the first is one more request against the key's limit, as webFetch counts a page.
  const extractCharged = (request: TavilyExtractRequest, principal: Principal) => {
    const more = typeof request.urls === "string" ? 0 : request.urls.length - 1
    return more === 0 ? extract(request) : Effect.andThen(Effect.forEach(Array.from({ length: more }), () => admission.charge(principal), { discard: true }), extract(request))
  }
  return {
    search: { admitsItself: route(admit, decoderOf(TavilySearchRequest), search) },
    extract: { admitsItself: route(admit, decoderOf(TavilyExtractRequest), extractCharged) }
  } satisfies TavilyRoutes
})
