/**
 * The indexer's two jobs on the job threads (adapters/node/extractPool.ts): a page in, its
 * item out (core/ingest/RawPage.ts), and a page's field texts in, their tokens out
 * (core/index/analysis/AnalyzedText.ts), whose buffers move back instead of being copied.
 * A thread imports only this module's few dependencies, so it is ready in a fraction of a second.
 */
import type { AnalyzedFields } from "../../core/index/analysis/AnalyzedText.ts"
import { defineJob } from "../../core/jobs/Job.ts"
import { extractRawPage, type RawPage } from "../../core/ingest/RawPage.ts"
import type { SourceItem } from "../../core/ingest/SourceItem.ts"
import { analyzeTexts } from "./analyzeTexts.ts"

export const extractJob = defineJob<{ readonly origin: string; readonly page: RawPage }, SourceItem>(
  import.meta.url,
  "extract",
  ({ origin, page }) => extractRawPage(origin, page)
)

export const analyzeJob = defineJob<{ readonly texts: ReadonlyArray<string>; readonly stemming: boolean }, AnalyzedFields>(
  import.meta.url,
  "analyze",
  ({ texts, stemming }) => analyzeTexts(texts, stemming),
  { transfer: (analyzed) => analyzed.map((text) => text.tokens.buffer as ArrayBuffer) }
)
