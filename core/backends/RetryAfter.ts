/**
 * How long an upstream asked us to wait before the next request: one reading for the search
 * providers and the chat upstreams. A header that fits no rule is no answer, never a guess
 * (a lenient date parser would read "soon 5" as a year).
 */
import { Duration, Result } from "effect"
import { Headers } from "effect/http"

type HeaderRecord = Readonly<Record<string, string | undefined>>

/**
 * The wait in milliseconds: `retry-after-ms` (OpenAI and Azure OpenAI send it, in milliseconds),
 * else `Retry-After` as RFC 9110 (10.2.3) defines it, whole delay-seconds or an HTTP-date in any
 * of its three formats (read as UTC; a date past is 0). Undefined when absent or unreadable.
 */
export const retryAfterMs = (headers: HeaderRecord, nowMs: number): number | undefined => {
  const ms = headers["retry-after-ms"]?.trim()
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Number(ms)
  const value = headers["retry-after"]
  if (value === undefined) return undefined
  const parsed = Headers.parseRetryAfter(value)
  return Result.isSuccess(parsed) ? Duration.toMillis(Headers.retryAfterDelay(parsed.success, nowMs)) : undefined
}

/**
 * The reset of an exhausted rate-limit window in milliseconds, for a 429 without Retry-After:
 * `X-RateLimit-Reset` in seconds from now, as Brave documents it, a comma list with one value
 * per window ("1, 1419704") beside `X-RateLimit-Remaining`. The window that ran out decides;
 * without remaining counts, the shortest reset. Search providers only: a chat upstream's wait
 * reaches our caller's Retry-After, and other gateways send an epoch in the same header.
 */
export const rateLimitResetMs = (headers: HeaderRecord): number | undefined => {
  const reset = headers["x-ratelimit-reset"]
  if (reset === undefined) return undefined
  const resets = reset.split(",").map((s) => Number(s.trim()))
  const remaining = (headers["x-ratelimit-remaining"] ?? "").split(",").map((s) => Number(s.trim()))
  const paired = remaining.length === resets.length
  let wait: number | undefined
  for (let i = 0; i < resets.length; i++) {
    const r = resets[i]!
    if (!Number.isFinite(r) || r < 0) continue
    if (paired && remaining[i] !== 0) continue
    wait = wait === undefined ? r : paired ? Math.max(wait, r) : Math.min(wait, r)
  }
  return wait === undefined ? undefined : wait * 1000
}
