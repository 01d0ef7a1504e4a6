/**
 * The query language, as people type it into a search box:
 *
 *   words             ranked with BM25 (any of them may match; more matches rank higher)
 *   "a phrase"        the words must appear in this order (stop-word gaps included)
 *   -word, -"phrase"  pages containing it are left out
 *   site:host[/path]  only pages on that host or its subdomains (and under that path);
 *                     several site: filters widen the search; -site: leaves a site out
 *
 * Parsing never fails: an unclosed quote runs to the end, a lone "-" is ignored.
 */

export interface SiteFilter {
  /** Lower-cased host, matched with all its subdomains. */
  readonly host: string
  /** Path prefix ("/3/library") or "" for the whole host. */
  readonly path: string
}

export interface ParsedQuery {
  /** Free words, space-joined, for the analyzer. */
  readonly words: string
  readonly phrases: ReadonlyArray<string>
  /** Excluded words and phrases (one or more words each). */
  readonly excluded: ReadonlyArray<string>
  readonly sites: ReadonlyArray<SiteFilter>
  readonly excludedSites: ReadonlyArray<SiteFilter>
}

/** Queries are cut here; the wire allows 1,000 characters. */
export const maxQueryLength = 2000

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v" || c === "\u3000"

export const parseSite = (value: string): SiteFilter | undefined => {
  const bare = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")
  const slash = bare.indexOf("/")
  const host = (slash < 0 ? bare : bare.slice(0, slash)).toLowerCase().replace(/\.+$/, "").replace(/:\d+$/, "")
  if (host.length === 0 || !/^[\p{L}\p{N}.-]+$/u.test(host)) return undefined
  const path = slash < 0 ? "" : bare.slice(slash).replace(/\/+$/, "")
  return { host, path }
}

export const parseQuery = (input: string): ParsedQuery => {
  const s = input.length > maxQueryLength ? input.slice(0, maxQueryLength) : input
  const words: Array<string> = []
  const phrases: Array<string> = []
  const excluded: Array<string> = []
  const sites: Array<SiteFilter> = []
  const excludedSites: Array<SiteFilter> = []
  const n = s.length
  let i = 0
  while (i < n) {
    while (i < n && isSpace(s[i]!)) i++
    if (i >= n) break
    let negative = false
    if (s[i] === "-" && i + 1 < n && !isSpace(s[i + 1]!) && s[i + 1] !== "-") {
      negative = true
      i++
    }
    if (s[i] === "\"") {
      let j = s.indexOf("\"", i + 1)
      if (j < 0) j = n
      const phrase = s.slice(i + 1, j).trim()
      i = j + 1
      if (phrase.length > 0) (negative ? excluded : phrases).push(phrase)
      continue
    }
    let j = i
    while (j < n && !isSpace(s[j]!) && s[j] !== "\"") j++
    const word = s.slice(i, j)
    i = j
    if (word.length > 5 && word.slice(0, 5).toLowerCase() === "site:") {
      const site = parseSite(word.slice(5))
      if (site !== undefined) {
        ;(negative ? excludedSites : sites).push(site)
        continue
      }
    }
    if (word.length > 0) (negative ? excluded : words).push(word)
  }
  return { words: words.join(" "), phrases, excluded, sites, excludedSites }
}
