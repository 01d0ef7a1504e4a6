import { Context, type Effect } from "effect"
import type { SearchBackendError } from "./SearchError.ts"
import type { SearchQuery } from "./SearchQuery.ts"
import type { WebSearchData } from "./SearchResult.ts"

/** Web search: keywords in, ranked pages out. Backends are Layers that provide it. */
export class WebSearch extends Context.Service<WebSearch, {
  search(query: SearchQuery): Effect.Effect<WebSearchData, SearchBackendError>
}>()("periscope/search/WebSearch") {}
