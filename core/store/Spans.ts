/**
 * A span around an effect only while tracing is on for the fiber that runs it.
 * With tracing off (no OTLP endpoint configured, or a request the sampler left
 * out) Effect.withSpan still makes a no-op span and swaps the fiber's context
 * in and out; on a webSearch's three spans that was several microseconds a
 * request (test/bench/http.ts). Here the effect then runs as it is.
 * In the lowest room with spans on the request path (auth's rate limits), so
 * that every room above can use it.
 */
import { Effect, type Fiber, References, type Tracer } from "effect"

/** `effect` in a span named `name` (no stack trace captured) when tracing is on, else `effect` itself. */
export const spanned = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string, options?: Tracer.SpanOptionsNoTrace): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => spannedIn(fiber, effect, name, options))

/** `spanned` for code that already runs with its fiber at hand (inside Effect.withFiber): no step of its own. */
export const spannedIn = <A, E, R>(
  fiber: Fiber.Fiber<unknown, unknown>,
  effect: Effect.Effect<A, E, R>,
  name: string,
  options?: Tracer.SpanOptionsNoTrace
): Effect.Effect<A, E, R> => fiber.getRef(References.TracerEnabled) ? Effect.withSpan(effect, name, { ...options, captureStackTrace: false }) : effect
