/**
 * When to try an upstream again: only errors `isRetryable` accepts (before
 * the first byte: connection failures, timeouts, 429, 5xx), with exponential
 * backoff and jitter, and a Retry-After the upstream sent honoured when it is
 * sane. A wait that is absurd or longer than the time left is not waited:
 * the error goes back at once, Retry-After included, for the router to fall
 * back or the client to wait.
 */
import { isRetryable, type UpstreamError } from "../../chat/Upstream.ts"

/** Retry-After values beyond this are not waited for here. */
export const MAX_RETRY_AFTER_MS = 60_000
/** Backoff stops growing here. */
export const MAX_BACKOFF_MS = 30_000

/**
 * Retry-After in milliseconds: `retry-after-ms` (OpenAI, Azure) or
 * `retry-after` as seconds or an HTTP date. Undefined when absent or unreadable.
 */
export const retryAfterMs = (headers: Readonly<Record<string, string | undefined>>, nowMs: number): number | undefined => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Number(ms)
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value === "") return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/** base·2^attempt capped, the upper half random so that many clients do not retry in step. */
export const backoffMs = (attempt: number, baseDelayMs: number, random: number): number => {
  const ceiling = Math.min(MAX_BACKOFF_MS, baseDelayMs * 2 ** attempt)
  return ceiling / 2 + random * (ceiling / 2)
}

/**
 * The wait before retry number `attempt` (0 for the first retry), or
 * undefined when the error must go back to the caller now.
 */
export const retryDelayMs = (
  error: UpstreamError,
  attempt: number,
  retries: { readonly max: number; readonly baseDelayMs: number },
  random: number,
  remainingMs: number
): number | undefined => {
  if (attempt >= retries.max || !isRetryable(error)) return undefined
  const delay = error.retryAfterSeconds !== undefined
    ? error.retryAfterSeconds * 1000
    : backoffMs(attempt, retries.baseDelayMs, random)
  if (delay > MAX_RETRY_AFTER_MS || delay >= remainingMs) return undefined
  return delay
}
