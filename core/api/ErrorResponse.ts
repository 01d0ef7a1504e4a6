/** Renders an ApiError as the HTTP response of its wire family. */
import { HttpServerResponse } from "effect/http"
import { type ApiError, errorBody, errorHeaders, statusOf, type WireFamily } from "./ApiError.ts"

export const errorResponse = (family: WireFamily, error: ApiError): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(errorBody(family, error), {
    status: statusOf[error.kind],
    headers: errorHeaders(error)
  })
