/**
 * Tavily takes a country by its English name in lower case ("united states"); the search
 * options take ISO 3166-1 alpha-2 codes. The names come from the runtime's own region names
 * (Intl.DisplayNames), spelt the ways Tavily's list spells the few that differ.
 */

/** Tavily's spellings that the runtime's English names do not give. */
const ALIASES: Readonly<Record<string, string>> = {
  "czech republic": "CZ",
  "turkey": "TR",
  "ivory coast": "CI",
  "cote d'ivoire": "CI",
  "hong kong": "HK",
  "macau": "MO",
  "macao": "MO",
  "myanmar": "MM",
  "burma": "MM",
  "palestine": "PS",
  "congo": "CG",
  "republic of the congo": "CG",
  "democratic republic of the congo": "CD",
  "swaziland": "SZ",
  "cape verde": "CV",
  "east timor": "TL",
  "vatican city": "VA",
  "north korea": "KP",
  "south korea": "KR",
  "russia": "RU",
  "usa": "US",
  "uk": "GB"
}

/** Lower case, "&" as "and", "St." as "saint", accents and a parenthesised or "SAR China" tail dropped. */
const normalise = (name: string): string =>
  name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/\s*\(.*\)\s*$/, "")
    .replace(/\s+sar china$/, "")
    .replace(/&/g, "and")
    .replace(/\bst\.\s*/g, "saint ")
    .replace(/[’`]/g, "'")
    .replace(/\s+/g, " ")
    .trim()

/** Codes the runtime names that are not countries (unions, pseudo-regions). */
const NOT_COUNTRIES = new Set(["EU", "EZ", "UN", "QO", "XA", "XB", "ZZ"])

let byName: Map<string, string> | undefined
let codes: Set<string> | undefined

/** English name to code, built once on first use from the runtime's region names. */
const names = (): Map<string, string> => {
  if (byName !== undefined) return byName
  const map = new Map<string, string>()
  const display = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" })
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
  for (const a of letters) {
    for (const b of letters) {
      const code = a + b
      const name = display.of(code)
      // Retired codes (DD, UK, YU) canonicalise to another: only current codes are names' codes.
      const current = Intl.getCanonicalLocales(`und-${code}`)[0] === `und-${code}`
      if (name !== undefined && name !== code && current && !NOT_COUNTRIES.has(code)) map.set(normalise(name), code)
    }
  }
  for (const [alias, code] of Object.entries(ALIASES)) map.set(alias, code)
  byName = map
  codes = new Set(map.values())
  return map
}

/** The alpha-2 code of a country given by name or by code, or undefined when it names none. */
export const countryCodeOf = (country: string): string | undefined => {
  const trimmed = country.trim()
  if (/^[A-Za-z]{2}$/.test(trimmed)) {
    const code = trimmed.toUpperCase()
    const alias = names().get(trimmed.toLowerCase())
    return alias ?? (codes!.has(code) ? code : undefined)
  }
  return names().get(normalise(trimmed))
}
