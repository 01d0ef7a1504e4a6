/**
 * Requests by method, route and status, and their latency to the response
 * head. Every series is made once with its labels baked in (labelled), so a
 * request pays two small lookups and two plain updates, not a series key
 * rebuilt per update (Metric.withAttributes).
 */
import { type Context, Metric } from "effect"
import { labelled } from "../store/MetricSeries.ts"

const BOUNDARIES = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** One method and route: its latency histogram and a request counter per status. */
const routeSeries = labelled(({ method, route }) => ({
  latency: Metric.histogram("periscope_http_request_duration_seconds", {
    description: "Time from the request to the response head, by method and route",
    boundaries: BOUNDARIES,
    attributes: { method: method!, route: route! }
  }),
  byStatus: labelled(({ status }) =>
    Metric.counter("periscope_http_requests_total", {
      description: "HTTP requests answered, by method, route and status",
      incremental: true,
      attributes: { method: method!, route: route!, status: status! }
    })
  )
}))

/** Counts one answered request and its latency in seconds (plain calls: every request pays them). */
export const recordRequest = (method: string, route: string, status: number, seconds: number, context: Context.Context<never>): void => {
  const series = routeSeries({ method, route })
  series.byStatus({ status: String(status) }).updateUnsafe(1, context)
  series.latency.updateUnsafe(seconds, context)
}
