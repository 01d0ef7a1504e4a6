/**
 * Search benchmark queries, derived from the corpus itself so every engine sees real words:
 *
 * - AND-like: 2-4 words of one passage's title (page title and section heading). The words
 *   occur together in at least one document, as in a navigational query.
 * - OR-like: 2-4 words each taken from a different random passage's title. They rarely occur
 *   together, so a ranked disjunction must merge several long, unrelated posting lists.
 *
 * Every engine runs both sets with its ranked OR semantics; a seeded generator makes the
 * sets the same on every run.
 */
import { englishStopWords } from "../../../core/index/analysis/StopWords.ts"

export interface BenchQueries {
  readonly andLike: ReadonlyArray<string>
  readonly orLike: ReadonlyArray<string>
}

/** mulberry32: a small seeded PRNG, so the query sets are reproducible. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const titleWords = (title: string): Array<string> => {
  const words = title.toLowerCase().match(/[a-z][a-z0-9]+/g) ?? []
  return [...new Set(words.filter((w) => w.length >= 3 && !englishStopWords.has(w) && !/^(documentation|python|part|chapter)$/.test(w)))]
}

export const makeBenchQueries = (titles: ReadonlyArray<string>, perSet = 250): BenchQueries => {
  const next = random(20240601)
  const pick = <T>(items: ReadonlyArray<T>): T => items[Math.floor(next() * items.length)]!
  const candidates = titles.map(titleWords).filter((w) => w.length >= 2)
  const andLike = new Set<string>()
  while (andLike.size < perSet) {
    const words = pick(candidates)
    const count = Math.min(words.length, 2 + Math.floor(next() * 3))
    const start = Math.floor(next() * (words.length - count + 1))
    andLike.add(words.slice(start, start + count).join(" "))
  }
  const orLike = new Set<string>()
  while (orLike.size < perSet) {
    const count = 2 + Math.floor(next() * 3)
    const words = new Set<string>()
    while (words.size < count) words.add(pick(pick(candidates)))
    orLike.add([...words].join(" "))
  }
  return { andLike: [...andLike], orLike: [...orLike] }
}
