/**
 * What became of a fetched page asked to go into the local index (webFetch's addToIndex): added,
 * or why not. The page was fetched either way; the answer's `extra.index` says this.
 */

export type PageIndexingRefusal =
  /** The key added as many pages this minute as it may. */
  | "rate_limited"
  /** The pages added since the snapshot reached their bound (pages or bytes). */
  | "full"
  /** The page alone is larger than the added pages may be together. */
  | "too_large"
  /** The page has no text to index. */
  | "empty"
  /** The search backend has no local index to add to. */
  | "no_index"

export type PageIndexing =
  | { readonly added: true }
  | { readonly added: false; readonly reason: PageIndexingRefusal; readonly message: string }
