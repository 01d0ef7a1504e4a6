/**
 * What the envelope's `extra` says about a federated answer: per source its status,
 * time, result count and failure reason; per result its sources and ranks; every
 * option a source could not apply; and what the local engine corrected in the query. Only
 * sent when the request asks (`explain: true`), except the unapplied options and a
 * correction whose query was searched, which are always reported when there are any.
 */
import type { SourceRank } from "./Fusion.ts"
import type { QueryCorrections } from "./QueryCorrections.ts"
import type { UnreadReport } from "./ResultContent.ts"
import type { ProviderErrorReason, UnappliedOption } from "./SearchProvider.ts"

/** ok: answered; failed: answered with an error or not in time; suspended: skipped while backing off; unsupported: has no such search. */
export type SourceStatus = "ok" | "failed" | "suspended" | "unsupported"

export interface SourceReport {
  readonly name: string
  readonly kind: string
  readonly status: SourceStatus
  /** How long the request waited for this source (from the request start), 0.01 ms resolution; 0 when not called. */
  readonly ms: number
  readonly results: number
  readonly error?: {
    readonly reason: ProviderErrorReason
    readonly message: string
    readonly retryAfterMs?: number
  }
  /** When a suspended source will be tried again (ISO timestamp). */
  readonly suspendedUntil?: string
  /** How the source answered, when it said (the local engine: BM25 alone because the embedding server was down). */
  readonly notes?: ReadonlyArray<string>
}

export interface ResultReport {
  readonly position: number
  readonly score: number
  readonly sources: ReadonlyArray<SourceRank>
}

export interface UnappliedReport extends UnappliedOption {
  readonly source: string
}

/** The provenance of one answer, as computed (cached with the answer). */
export interface Provenance {
  readonly sources: ReadonlyArray<SourceReport>
  readonly results: ReadonlyArray<ResultReport>
  readonly unapplied: ReadonlyArray<UnappliedReport>
  /** The local engine's corrections of the query (Did you mean), when it made or suggests some. */
  readonly corrections?: QueryCorrections
}

/** `cache`: hit (stored or in flight), miss (computed for this request), none (not cached: local engine only). */
export interface ExplainExtra extends Provenance {
  readonly cache: "hit" | "miss" | "none"
  /** The whole answer, fusion included. */
  readonly ms: number
}

/**
 * The envelope's `extra`: full provenance when explained, else the unapplied options and a
 * correction whose query was searched, else null; with `unread` beside them when results asked
 * to carry pages some of which were not read.
 */
export type SearchExtra =
  | (ExplainExtra & { readonly unread?: ReadonlyArray<UnreadReport> })
  | {
    readonly unapplied?: ReadonlyArray<UnappliedReport>
    readonly corrections?: QueryCorrections
    readonly unread?: ReadonlyArray<UnreadReport>
  }
  | null
