/**
 * When to try an upstream again, as a Schedule over the failures: only
 * errors `isRetryable` accepts (before the first byte: connection failures,
 * timeouts, 429, 5xx), at most `max` retries, with exponential backoff and
 * jitter, and a Retry-After the upstream sent honoured when it is sane. A
 * wait that is absurd or longer than the time left is not waited: the error
 * goes back at once, Retry-After included, for the router to fall back or
 * the client to wait.
 */
import { Duration, Effect, Schedule } from "effect"
import { isRetryable, type UpstreamError } from "../../chat/Upstream.ts"

/** Retry-After values beyond this are not waited for here. */
export const MAX_RETRY_AFTER_MS = 60_000
/** Backoff stops growing here (before jitter). */
export const MAX_BACKOFF_MS = 30_000

/**
 * The retries of one request whose deadline is `deadlineMs` (clock time):
 * baseDelayMs·2^retry capped, each wait scaled by a random 0.8-1.2 so that
 * many clients do not retry in step, or the upstream's Retry-After instead.
 */
export const retrySchedule = (
  retries: { readonly max: number; readonly baseDelayMs: number },
  deadlineMs: number
): Schedule.Schedule<Duration.Duration, UpstreamError> =>
  Schedule.exponential(retries.baseDelayMs).pipe(
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Math.min(Duration.toMillis(duration), MAX_BACKOFF_MS))),
    Schedule.jittered,
    Schedule.setInputType<UpstreamError>(),
    Schedule.modifyDelay(({ input, duration }) =>
      Effect.succeed(input.retryAfterSeconds === undefined ? duration : Duration.seconds(input.retryAfterSeconds))
    ),
    Schedule.while(({ input, attempt, duration, now }) => {
      const wait = Duration.toMillis(duration)
      return attempt <= retries.max && isRetryable(input) && wait <= MAX_RETRY_AFTER_MS && wait < deadlineMs - now
    })
  )
