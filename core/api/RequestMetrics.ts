/**
 * Requests by method, route and status, and their latency to the response
 * head: plain counters that every request bumps, which the metric registry
 * reads at scrape time (Metric.registerUnsafe). A request pays a Map lookup
 * and a few number writes, not two metric updates resolved through the
 * fiber's context; the series appear in /metrics like any other metric.
 */
import { Context, Metric } from "effect"

const requests = Metric.counter("periscope_http_requests_total", {
  description: "HTTP requests answered, by method, route and status",
  incremental: true
})

const BOUNDARIES = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

const latency = Metric.histogram("periscope_http_request_duration_seconds", {
  description: "Time from the request to the response head, by method and route",
  boundaries: BOUNDARIES
})

/** One method and route: its latency histogram and a count per status. */
class RouteSeries {
  /** Observations per bucket (the last one above every boundary), not cumulated. */
  readonly buckets = new Float64Array(BOUNDARIES.length + 1)
  count = 0
  sum = 0
  min = Number.MAX_VALUE
  max = -Number.MAX_VALUE
  readonly byStatus = new Map<number, { count: number }>()
  readonly method: string
  readonly route: string
  readonly context: Context.Context<never>

  constructor(method: string, route: string, context: Context.Context<never>) {
    this.method = method
    this.route = route
    this.context = context
    Metric.registerUnsafe(Metric.withAttributes(latency, { method, route }), context, {
      get: () => {
        let cumulated = 0
        const buckets: Array<[number, number]> = BOUNDARIES.map((boundary, i) => [boundary, cumulated += this.buckets[i]!])
        return { buckets, count: this.count, sum: this.sum, min: this.min, max: this.max }
      },
      update: () => {},
      modify: () => {}
    })
  }

  observe(status: number, seconds: number): void {
    let counter = this.byStatus.get(status)
    if (counter === undefined) {
      const created = { count: 0 }
      Metric.registerUnsafe(Metric.withAttributes(requests, { method: this.method, route: this.route, status: String(status) }), this.context, {
        get: () => ({ count: created.count, incremental: true }),
        update: () => {},
        modify: () => {}
      })
      this.byStatus.set(status, counter = created)
    }
    counter.count++
    let bucket = 0
    while (bucket < BOUNDARIES.length && seconds > BOUNDARIES[bucket]!) bucket++
    this.buckets[bucket]!++
    this.count++
    this.sum += seconds
    if (seconds < this.min) this.min = seconds
    if (seconds > this.max) this.max = seconds
  }
}

/** Series per registry (one per application unless a caller provides its own), then per route and method. */
const byRegistry = new WeakMap<object, Map<string, Map<string, RouteSeries>>>()

/** Counts one answered request and its latency in seconds, in the registry of `context`. */
export const recordRequest = (method: string, route: string, status: number, seconds: number, context: Context.Context<never>): void => {
  const registry = Context.get(context, Metric.MetricRegistry)
  let routes = byRegistry.get(registry)
  if (routes === undefined) byRegistry.set(registry, routes = new Map())
  let methods = routes.get(route)
  if (methods === undefined) routes.set(route, methods = new Map())
  let series = methods.get(method)
  if (series === undefined) methods.set(method, series = new RouteSeries(method, route, context))
  series.observe(status, seconds)
}
