import { Context, type Effect } from "effect"
import type { SearchBackendError } from "./SearchError.ts"
import type { SearchQuery } from "./SearchQuery.ts"
import type { ImageResult } from "./SearchResult.ts"

/** Image search: keywords in, images (url, refUrl, title) out. */
export class ImageSearch extends Context.Service<ImageSearch, {
  search(query: SearchQuery): Effect.Effect<ReadonlyArray<ImageResult>, SearchBackendError>
}>()("periscope/search/ImageSearch") {}
