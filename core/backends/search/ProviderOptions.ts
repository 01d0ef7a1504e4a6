/**
 * The options a provider cannot apply itself, as notes for `extra`: freshness is then
 * filtered our side by publish date; anything else is reported as ignored, never dropped
 * silently.
 */
import { PROVIDER_OPTIONS, type ProviderOption, type SearchQuery } from "../../search/SearchQuery.ts"
import type { UnappliedOption } from "../../search/SearchProvider.ts"

/**
 * Notes for every option the query sets that is not in `applied`; `why` explains each
 * ignored one (e.g. "Tavily has no language parameter").
 */
export const unappliedOptions = (
  query: SearchQuery,
  applied: ReadonlySet<ProviderOption>,
  why: Partial<Record<ProviderOption, string>> = {}
): Array<UnappliedOption> => {
  const out: Array<UnappliedOption> = []
  for (const option of PROVIDER_OPTIONS) {
    if (query[option] === undefined || applied.has(option)) continue
    out.push(option === "freshness"
      ? { option, handling: "filtered", detail: why.freshness ?? "filtered our side by publish date; undated results left out" }
      : { option, handling: "ignored", detail: why[option] ?? "the provider has no such parameter" })
  }
  return out
}

/** `M/D/YYYY` of an ISO day, as Google's tbs ranges want it. */
export const usDate = (isoDay: string): string => {
  const [y, m, d] = isoDay.split("-")
  return `${Number(m)}/${Number(d)}/${y}`
}

/** Strips the highlight tags some providers put in snippets (<strong>) and decodes the common entities. */
export const plainText = (html: string): string =>
  html.includes("<") || html.includes("&")
    ? html.replace(/<[^>]*>/g, "").replace(/&quot;/g, "\"").replace(/&#39;|&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
    : html

/** Images carry no publish date: a freshness the provider could not apply cannot be filtered either. */
export const forImages = (unapplied: ReadonlyArray<UnappliedOption>): Array<UnappliedOption> =>
  unapplied.map((u) =>
    u.option === "freshness" && u.handling === "filtered"
      ? { option: "freshness", handling: "ignored", detail: "images carry no publish date to filter by" }
      : u
  )
