/**
 * The `format` checks of @cfworker/json-schema, bounded. Its `url` regex
 * backtracks exponentially on a long host name (`http://aaaa…!`), so it is
 * rewritten without lookaheads and run on RE2, accepting the same strings.
 * `regex` compiles the model's string on RE2 (as patterns are), within the
 * length and size (PatternSize) whose compile stays cheap. Formats with a longest possible value
 * (a date, an address, a UUID) refuse a longer string before their regex
 * runs; the rest are linear already. The library reads its exported
 * `format` table at validation time, which is how these take its place.
 */
import { format as libraryFormats } from "@cfworker/json-schema"
import { RE2JS } from "re2js"
import { MAX_PATTERN_SIZE, patternSize } from "./PatternSize.ts"
import { findInSchema } from "./SchemaWalk.ts"

/** Characters of a `format: "regex"` string that are compiled; longer ones do not match the format. */
export const MAX_REGEX_FORMAT_CHARS = 1000

// JavaScript's \s, which RE2's \s (ASCII only) is not.
const JS_SPACE = "\\t\\n\\x{0b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}"
const NOT_SPACE = `[^${JS_SPACE}]`

// A middle octet as the library writes it (1?\d{1,2}|2[0-4]\d|25[0-5]), and its last and first octets.
const OCTET = "(?:\\d|\\d\\d|1\\d\\d|2[0-4]\\d|25[0-5])"
const LAST = "(?:[1-9]\\d?|1\\d\\d|2[0-4]\\d|25[0-4])"
/**
 * The library's public IPv4 host: its negative lookaheads (no 10/8, 127/8,
 * 169.254/16, 192.168/16, 172.16/12) written as the first octets that
 * remain, and the second octets that remain after 169, 172 and 192.
 */
const PUBLIC_IPV4 = [
  `(?:[1-9]|1[1-9]|[2-9]\\d|1[01]\\d|12[0-689]|1[3-5]\\d|16[0-8]|17[013-9]|18\\d|19[013-9]|2[01]\\d|22[0-3])\\.${OCTET}\\.${OCTET}`,
  `169\\.(?:\\d|\\d\\d|1\\d\\d|2[0-4]\\d|25[0-35])\\.${OCTET}`,
  `172\\.(?:\\d|0\\d|1[0-5]|3[2-9]|[4-9]\\d|1\\d\\d|2[0-4]\\d|25[0-5])\\.${OCTET}`,
  `192\\.(?:\\d|\\d\\d|1[0-57-9]\\d|16[0-79]|2[0-4]\\d|25[0-5])\\.${OCTET}`
].map((head) => `${head}\\.${LAST}`).join("|")
const LABEL_CHAR = "[a-z\\x{a1}-\\x{ffff}0-9]"
const HOST_NAME = `(?:${LABEL_CHAR}+-?)*${LABEL_CHAR}+(?:\\.(?:${LABEL_CHAR}+-?)*${LABEL_CHAR}+)*\\.[a-z\\x{a1}-\\x{ffff}]{2,}`
const URL_RE2 = RE2JS.compile(
  `^(?:https?|ftp)://(?:${NOT_SPACE}+(?::${NOT_SPACE}*)?@)?(?:${PUBLIC_IPV4}|${HOST_NAME})(?::\\d{2,5})?(?:/${NOT_SPACE}*)?$`,
  RE2JS.CASE_INSENSITIVE
)

const Z_ANCHOR = /[^\\]\\Z/

/** Whether a string compiles as a linear-time regular expression; not cached, the string is the model's. */
const isLinearRegex = (text: string): boolean => {
  if (text.length > MAX_REGEX_FORMAT_CHARS || Z_ANCHOR.test(text) || patternSize(text) > MAX_PATTERN_SIZE) return false
  try {
    RE2JS.compile(RE2JS.translateRegExp(text))
    return true
  } catch {
    return false
  }
}

/** Refuses strings longer than any value of the format before its check runs. */
const capped = (check: (text: string) => boolean, longest: number) => (text: string) => text.length <= longest && check(text)

type FormatCheck = (text: string) => boolean

const library = libraryFormats as Record<string, FormatCheck>

/** The checks that take the library's place. */
const overrides: Readonly<Record<string, FormatCheck>> = {
  url: (text) => URL_RE2.test(text),
  regex: isLinearRegex,
  date: capped(library.date!, 10),
  ipv4: capped(library.ipv4!, 15),
  ipv6: capped(library.ipv6!, 45),
  uuid: capped(library.uuid!, 36),
  hostname: capped(library.hostname!, 253),
  // A local part of at most 64 characters (quotes included), @, a host of at most 253.
  email: capped(library.email!, 64 + 1 + 253)
}

/** The library's own checks of the formats replaced, put back after each validation. */
const originals: Readonly<Record<string, FormatCheck>> = Object.fromEntries(Object.keys(overrides).map((name) => [name, library[name]!]))

/** Every format as a validation sees it: the library's, with the bounded ones in their place. */
export const boundedFormats: Readonly<Record<string, FormatCheck>> = { ...library, ...overrides }

/** The replaced formats a schema names (where the library looks for schemas), so that a validation swaps only those. */
export const boundedFormatsOf = (schema: unknown): ReadonlyArray<string> => {
  const names = new Set<string>()
  findInSchema(schema, (node) => {
    if (typeof node.format === "string" && Object.hasOwn(overrides, node.format)) names.add(node.format)
    return undefined
  })
  return [...names]
}

/** Runs `run` with the bounded checks of `names` in the library's table; validation is synchronous, so nothing else sees them. */
export const withBoundedFormats = <A>(names: ReadonlyArray<string>, run: () => A): A => {
  if (names.length === 0) return run()
  for (const name of names) library[name] = overrides[name]!
  try {
    return run()
  } finally {
    for (const name of names) library[name] = originals[name]!
  }
}
