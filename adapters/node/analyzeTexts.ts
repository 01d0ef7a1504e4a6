/**
 * The build's analysis of one page, as a job thread runs it (extractJobs.ts) and as the pool
 * runs it on the main thread once no thread is left: the page's language decided and its field
 * texts' tokens recorded in that language's analysis, by recorders kept from page to page so
 * that each analyzer's memo of words serves them all.
 */
import { type AnalyzedPage, PageRecorders, type PageToAnalyze } from "../../core/index/PageLanguages.ts"

const recorders = new PageRecorders()

export const analyzeTexts = (page: PageToAnalyze): AnalyzedPage => recorders.analyze(page)
