/**
 * Cache lookups as Prometheus counters, shared by every cache of the store
 * room: periscope_cache_lookups_total{cache, outcome} and
 * periscope_cache_store_errors_total{cache} (a shared store that failed and
 * was answered as a miss).
 */
import { Effect, Metric } from "effect"
import { labelled } from "./MetricSeries.ts"

const lookups = labelled((attributes) =>
  Metric.counter("periscope_cache_lookups_total", {
    description: "Cache lookups by cache and outcome (hit: stored or in flight; miss: computed)",
    incremental: true,
    attributes
  })
)
const storeErrors = labelled((attributes) =>
  Metric.counter("periscope_cache_store_errors_total", {
    description: "Shared cache store failures answered as a miss",
    incremental: true,
    attributes
  })
)

export const countLookup = (cache: string, outcome: "hit" | "miss"): Effect.Effect<void> => Metric.update(lookups({ cache, outcome }), 1)

export const countStoreError = (cache: string): Effect.Effect<void> => Metric.update(storeErrors({ cache }), 1)
