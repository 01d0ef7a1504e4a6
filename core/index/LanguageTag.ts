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
