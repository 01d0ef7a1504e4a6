/**
 * The engine's answer to a web search: the query as typed, or corrected when a word of it is on
 * no page and its correction has clearly more hits (core/index/Spelling.ts); ranked as it is, or
 * expanded by the words its best pages share when the search asks (`expand`,
 * core/index/Expansion.ts); with what was corrected, or could be, beside the results.
 */
import { type ExpansionSettings, searchExpanded } from "../index/Expansion.ts"
import { SearchIndex } from "../index/SearchIndex.ts"
import { SegmentedIndex, type ServingIndex } from "../index/SegmentedIndex.ts"
import { spellQuery } from "../index/Spelling.ts"
import type { CorrectedWebData } from "../search/QueryCorrections.ts"
import type { SearchQuery } from "../search/SearchQuery.ts"
import { toWebSearchData } from "../search/SearchResult.ts"

/**
 * Pages added since the snapshot (a SegmentedIndex) are searched as the query is typed: expansion
 * ranks one index's own terms, so it applies to a snapshot alone.
 */
export const engineWebAnswer = (index: ServingIndex, query: SearchQuery, expansion: ExpansionSettings): CorrectedWebData => {
  const spelling = index instanceof SearchIndex || index instanceof SegmentedIndex ? spellQuery(index, query.keywords) : undefined
  const keywords = spelling?.searched === true ? spelling.query : query.keywords
  const answer = query.expand === true && index instanceof SearchIndex
    ? searchExpanded(index, keywords, query.num, expansion, { language: query.language })
    : index.search(keywords, query.num, { language: query.language })
  const data = toWebSearchData(answer.query, answer.hits)
  return spelling === undefined ? data : { ...data, corrections: { query: spelling.query, searched: spelling.searched, words: spelling.words } }
}
