/**
 * Did you mean, as the local engine answers it: the query's misspelt words (words no page
 * holds) with the word one edit away that the most pages hold, the corrected query, and
 * whether the results are the corrected query's (it had clearly more hits) or the query's as
 * typed (the correction is a suggestion).
 */
import type { WebSearchData } from "./SearchResult.ts"

export interface QueryCorrections {
  /** The query with each corrected word in place. */
  readonly query: string
  /** True: the results are the corrected query's; false: the query's as typed, and this is a suggestion. */
  readonly searched: boolean
  readonly words: ReadonlyArray<{ readonly from: string; readonly to: string }>
}

/** A web search answer with the backend's corrections, when it made or suggests some (the federation moves them to `extra`). */
export type CorrectedWebData = WebSearchData & { readonly corrections?: QueryCorrections | undefined }
