/**
 * One labelled series of a metric, made once and kept: `Metric.withAttributes`
 * builds a new metric object on every call, which the request path would pay
 * per request. Here in the lowest room that records metrics (store's caches),
 * so api and app can use it too.
 */
import { Metric } from "effect"

const made = new Map<string, Metric.Metric<number, unknown>>()

/** `base` with `attributes` (in a stable order: the caller's), the same object for the same labels. */
export const series = <M extends Metric.Metric<number, any>>(base: M, attributes: Readonly<Record<string, string>>): M => {
  let key = base.id
  for (const k in attributes) key += `\u0000${k}=${attributes[k]}`
  let found = made.get(key)
  if (found === undefined) {
    found = Metric.withAttributes(base, attributes)
    made.set(key, found)
  }
  return found as M
}
