/**
 * The language a page declares, as a BCP 47 tag: `<html lang>` (or `xml:lang`),
 * then the Content-Language meta header, then `og:locale`, then JSON-LD
 * `inLanguage`. Undeclared pages get undefined rather than a guess.
 */
import { normalizeLanguageTag } from "../index/LanguageTag.ts"
import { type JsonLdObject, jsonLdString } from "./JsonLd.ts"
import type { PageMeta } from "./PageMeta.ts"

export const pageLanguage = (
  document: Document,
  meta: PageMeta,
  jsonLd: ReadonlyArray<JsonLdObject>
): string | undefined => {
  const root = document.documentElement
  const declared = [
    root?.getAttribute("lang"),
    root?.getAttribute("xml:lang"),
    meta.get("http-equiv:content-language"),
    meta.get("og:locale"),
    ...jsonLd.map((object) => jsonLdString(object, "inLanguage"))
  ]
  for (const value of declared) {
    const tag = normalizeLanguageTag(value)
    if (tag !== undefined) return tag
  }
  return undefined
}
