/**
 * Near-duplicate detection with SimHash (Charikar 2002) over word 3-shingles: documents whose
 * 64-bit fingerprints differ in at most a few bits are one cluster, and a result list shows
 * only the best-ranked member of each cluster. Candidate pairs come from four 16-bit bands
 * (two fingerprints within 3 bits agree on at least one band), so clustering is near linear.
 */

/** Shingles beyond this many per document add little to a fingerprint and cost time. */
const maxShingles = 4096
/** Fingerprints of shorter documents are unstable; those only cluster when their words are identical. */
export const minTokensForNearMatch = 24
/** How many earlier members of a band bucket each document is compared with. */
const bucketWindow = 32

const fmix32 = (h: number): number => {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0

export interface Fingerprint {
  readonly high: number
  readonly low: number
  /** Order-sensitive hash of the whole sequence: short documents only cluster when it is equal. */
  readonly exact: number
}

/** SimHash of a term sequence; `hashes[i]` is a 32-bit hash of the i-th term. */
export const simhash = (hashes: ArrayLike<number>, length: number): Fingerprint => {
  const votes = new Int32Array(64)
  const shingles = length < 3 ? Math.min(length, 1) : Math.min(length - 2, maxShingles)
  for (let s = 0; s < shingles; s++) {
    const a = hashes[s]!
    const b = length > 1 ? hashes[s + 1]! : 0
    const c = length > 2 ? hashes[s + 2]! : 0
    const x = (Math.imul(a, 0x9e3779b1) ^ rotl(b, 11) ^ rotl(c, 23)) >>> 0
    const low = fmix32(x)
    const high = fmix32(x ^ 0x5bd1e995)
    for (let bit = 0; bit < 32; bit++) {
      votes[bit]! += ((low >>> bit) & 1) * 2 - 1
      votes[bit + 32]! += ((high >>> bit) & 1) * 2 - 1
    }
  }
  let low = 0
  let high = 0
  for (let bit = 0; bit < 32; bit++) {
    if (votes[bit]! > 0) low |= 1 << bit
    if (votes[bit + 32]! > 0) high |= 1 << bit
  }
  let exact = 0x9747b28c ^ length
  for (let i = 0; i < length; i++) exact = fmix32((Math.imul(exact, 31) + hashes[i]!) | 0)
  return { high: high >>> 0, low: low >>> 0, exact }
}

const popcount = (x: number): number => {
  x -= (x >>> 1) & 0x55555555
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333)
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24)
}

/**
 * Cluster ids: each document maps to the smallest document id of its cluster.
 * `maxDistance` < 0 turns collapsing off (every document is its own cluster).
 */
export const clusterNearDuplicates = (
  high: Uint32Array,
  low: Uint32Array,
  exact: Uint32Array,
  tokens: Int32Array,
  maxDistance: number
): Int32Array => {
  const n = high.length
  const parent = new Int32Array(n)
  for (let i = 0; i < n; i++) parent[i] = i
  if (maxDistance < 0 || n < 2) return parent
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!
      x = parent[x]!
    }
    return x
  }
  const union = (a: number, b: number) => {
    const ra = find(a)
    const rb = find(b)
    if (ra < rb) parent[rb] = ra
    else if (rb < ra) parent[ra] = rb
  }
  const near = (a: number, b: number): boolean => {
    if (tokens[a]! < minTokensForNearMatch || tokens[b]! < minTokensForNearMatch) {
      return tokens[a] === tokens[b] && exact[a] === exact[b] && high[a] === high[b] && low[a] === low[b]
    }
    return popcount(high[a]! ^ high[b]!) + popcount(low[a]! ^ low[b]!) <= maxDistance
  }
  const band = new Uint32Array(n)
  const order = new Int32Array(n)
  for (let b = 0; b < 4; b++) {
    for (let i = 0; i < n; i++) {
      const word = b < 2 ? high[i]! : low[i]!
      band[i] = (b % 2 === 0 ? word >>> 16 : word & 0xffff) >>> 0
      order[i] = i
    }
    order.sort((x, y) => band[x]! - band[y]! || x - y)
    for (let i = 1; i < n; i++) {
      const doc = order[i]!
      for (let j = i - 1; j >= 0 && i - j <= bucketWindow && band[order[j]!] === band[doc]; j--) {
        if (near(doc, order[j]!)) union(doc, order[j]!)
      }
    }
  }
  const cluster = new Int32Array(n)
  for (let i = 0; i < n; i++) cluster[i] = find(i)
  return cluster
}
