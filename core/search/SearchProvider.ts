/**
 * The contract every upstream search provider implements (SearXNG, Brave, Serper,
 * Tavily, Exa, another Periscope): our query in, ranked hits or a typed reason out.
 * The reason decides what the federation does next: rate_limited and blocked suspend
 * the provider for a while, the others only fail this one request.
 */
import { type Effect, Schema } from "effect"
import type { QueryCorrections } from "./QueryCorrections.ts"
import type { ProviderOption, SearchQuery } from "./SearchQuery.ts"
import type { ImageResult, WebHit } from "./SearchResult.ts"

export const PROVIDER_ERROR_REASONS = [
  "rate_limited",
  "blocked",
  "timeout",
  "unavailable",
  "bad_response",
  "unauthorized",
  "unsupported"
] as const
export type ProviderErrorReason = typeof PROVIDER_ERROR_REASONS[number]

/**
 * One provider failed one request.
 * rate_limited: 429 or an exhausted quota (retryAfterMs when the provider said);
 * blocked: 403 or a CAPTCHA page (captcha says which); timeout: no answer in time;
 * unavailable: no connection, 5xx; bad_response: an answer we cannot read;
 * unauthorized: a missing or refused key; unsupported: the provider has no such search (images).
 * `message` is safe to show: it never carries a key.
 */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  provider: Schema.String,
  reason: Schema.Literals(PROVIDER_ERROR_REASONS),
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  retryAfterMs: Schema.optional(Schema.Number),
  captcha: Schema.optional(Schema.Boolean)
}) {}

/** Why a provider did not apply an option, for `extra`. */
export interface UnappliedOption {
  readonly option: ProviderOption
  /** What we did instead: "filtered" (our side, by date) or "ignored" (nothing could be done). */
  readonly handling: "filtered" | "ignored"
  readonly detail: string
}

/** A provider's answer: hits in its ranking order and the options it could not apply itself. */
export interface ProviderAnswer<A> {
  readonly hits: ReadonlyArray<A>
  readonly unapplied: ReadonlyArray<UnappliedOption>
  /** How the source answered, when it says (the local engine: hybrid retrieval's fallbacks, RetrievalNotes). */
  readonly notes?: ReadonlyArray<string> | undefined
  /** What the source corrected in the query, or suggests (the local engine's Did you mean). */
  readonly corrections?: QueryCorrections | undefined
}

export interface SearchProvider {
  /** The configured name (unique; used in `sources`, logs and `extra`). */
  readonly name: string
  /** What kind of engine it is: a kind of core/backends/search/SearchProviders.ts, or "local". */
  readonly kind: string
  /** Whether the provider has an image search at all. */
  readonly images: boolean
  web(query: SearchQuery): Effect.Effect<ProviderAnswer<WebHit>, ProviderError>
  image(query: SearchQuery): Effect.Effect<ProviderAnswer<ImageResult>, ProviderError>
}
