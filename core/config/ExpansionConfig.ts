/**
 * `search.expansion`: how a search that asks for `expand` is expanded (pseudo-relevance
 * feedback, RM3, core/index/Expansion.ts). Every key is optional; Anserini's RM3 defaults
 * (10 pages, 10 words, the query's own words 0.5 of the weight) otherwise.
 */
import { Schema } from "effect"
import { ruledNumber } from "../schema/Rules.ts"

const optionalKey = Schema.optionalKey

export const ExpansionConfig = Schema.Struct({
  /** The query's best pages the added words come from. */
  documents: optionalKey(ruledNumber("must be an integer from 1 to 100", { integer: true, min: 1, max: 100 })),
  /** Words added to the query. */
  terms: optionalKey(ruledNumber("must be an integer from 1 to 40", { integer: true, min: 1, max: 40 })),
  /** The query's own words' share of the expanded query's weight. */
  originalWeight: optionalKey(ruledNumber("must be a number above 0 and at most 1", { exclusiveMin: 0, max: 1 }))
}).annotate({ message: "must be an object {documents?, terms?, originalWeight?}" })
export type ExpansionConfig = typeof ExpansionConfig.Type
