/**
 * The shape Periscope's documents take in an OpenSearch/Elasticsearch index,
 * shared by the loader (`periscope index --to opensearch://...`) and the search
 * backend: `title` and `body` as English-analyzed text (stemming, stop words),
 * `url` as a keyword (it is the document id too, so a page read again replaces
 * itself), `date` as a date, `lang` a keyword, and the page's `images` as a
 * nested list, so an image's alt text matches its own image and not a
 * neighbour's. BM25 is the index default similarity in both engines.
 */
import type { IndexDocument } from "../../index/Document.ts"

const englishText = { type: "text", analyzer: "english" } as const

/** The body of `PUT /<index>`: one shard by default (a Periscope-sized corpus), the mapping above. */
export const openSearchIndexBody = {
  settings: { index: { number_of_shards: 1 } },
  mappings: {
    dynamic: "strict",
    properties: {
      url: { type: "keyword" },
      title: englishText,
      body: englishText,
      // ISO 8601 as the ingestion stores it: a day, or a timestamp with or without zone.
      date: { type: "date", format: "strict_date_optional_time||yyyy-MM-dd" },
      lang: { type: "keyword" },
      images: {
        type: "nested",
        properties: {
          url: { type: "keyword" },
          alt: englishText,
          title: englishText,
          caption: englishText,
          heading: englishText,
          width: { type: "integer" },
          height: { type: "integer" }
        }
      }
    }
  }
} as const

/** One document as stored in the index (`_source`). */
export interface OpenSearchSource {
  readonly url: string
  readonly title: string
  readonly body: string
  readonly date?: string
  readonly lang?: string
  readonly images?: ReadonlyArray<{
    readonly url: string
    readonly alt?: string
    readonly title?: string
    readonly caption?: string
    readonly heading?: string
    readonly width?: number
    readonly height?: number
  }>
}

const text = (value: string | undefined) => (value === undefined || value === "" ? undefined : value)

/** An indexed document as the `_source` of its OpenSearch document; absent fields are left out. */
export const toOpenSearchSource = (document: IndexDocument): OpenSearchSource => {
  const images = (document.images ?? []).map((image) => {
    const out: Record<string, string | number> = { url: image.url }
    for (const key of ["alt", "title", "caption", "heading"] as const) {
      const value = text(image[key])
      if (value !== undefined) out[key] = value
    }
    if (image.width !== undefined) out.width = image.width
    if (image.height !== undefined) out.height = image.height
    return out as NonNullable<OpenSearchSource["images"]>[number]
  })
  return {
    url: document.url,
    title: document.title,
    body: document.text,
    ...(document.date ? { date: document.date } : {}),
    ...(document.lang ? { lang: document.lang } : {}),
    ...(images.length === 0 ? {} : { images })
  }
}
