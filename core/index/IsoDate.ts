/**
 * Normalizes the date notations pages use (ISO 8601, RFC 2822, "April 5, 2023",
 * "5 Apr 2023", "2023/04/05", "20230405") to ISO 8601: `YYYY-MM-DD`, or a full
 * timestamp when the source states a time. Returns null for anything it cannot
 * read with certainty: a wrong guess is worse than no date.
 */

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1, january: 1, feb: 2, february: 2, mar: 3, march: 3, apr: 4, april: 4, may: 5,
  jun: 6, june: 6, jul: 7, july: 7, aug: 8, august: 8, sep: 9, sept: 9, september: 9,
  oct: 10, october: 10, nov: 11, november: 11, dec: 12, december: 12
}

// Pages older than the web or dated far ahead are typos or placeholders ("0000-00-00", "9999-12-31").
const MIN_YEAR = 1900
const MAX_YEAR = 2200

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/** A calendar date as `YYYY-MM-DD`, or null when it does not exist. */
export const calendarDate = (year: number, month: number, day: number): string | null => {
  if (!Number.isInteger(year) || year < MIN_YEAR || year > MAX_YEAR) return null
  if (!Number.isInteger(month) || month < 1 || month > 12) return null
  if (!Number.isInteger(day) || day < 1 || day > daysIn(year, month)) return null
  return `${year}-${pad(month)}-${pad(day)}`
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?$/i
const COMPACT = /^(\d{4})(\d{2})(\d{2})(?:T?(\d{2})(\d{2})(\d{2})?(Z|[+-]\d{4})?)?$/i
const SLASHED = /^(\d{4})[/.](\d{1,2})[/.](\d{1,2})$/
const MONTH_FIRST = /^(?:[a-z]+,?\s+)?([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b/i
const DAY_FIRST = /^(?:[a-z]+,?\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+)\.?,?\s+(\d{4})(?:\s+(\d{2}):(\d{2})(?::(\d{2}))?\s*(GMT|UTC|Z|[+-]\d{4})?)?/i

const zone = (raw: string | undefined): string | null => {
  if (raw === undefined) return ""
  const z = raw.toUpperCase()
  if (z === "Z" || z === "GMT" || z === "UTC") return "Z"
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(z)
  if (m === null || Number(m[2]) > 14 || Number(m[3]) > 59) return null
  return `${m[1]}${m[2]}:${m[3]}`
}

const timestamp = (
  date: string,
  hh: string | undefined,
  mm: string | undefined,
  ss: string | undefined,
  tz: string | undefined
): string | null => {
  if (hh === undefined || mm === undefined) return date
  const h = Number(hh), m = Number(mm), s = ss === undefined ? 0 : Number(ss)
  if (h > 23 || m > 59 || s > 60) return null
  const offset = zone(tz)
  if (offset === null) return null
  return `${date}T${pad(h)}:${pad(m)}:${pad(s)}${offset}`
}

/** Parses a date string into ISO 8601, or null when it is not a date we can trust. */
export const toIsoDate = (raw: string | null | undefined): string | null => {
  if (raw === null || raw === undefined) return null
  const text = raw.trim()
  if (text.length < 6 || text.length > 64) return null

  let m = ISO.exec(text)
  if (m !== null) {
    const date = calendarDate(Number(m[1]), Number(m[2]), Number(m[3]))
    return date === null ? null : timestamp(date, m[4], m[5], m[6], m[7])
  }
  m = COMPACT.exec(text)
  if (m !== null) {
    const date = calendarDate(Number(m[1]), Number(m[2]), Number(m[3]))
    return date === null ? null : timestamp(date, m[4], m[5], m[6], m[7])
  }
  m = SLASHED.exec(text)
  if (m !== null) return calendarDate(Number(m[1]), Number(m[2]), Number(m[3]))
  m = DAY_FIRST.exec(text)
  if (m !== null) {
    const month = MONTHS[m[2]!.toLowerCase()]
    if (month === undefined) return null
    const date = calendarDate(Number(m[3]), month, Number(m[1]))
    return date === null ? null : timestamp(date, m[4], m[5], m[6], m[7])
  }
  m = MONTH_FIRST.exec(text)
  if (m !== null) {
    const month = MONTHS[m[1]!.toLowerCase()]
    if (month === undefined) return null
    return calendarDate(Number(m[3]), month, Number(m[2]))
  }
  return null
}

const URL_DATE = /\/((?:19|20)\d{2})[/-](0[1-9]|1[0-2])[/-](0[1-9]|[12]\d|3[01])(?:[/._-]|$)/
const URL_COMPACT_DATE = /\/((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?:[/._-]|$)/

/** A publish date written into a URL path (`/2023/04/05/slug`, `/2023-04-05-slug`, `/20230405/`). */
export const dateFromUrl = (url: string): string | null => {
  let path: string
  try {
    path = new URL(url).pathname
  } catch {
    return null
  }
  const m = URL_DATE.exec(path) ?? URL_COMPACT_DATE.exec(path)
  return m === null ? null : calendarDate(Number(m[1]), Number(m[2]), Number(m[3]))
}
