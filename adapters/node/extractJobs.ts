/**
 * The indexer's two jobs on the job threads (adapters/node/extractPool.ts): a page in, its
 * item out (core/ingest/RawPage.ts), and a page's field texts in, its language and their tokens
 * out (core/index/PageLanguages.ts), whose buffers move back instead of being copied.
 * A thread imports only this module's few dependencies, so it is ready in a fraction of a second.
 */
import type { AnalyzedPage, PageToAnalyze } from "../../core/index/PageLanguages.ts"
import { defineJob } from "../../core/jobs/Job.ts"
import { extractRawPage, type RawPage } from "../../core/ingest/RawPage.ts"
import type { SourceItem } from "../../core/ingest/SourceItem.ts"
import { analyzeTexts } from "./analyzeTexts.ts"

export const extractJob = defineJob<{ readonly origin: string; readonly page: RawPage }, SourceItem>(
  import.meta.url,
  "extract",
  ({ origin, page }) => extractRawPage(origin, page)
)

export const analyzeJob = defineJob<PageToAnalyze, AnalyzedPage>(
  import.meta.url,
  "analyze",
  analyzeTexts,
  { transfer: (analyzed) => analyzed.fields.map((text) => text.tokens.buffer as ArrayBuffer) }
)
