/** BCP 47 language tags in their usual case: what a page declares and what a JSONL line may carry. */

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

/** Codes one language goes by: Norwegian Bokmål and Nynorsk are searched as Norwegian, as detection names them. */
const sameLanguage: Record<string, string> = { nb: "no", nn: "no" }

/**
 * The language of a tag as the index keeps it: its primary subtag in ISO 639-1 where there is
 * one ("deu", "ger" and "de-AT" give "de"); undefined for no tag, "und" or one that is not a tag.
 */
export const primaryLanguage = (raw: string | null | undefined): string | undefined => {
  if (raw === null || raw === undefined) return undefined
  // A build asks once per page, of a few distinct tags; Intl.Locale is the costly part.
  const known = primaries.get(raw)
  if (known !== undefined) return known === "" ? undefined : known
  const found = primaryOf(raw)
  if (primaries.size < maxRemembered) primaries.set(raw, found ?? "")
  return found
}

const primaries = new Map<string, string>()
const maxRemembered = 4096

const primaryOf = (raw: string): string | undefined => {
  const tag = normalizeLanguageTag(raw)
  if (tag === undefined) return undefined
  let language = tag.split("-")[0]!
  try {
    language = new Intl.Locale(language).language
  } catch {
    // Intl knows every well-formed subtag; a runtime without its data keeps the code as written.
  }
  return sameLanguage[language] ?? language
}
