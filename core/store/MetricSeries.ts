/**
 * The labelled series of one metric, each made once with its labels baked in
 * and kept. `Metric.withAttributes` returns a wrapper that builds a new context
 * and a new label record on every update, so the series key (a sorted JSON
 * string) is recomputed each time, on every request (test/bench/gateway.ts,
 * CPU per request). A metric made with `attributes` computes its key once.
 * Here in the lowest room that records metrics (store's caches), so api, auth
 * and app can use it too.
 */
/**
 * `make` called once per distinct label set; the same metric, or bundle of metrics, after that.
 * Every call of one labelled function names the same labels in the same order. Found through one
 * map per label, keyed by the label's value: no key string is built and hashed per call, and
 * there are two calls per request (RequestMetrics).
 */
export const labelled = <M>(make: (attributes: Readonly<Record<string, string>>) => M) => {
  const root: Level<M> = new Map()
  return (attributes: Readonly<Record<string, string>>): M => {
    let level = root
    let node: Level<M> | M | undefined
    for (const name in attributes) {
      node = level.get(attributes[name]!)
      if (node === undefined) level.set(attributes[name]!, node = new Map())
      level = node as Level<M>
    }
    let found = level.get(MADE) as M | undefined
    if (found === undefined) level.set(MADE, found = make(attributes))
    return found
  }
}

/** Label values down to the series; MADE (not a string, so no label value can be it) holds the series. */
type Level<M> = Map<string | typeof MADE, Level<M> | M>
const MADE: unique symbol = Symbol("made")
