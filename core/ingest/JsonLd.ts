/**
 * The schema.org objects of a page's `<script type="application/ld+json">` blocks,
 * flattened (arrays and `@graph` unwrapped). Broken JSON in one block is skipped:
 * pages ship hand-edited JSON-LD with trailing commas and stray control characters.
 */
// The Predicate module alone: the whole effect barrel is slow to load, and every extraction worker loads this.
import * as Predicate from "effect/Predicate"

export type JsonLdObject = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is JsonLdObject => Predicate.isObject(value)

const flatten = (value: unknown, out: Array<JsonLdObject>, depth: number): void => {
  if (depth > 4) return
  if (Array.isArray(value)) {
    for (const item of value) flatten(item, out, depth + 1)
  } else if (isObject(value)) {
    out.push(value)
    if (value["@graph"] !== undefined) flatten(value["@graph"], out, depth + 1)
  }
}

export const jsonLdObjects = (document: Document): ReadonlyArray<JsonLdObject> => {
  const out: Array<JsonLdObject> = []
  for (const script of document.querySelectorAll("script[type]")) {
    if (!/^application\/ld\+json\b/i.test(script.getAttribute("type") ?? "")) continue
    const source = (script.textContent ?? "").trim()
    if (source.length === 0 || source.length > 1_000_000) continue
    try {
      flatten(JSON.parse(source), out, 0)
    } catch {
      // Unreadable block: other blocks and other date sources still count.
    }
  }
  return out
}

/** A string property of a JSON-LD object (first element when it is a list). */
export const jsonLdString = (object: JsonLdObject, key: string): string | undefined => {
  const value = object[key]
  const first = Array.isArray(value) ? value[0] : value
  if (typeof first === "string") return first
  if (isObject(first) && typeof first["@value"] === "string") return first["@value"]
  return undefined
}
