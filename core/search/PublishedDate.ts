/**
 * Provider dates to our ISO form: ISO and written dates through the ingest parser,
 * relative ones ("3 days ago", "2 hours ago", "yesterday") against the clock of the
 * request, at day precision (a relative age says nothing finer we can trust).
 */
import { toIsoDate } from "../index/IsoDate.ts"

const DAY_MS = 86_400_000
const UNIT_MS: Readonly<Record<string, number>> = {
  second: 1000, sec: 1000, minute: 60_000, min: 60_000, hour: 3_600_000, hr: 3_600_000,
  day: DAY_MS, week: 7 * DAY_MS, month: 30 * DAY_MS, year: 365 * DAY_MS
}
const RELATIVE = /^(\d+|an?|one)\s+(second|sec|minute|min|hour|hr|day|week|month|year)s?\s+ago$/i

/** `YYYY-MM-DD` of an epoch time (UTC). */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** A provider's date (ISO, written or relative) as ISO 8601, or null when unreadable. */
export const publishedDate = (raw: unknown, nowMs: number): string | null => {
  if (typeof raw !== "string") return null
  const text = raw.trim()
  if (text === "") return null
  const lower = text.toLowerCase()
  if (lower === "today" || lower === "just now") return dayOf(nowMs)
  if (lower === "yesterday") return dayOf(nowMs - DAY_MS)
  const m = RELATIVE.exec(text)
  if (m !== null) {
    const count = /^\d+$/.test(m[1]!) ? Number(m[1]) : 1
    return dayOf(nowMs - count * UNIT_MS[m[2]!.toLowerCase()]!)
  }
  // Brave and SearXNG send "2024-01-15T10:00:00" without a zone; the date part is what we can trust.
  const iso = toIsoDate(text)
  if (iso !== null) return iso
  const noZone = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}(\.\d+)?$/.exec(text)
  return noZone === null ? null : toIsoDate(noZone[1]!)
}

/** The first day a freshness window admits, or the range, as `YYYY-MM-DD` bounds. */
export const freshnessBounds = (
  freshness: "day" | "week" | "month" | "year" | { readonly from: string; readonly to: string },
  nowMs: number
): { readonly from: string; readonly to: string } => {
  if (typeof freshness !== "string") return freshness
  const days = freshness === "day" ? 1 : freshness === "week" ? 7 : freshness === "month" ? 31 : 366
  return { from: dayOf(nowMs - days * DAY_MS), to: "9999-12-31" }
}

/** Whether an ISO date falls inside the bounds; null (undated) is `undated`. */
export const withinBounds = (date: string | null, bounds: { readonly from: string; readonly to: string }): boolean | "undated" => {
  if (date === null) return "undated"
  const day = date.slice(0, 10)
  return day >= bounds.from && day <= bounds.to
}
