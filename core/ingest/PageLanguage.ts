/**
 * The language a page declares, as a BCP 47 tag: `<html lang>` (or `xml:lang`),
 * then the Content-Language meta header, then `og:locale`, then JSON-LD
 * `inLanguage`. Undeclared pages get undefined rather than a guess.
 */
import { type JsonLdObject, jsonLdString } from "./JsonLd.ts"
import type { PageMeta } from "./PageMeta.ts"

const TAG = /^([a-z]{2,3})(?:[-_]([a-z]{4}))?(?:[-_]([a-z]{2}|\d{3}))?(?:[-_][a-z\d]{1,8})*$/i

/** `en_us` gives "en-US", `zh-hant-tw` gives "zh-Hant-TW"; anything else gives undefined. */
export const normalizeLanguageTag = (raw: string | null | undefined): string | undefined => {
  if (raw === null || raw === undefined) return undefined
  // Content-Language may list several ("en, fr"): the first is the page's main language.
  const first = raw.split(",")[0]!.trim()
  const m = TAG.exec(first)
  if (m === null) return undefined
  const language = m[1]!.toLowerCase()
  if (language === "und" || language === "mul" || language === "zxx") return undefined
  const script = m[2] === undefined ? "" : `-${m[2][0]!.toUpperCase()}${m[2].slice(1).toLowerCase()}`
  const region = m[3] === undefined ? "" : `-${m[3].toUpperCase()}`
  return `${language}${script}${region}`
}

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
