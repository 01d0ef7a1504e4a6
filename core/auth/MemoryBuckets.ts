/**
 * Token buckets kept in this process: the arithmetic of Effect's RateLimiter
 * memory store and its token-bucket `consume` (same refill steps, same
 * retry-after), as plain code. Through the RateLimiter service one check made
 * two Duration objects, a tuple and four Effect steps, and every request pays
 * for the check (test/bench/http.ts --only limiter).
 */

interface Bucket {
  tokens: number
  lastRefill: number
}

export class MemoryBuckets {
  private readonly buckets = new Map<string, Bucket>()

  /**
   * Takes one token from `key`'s bucket, which holds `limit` tokens and refills
   * `limit` per `windowMs`. Returns -1 when the token was taken, else the
   * milliseconds until one will be there.
   */
  take(key: string, limit: number, windowMs: number, now: number): number {
    if (limit < 1) return windowMs
    const refillMs = windowMs / limit
    let bucket = this.buckets.get(key)
    if (bucket === undefined) {
      bucket = { tokens: limit, lastRefill: now }
      this.buckets.set(key, bucket)
    }
    const refills = Math.floor((now - bucket.lastRefill) / refillMs)
    if (refills > 0) {
      bucket.tokens = Math.min(limit, bucket.tokens + refills)
      bucket.lastRefill += refills * refillMs
    }
    if (bucket.tokens >= limit) bucket.lastRefill = now
    const left = bucket.tokens - 1
    if (left >= 0) {
      bucket.tokens = left
      return -1
    }
    const elapsed = Math.max(0, now - bucket.lastRefill)
    return Math.max(0, Math.ceil(-left) * refillMs - elapsed)
  }
}
