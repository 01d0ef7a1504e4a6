/**
 * The date a page was published, from the most to the least explicit source:
 * `article:published_time`, JSON-LD `datePublished`, a `<time datetime>` marked as
 * the publish date (or the first one in the page's single article), meta date tags, and
 * finally a date written in the URL. Modification dates, HTTP `Date` headers and
 * "last updated" footers are never used: they are build or crawl stamps.
 */
import { dateFromUrl, toIsoDate } from "../index/IsoDate.ts"
import { type JsonLdObject, jsonLdString } from "./JsonLd.ts"
import type { PageMeta } from "./PageMeta.ts"

const OPEN_GRAPH_KEYS = ["article:published_time", "og:article:published_time", "og:published_time"]

// Dublin Core, Highwire (citation_*), news CMS and microdata names for "published on".
const META_DATE_KEYS = [
  "datepublished", "date", "dc.date.issued", "dc.date", "dc.date.created", "dcterms.issued", "dcterms.created",
  "dcterms.date", "citation_publication_date", "citation_date", "citation_online_date", "pubdate", "publishdate",
  "publish-date", "publish_date", "publication_date", "sailthru.date", "parsely-pub-date", "article.published",
  "originalpublicationdate", "og:pubdate"
]

// The first key whose value reads as a date: an unreadable tag must not hide a later good one.
const fromMeta = (meta: PageMeta, keys: ReadonlyArray<string>): string | null => {
  for (const key of keys) {
    const date = toIsoDate(meta.get(key))
    if (date !== null) return date
  }
  return null
}

const fromJsonLd = (objects: ReadonlyArray<JsonLdObject>): string | null => {
  for (const object of objects) {
    const date = toIsoDate(jsonLdString(object, "datePublished"))
    if (date !== null) return date
  }
  return null
}

const timeValue = (element: Element): string | null =>
  toIsoDate(element.getAttribute("datetime") ?? element.getAttribute("content") ?? element.textContent)

// A <time> in comments, footers or sidebars dates something else (a reply, a copyright line).
const OUTSIDE_ARTICLE = "footer, aside, nav, [class*=comment], [id*=comment]"

const fromTimeElement = (document: Document): string | null => {
  for (const element of document.querySelectorAll("time[pubdate], [itemprop=datePublished]")) {
    const date = timeValue(element)
    if (date !== null) return date
  }
  // Only inside the one article of the page: a site header may show today's date, and a
  // listing of several articles has no single date.
  const articles = document.querySelectorAll("article")
  if (articles.length !== 1) return null
  for (const element of articles[0]!.querySelectorAll("time[datetime]")) {
    if (element.closest(OUTSIDE_ARTICLE) !== null) continue
    const date = timeValue(element)
    if (date !== null) return date
  }
  return null
}

export const publishDate = (
  document: Document,
  meta: PageMeta,
  jsonLd: ReadonlyArray<JsonLdObject>,
  urls: ReadonlyArray<string>
): string | null =>
  fromMeta(meta, OPEN_GRAPH_KEYS) ??
    fromJsonLd(jsonLd) ??
    fromTimeElement(document) ??
    fromMeta(meta, META_DATE_KEYS) ??
    urls.reduce<string | null>((found, url) => found ?? dateFromUrl(url), null)
