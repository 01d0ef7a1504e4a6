/**
 * Documents the fixture backend serves when none are configured: pages about
 * Periscope itself (our own words), so a fresh `npm start` answers searches.
 */
import type { IndexDocument } from "../index/Document.ts"

export const sampleDocuments: ReadonlyArray<IndexDocument> = [
  {
    url: "https://periscope.invalid/docs/web-search",
    title: "Web search - Periscope",
    text: "POST /api/search/webSearch takes keywords and num (1 to 100, default 10) and answers ranked pages with title, link, a query-dependent snippet, position and date.",
    date: null,
    images: [{ url: "https://periscope.invalid/img/web-search.png", alt: "Web search request and response" }]
  },
  {
    url: "https://periscope.invalid/docs/image-search",
    title: "Image search - Periscope",
    text: "POST /api/search/imageSearch takes the same body as web search and answers images with url, refUrl (the page the image comes from) and title, which may be empty.",
    date: null,
    images: [{ url: "https://periscope.invalid/img/image-search.png", alt: "Image results with their source pages" }]
  },
  {
    url: "https://periscope.invalid/docs/chat",
    title: "Chat completions - Periscope",
    text: "POST /v1/chat/completions is OpenAI-compatible: messages, model, sampling controls, n, stop, function tools, response formats and streaming as server-sent events ending with data: [DONE].",
    date: null
  },
  {
    url: "https://periscope.invalid/docs/auth",
    title: "API keys and rate limits - Periscope",
    text: "Every endpoint but /healthz needs Authorization: Bearer <key>. Keys are configured as SHA-256 hashes; each key has a requests-per-minute limit, 1,000 by default, and a 429 answer carries Retry-After.",
    date: null
  }
]
