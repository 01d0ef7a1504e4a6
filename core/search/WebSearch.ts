import { Context, type Effect } from "effect"
import type { CorrectedWebData } from "./QueryCorrections.ts"
import type { SearchBackendError } from "./SearchError.ts"
import type { SearchQuery } from "./SearchQuery.ts"
import type { WebSearchData } from "./SearchResult.ts"

/**
 * Web search: keywords in, ranked pages out. Backends are Layers that provide it. A backend that
 * corrects spelling says what it corrected beside the results (`corrections`).
 */
export class WebSearch extends Context.Service<WebSearch, {
  search(query: SearchQuery): Effect.Effect<WebSearchData | CorrectedWebData, SearchBackendError>
}>()("periscope/search/WebSearch") {}
