/**
 * Tracing for the requests the sampler picked. The application runs with
 * tracing off (core/app/Tracing.ts), so an unsampled request costs nothing:
 * no spans, no context swapped in and out. RequestTelemetry turns tracing on
 * around a sampled request; but an HttpApi handler runs under the context its
 * group was built with, which says "off" again, so the bearer middleware
 * (Authorization, inside that context) turns it back on from this reference.
 */
import { Context, Effect } from "effect"

/** The services that turn tracing on (tracer, enabled, propagation), present only around a sampled request. */
export const SampledTracing = Context.Reference<Context.Context<never> | undefined>("periscope/api/SampledTracing", {
  defaultValue: () => undefined
})

/** `effect` with tracing on again when the request it runs for was sampled. */
export const whenSampled = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const traced = fiber.getRef(SampledTracing)
    return traced === undefined ? effect : Effect.provideContext(effect, traced)
  })
