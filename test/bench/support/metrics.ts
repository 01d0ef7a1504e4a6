/**
 * trec_eval's definitions: nDCG@10 (linear gains, log2 discount, ideal ranking from the
 * judgments), average precision over the top 1000, recall at 100; each averaged over the
 * queries that have at least one relevant document.
 */

export interface Scores {
  readonly ndcg10: number
  readonly map: number
  readonly recall100: number
  /** Queries averaged over. */
  readonly queries: number
}

export const ndcgAt = (ranked: ReadonlyArray<string>, gains: ReadonlyMap<string, number>, k: number): number => {
  let dcg = 0
  for (let i = 0; i < Math.min(k, ranked.length); i++) dcg += (gains.get(ranked[i]!) ?? 0) / Math.log2(i + 2)
  const ideal = [...gains.values()].filter((g) => g > 0).sort((a, b) => b - a)
  let idcg = 0
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i]! / Math.log2(i + 2)
  return idcg === 0 ? 0 : dcg / idcg
}

export const averagePrecision = (ranked: ReadonlyArray<string>, gains: ReadonlyMap<string, number>, depth = 1000): number => {
  const relevant = [...gains.values()].filter((g) => g > 0).length
  if (relevant === 0) return 0
  let hits = 0
  let sum = 0
  for (let i = 0; i < Math.min(depth, ranked.length); i++) {
    if ((gains.get(ranked[i]!) ?? 0) > 0) sum += ++hits / (i + 1)
  }
  return sum / relevant
}

export const recallAt = (ranked: ReadonlyArray<string>, gains: ReadonlyMap<string, number>, k: number): number => {
  const relevant = [...gains.values()].filter((g) => g > 0).length
  if (relevant === 0) return 0
  let hits = 0
  for (let i = 0; i < Math.min(k, ranked.length); i++) if ((gains.get(ranked[i]!) ?? 0) > 0) hits++
  return hits / relevant
}

/** Averages the three measures over judged queries; `run` maps query id -> ranked document ids. */
export const evaluateRun = (
  run: ReadonlyMap<string, ReadonlyArray<string>>,
  judgments: ReadonlyMap<string, ReadonlyMap<string, number>>
): Scores => {
  let ndcg = 0
  let ap = 0
  let recall = 0
  let n = 0
  for (const [query, gains] of judgments) {
    if (![...gains.values()].some((g) => g > 0)) continue
    const ranked = run.get(query) ?? []
    ndcg += ndcgAt(ranked, gains, 10)
    ap += averagePrecision(ranked, gains)
    recall += recallAt(ranked, gains, 100)
    n++
  }
  return { ndcg10: ndcg / n, map: ap / n, recall100: recall / n, queries: n }
}
