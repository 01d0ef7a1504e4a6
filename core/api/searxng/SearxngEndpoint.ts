/**
 * GET and POST /searxng/search from a request's head (and form body) to the answer: admitted
 * (SearxngAccess), its parameters read from the query string and the form (SearxngWire),
 * answered (SearxngSearch), every error rendered as SearXNG's `{"error": "..."}`. The HttpApi
 * handlers (SearxngHandlers) and the express lane answer with the same function.
 */
import { Effect, Result } from "effect"
import { FederatedSearch } from "../../search/FederatedSearch.ts"
import { Admission } from "../Admission.ts"
import { type Answer, errorAnswer, jsonAnswer } from "../Answer.ts"
import { ApiError } from "../ApiError.ts"
import { closedDecoder } from "../ClosedDecoder.ts"
import { fromInvalidInput } from "../DomainErrors.ts"
import { bodyTooLarge } from "../JsonBody.ts"
import type { RequestHead } from "../RequestTelemetry.ts"
import { makeSearxngAccess } from "./SearxngAccess.ts"
import { SearxngOptions } from "./SearxngOptions.ts"
import { makeSearxngSearch } from "./SearxngSearch.ts"
import { paramsOf, SEARXNG_BODY_LIMIT, SearxngParams } from "./SearxngWire.ts"

const FORM = "application/x-www-form-urlencoded"

/** What is wrong with a POST form's head: a type that is not SearXNG's form, or a declared length over the limit. */
const formHeadProblem = (request: RequestHead): ApiError | undefined => {
  const contentType = request.headers["content-type"]
  if (contentType !== undefined && contentType !== "") {
    const semi = contentType.indexOf(";")
    const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
    if (type !== FORM) {
      return new ApiError({
        kind: "unsupported_media_type",
        message: `Content-Type: must be ${FORM} (SearXNG's form; or send the parameters in the query string of a GET), got ${JSON.stringify(contentType.slice(0, 100))}`,
        param: null
      })
    }
  }
  const length = request.headers["content-length"]
  if (length !== undefined && /^\d+$/.test(length) && Number(length) > SEARXNG_BODY_LIMIT) return bodyTooLarge(SEARXNG_BODY_LIMIT)
  return undefined
}

const queryStringOf = (url: string): string => {
  const q = url.indexOf("?")
  return q === -1 ? "" : url.slice(q + 1)
}

export interface SearxngRoute {
  /** From the body's text (undefined when over the limit; ignored for a GET) and the head. */
  readonly admitsItself: (body: string | undefined, request: RequestHead) => Effect.Effect<Answer>
}

/** The route over the application's services, built once per server. */
export const makeSearxngRoute = Effect.gen(function*() {
  const access = makeSearxngAccess(yield* Admission, yield* SearxngOptions)
  const search = makeSearxngSearch(yield* FederatedSearch)
  const decode = closedDecoder(SearxngParams, "parameters", Object.keys(SearxngParams.fields))
  const answer = (body: string | undefined, request: RequestHead): Effect.Effect<Answer, ApiError> => {
    const post = request.method === "POST"
    if (post) {
      const problem = formHeadProblem(request)
      if (problem !== undefined) return Effect.fail(problem)
      if (body === undefined) return Effect.fail(bodyTooLarge(SEARXNG_BODY_LIMIT))
    }
    const params = decode(paramsOf(queryStringOf(request.url), post ? body : undefined))
    if (Result.isFailure(params)) return Effect.fail(fromInvalidInput(params.failure))
    return Effect.map(search(params.success), jsonAnswer)
  }
  const route: SearxngRoute = {
    admitsItself: (body, request) =>
      access(request).pipe(
        Effect.flatMap(() => answer(body, request)),
        Effect.catch((error) => Effect.succeed(errorAnswer("searxng", error)))
      )
  }
  return route
})
