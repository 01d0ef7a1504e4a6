import { Schema } from "effect"

/**
 * A search backend could not answer. `reason` decides the HTTP status:
 * unavailable -> 503, timeout -> 504, upstream -> 502, internal -> 500.
 * `message` is shown to the caller, so it never carries secrets or internals.
 */
export class SearchBackendError extends Schema.TaggedError<SearchBackendError>()("SearchBackendError", {
  reason: Schema.Literals(["unavailable", "timeout", "upstream", "internal"]),
  message: Schema.String
}) {}
