/** The middle value of a sample (the upper of the two middles when the count is even). */
export const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** The element whose `key` is the median (as `median` picks it). */
export const medianBy = <A>(xs: ReadonlyArray<A>, key: (x: A) => number): A => [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)]!

/** Ratios paired within rounds, as the benches print them: "0.91x (rounds 0.88, 0.91, 1.02)" (the median; each round's when there are several). */
export const describePaired = (ratios: ReadonlyArray<number>): string =>
  `${median(ratios).toFixed(2)}x${ratios.length > 1 ? ` (rounds ${ratios.map((r) => r.toFixed(2)).join(", ")})` : ""}`

/** The value at fraction `p` of `sorted` (ascending): p 0.99 is the 99th percentile. */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
