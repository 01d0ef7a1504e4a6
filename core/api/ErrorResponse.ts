/** Renders an ApiError as the HTTP response of its wire family. */
import type { HttpServerResponse } from "effect/http"
import { errorAnswer, toHttpResponse } from "./Answer.ts"
import type { ApiError, WireFamily } from "./ApiError.ts"

export const errorResponse = (family: WireFamily, error: ApiError): HttpServerResponse.HttpServerResponse =>
  toHttpResponse(errorAnswer(family, error))
