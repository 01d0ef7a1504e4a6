/**
 * A search backend over documents handed over in memory, matched by plain
 * term overlap. For testing agents offline and for demos: results are
 * predictable from the documents, not ranked like the real engine. A search
 * with `language` keeps to the documents in it: declared, else detected from
 * their text, as the engine decides a page's language.
 */
import { Effect, Layer } from "effect"
import type { IndexDocument } from "../index/Document.ts"
import { primaryLanguage } from "../index/LanguageTag.ts"
import { decidePageLanguage } from "../index/PageLanguages.ts"
import { pageLanguageSample } from "../index/analysis/LanguageDetection.ts"
import { normalizeUrl } from "../index/UrlNormalizer.ts"
import { ImageSearch } from "../search/ImageSearch.ts"
import { type StoredPage, StoredPages } from "../search/StoredPages.ts"
import type { SearchQuery } from "../search/SearchQuery.ts"
import { type ImageResult, toWebSearchData, type WebHit } from "../search/SearchResult.ts"
import { WebSearch } from "../search/WebSearch.ts"

const SNIPPET_LENGTH = 200

/** Lower-cased letter/digit runs: enough to match keywords against text. */
export const overlapTerms = (text: string): Array<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

interface Prepared {
  readonly doc: IndexDocument
  /** Declared, else detected; "" when neither tells. */
  readonly language: string
  readonly titleTerms: ReadonlySet<string>
  readonly textTerms: ReadonlySet<string>
}

/** Title matches count double; ties keep the order the documents were given in. */
const score = (doc: Prepared, terms: ReadonlyArray<string>): number => {
  let s = 0
  for (const t of terms) s += (doc.titleTerms.has(t) ? 2 : 0) + (doc.textTerms.has(t) ? 1 : 0)
  return s
}

/** About SNIPPET_LENGTH characters around the first query term in the text, cut at spaces. */
const snippetOf = (text: string, terms: ReadonlyArray<string>): string => {
  const lower = text.toLowerCase()
  let at = -1
  for (const t of terms) {
    const i = lower.indexOf(t)
    if (i !== -1 && (at === -1 || i < at)) at = i
  }
  let start = Math.max(0, at - 60)
  if (start > 0) start = text.indexOf(" ", start) + 1
  let end = Math.min(text.length, start + SNIPPET_LENGTH)
  if (end < text.length) {
    const space = text.lastIndexOf(" ", end)
    if (space > start) end = space
  }
  return text.slice(start, end).replace(/\s+/g, " ").trim()
}

const makeFixtureSearch = (documents: ReadonlyArray<IndexDocument>) => {
  const prepared: Array<Prepared> = documents.map((doc) => ({
    doc,
    language: decidePageLanguage(doc.lang ?? "", () => pageLanguageSample(doc.title, doc.text)).language,
    titleTerms: new Set(overlapTerms(doc.title)),
    textTerms: new Set(overlapTerms(doc.text))
  }))

  const ranked = (keywords: string, language?: string) => {
    const terms = [...new Set(overlapTerms(keywords))]
    const wanted = language === undefined ? undefined : primaryLanguage(language) ?? "?"
    const scored: Array<{ p: Prepared; s: number; i: number }> = []
    prepared.forEach((p, i) => {
      if (wanted !== undefined && p.language !== wanted) return
      const s = score(p, terms)
      if (s > 0) scored.push({ p, s, i })
    })
    scored.sort((a, b) => b.s - a.s || a.i - b.i)
    return { terms, scored }
  }

  const web = (query: SearchQuery) => {
    const { terms, scored } = ranked(query.keywords, query.language)
    const hits: Array<WebHit> = scored.slice(0, query.num).map(({ p }) => ({
      title: p.doc.title,
      link: p.doc.url,
      snippet: snippetOf(p.doc.text, terms),
      date: p.doc.date ?? null
    }))
    return toWebSearchData(query.keywords, hits)
  }

  const images = (query: SearchQuery): Array<ImageResult> => {
    const terms = new Set(overlapTerms(query.keywords))
    const wanted = query.language === undefined ? undefined : primaryLanguage(query.language) ?? "?"
    const out: Array<ImageResult> = []
    for (const { doc, language } of prepared) {
      if (wanted !== undefined && language !== wanted) continue
      for (const image of doc.images ?? []) {
        const words = overlapTerms([image.alt, image.title, image.caption, image.heading, doc.title].join(" "))
        if (words.some((w) => terms.has(w))) {
          out.push({ url: image.url, refUrl: doc.url, title: image.title ?? image.alt ?? image.caption ?? "" })
          if (out.length === query.num) return out
        }
      }
    }
    return out
  }

  const byKey = new Map(documents.map((doc) => [normalizeUrl(doc.url)?.key ?? doc.url, doc]))
  const page = (url: string, maxChars: number): StoredPage | undefined => {
    const doc = byKey.get(normalizeUrl(url)?.key ?? url)
    return doc === undefined ? undefined : { url: doc.url, title: doc.title, text: doc.text.slice(0, Math.max(0, maxChars)), date: doc.date ?? null }
  }

  return { web, images, page }
}

export const FixtureSearch = {
  /** The plain functions behind the services (the HTTP bench's bare server calls them directly). */
  make: makeFixtureSearch,
  /** WebSearch, ImageSearch and StoredPages answered from the given documents. */
  layer: (documents: ReadonlyArray<IndexDocument>): Layer.Layer<WebSearch | ImageSearch | StoredPages> => {
    const fixture = FixtureSearch.make(documents)
    return Layer.mergeAll(
      Layer.succeed(WebSearch, WebSearch.of({ search: (q) => Effect.sync(() => fixture.web(q)) })),
      Layer.succeed(ImageSearch, ImageSearch.of({ search: (q) => Effect.sync(() => fixture.images(q)) })),
      Layer.succeed(StoredPages, StoredPages.of({ page: (url, maxChars) => Effect.sync(() => fixture.page(url, maxChars)) }))
    )
  }
} as const
