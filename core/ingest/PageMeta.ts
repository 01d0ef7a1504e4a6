/**
 * Reads `<meta>` tags once into a map keyed by lower-cased name, property,
 * itemprop (and `http-equiv:` + header name), first occurrence wins (pages repeat tags from plugins).
 */
export type PageMeta = ReadonlyMap<string, string>

export const pageMeta = (document: Document): PageMeta => {
  const meta = new Map<string, string>()
  for (const element of document.querySelectorAll("meta")) {
    const content = element.getAttribute("content")
    if (content === null || content.trim() === "") continue
    for (const attribute of ["property", "name", "itemprop"]) {
      const key = element.getAttribute(attribute)?.trim().toLowerCase()
      if (key && !meta.has(key)) meta.set(key, content.trim())
    }
    // Kept apart: `http-equiv="date"` is the server's response date, not a publish date.
    const header = element.getAttribute("http-equiv")?.trim().toLowerCase()
    if (header && !meta.has(`http-equiv:${header}`)) meta.set(`http-equiv:${header}`, content.trim())
  }
  return meta
}

/** The first of `keys` present in the meta map. */
export const firstMeta = (meta: PageMeta, keys: ReadonlyArray<string>): string | undefined => {
  for (const key of keys) {
    const value = meta.get(key)
    if (value !== undefined) return value
  }
  return undefined
}
