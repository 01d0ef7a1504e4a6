/**
 * POST /tavily/extract: every URL read at once through WebFetch (the guarded fetcher, its
 * extractor and its cache; the live page, not the local index's copy), under one deadline
 * (`timeout`, default 30 s). A URL that cannot be read (refused by the address policy, an
 * error status, too slow) goes to failed_results with the reason; it never fails the others.
 * With `query` a page's raw_content is its passages most relevant to it (chunks_per_source,
 * default 3). Images are the ones the page's main content shows, with include_images.
 * extract_depth advanced reads a page the same way as basic: there is no browser rendering.
 * Each URL counts as one request against the key's limit (charged by TavilyEndpoint).
 */
import { Effect } from "effect"
import { highlightQuery } from "../../search/Highlights.ts"
import { chunksOf } from "./Chunks.ts"
import { imagesOf, plainText } from "../../search/MarkdownText.ts"
import { isRead, type PageReader } from "./TavilyPages.ts"
import type { TavilyExtractRequest, TavilyExtractResponse } from "./TavilyWire.ts"

const DEFAULT_TIMEOUT_MS = 30_000
const DEFAULT_CHUNKS = 3

export const makeTavilyExtract = (pages: PageReader) => (request: TavilyExtractRequest): Effect.Effect<TavilyExtractResponse> => {
  const started = performance.now()
  const urls = typeof request.urls === "string" ? [request.urls] : request.urls
  const format = request.format ?? "markdown"
  const images = request.include_images === true
  // Images come from the Markdown of the page: a text answer is that Markdown made plain.
  const readAs = images ? "markdown" : format
  const deadlineMs = request.timeout == null ? DEFAULT_TIMEOUT_MS : request.timeout * 1000
  const favicon = request.include_favicon === true
  const query = request.query == null ? undefined : highlightQuery(request.query)
  return Effect.map(pages.readAll(urls, readAs, deadlineMs, false), (outcomes) => {
    const results: Array<TavilyExtractResponse["results"][number]> = []
    const failed: Array<TavilyExtractResponse["failed_results"][number]> = []
    outcomes.forEach((outcome, i) => {
      const url = urls[i]!
      if (!isRead(outcome)) {
        failed.push({ url, error: outcome.error })
        return
      }
      const text = readAs === format ? outcome.content : plainText(outcome.content)
      const content = query === undefined ? text : chunksOf(format === "markdown" ? plainText(text) : text, query, request.chunks_per_source ?? DEFAULT_CHUNKS)
      results.push({
        url,
        title: outcome.title,
        raw_content: content,
        images: images ? imagesOf(outcome.content) : [],
        ...(favicon ? { favicon: null } : {})
      })
    })
    return {
      results,
      failed_results: failed,
      response_time: Math.round(performance.now() - started) / 1000,
      request_id: crypto.randomUUID(),
      ...(request.include_usage === true ? { usage: { credits: urls.length } } : {})
    }
  })
}
