/**
 * How a Tavily request is admitted: through Admission like every keyed route, with the
 * credential Tavily's clients send: `Authorization: Bearer <key>`, or `api_key` in the JSON
 * body (older clients). The body is read before admission only when no bearer header came,
 * since only then can the key be in it; a body that is not JSON then has no key (401), and
 * one over the limit is refused for its size (413) without being read.
 */
import { Effect, Result } from "effect"
import type { Principal } from "../../auth/AuthError.ts"
import { parseJson } from "../../schema/Decode.ts"
import { type Admission, bearerCredential } from "../Admission.ts"
import type { ApiError } from "../ApiError.ts"
import { fromInvalidInput } from "../DomainErrors.ts"
import { bodyHeadProblem, bodyTooLarge } from "../JsonBody.ts"
import type { RequestHead } from "../RequestTelemetry.ts"

export interface AdmittedBody {
  readonly principal: Principal
  /** The parsed JSON body, for the wire's decoder. */
  readonly json: unknown
}

const bodyKey = (json: unknown): string | undefined => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined
  const key = (json as { readonly api_key?: unknown }).api_key
  return typeof key === "string" && key !== "" ? key : undefined
}

/** Admits a Tavily request from its body's text (undefined when it was over `limit`) and head. */
export const makeTavilyAdmission = (admission: Admission["Service"], limit: number) =>
  (body: string | undefined, request: RequestHead): Effect.Effect<AdmittedBody, ApiError> => {
    const headers = request.headers
    const bearer = bearerCredential(headers["authorization"])
    if (bearer === undefined) {
      // The key can only be in the body: its head is checked before it is looked into.
      const problem = bodyHeadProblem(headers["content-type"], headers["content-length"], limit)
      if (problem !== undefined) return Effect.fail(problem)
      if (body === undefined) return Effect.fail(bodyTooLarge(limit))
    }
    const json = body === undefined ? undefined : parseJson(body, "request body")
    const credential = bearer === undefined && json !== undefined && Result.isSuccess(json) ? bodyKey(json.success) : undefined
    return Effect.flatMap(admission.admit({ headers, credential, bodyLimit: limit }), (principal) => {
      if (json === undefined) return Effect.fail(bodyTooLarge(limit))
      return Result.isSuccess(json) ? Effect.succeed({ principal, json: json.success }) : Effect.fail(fromInvalidInput(json.failure))
    })
  }
