/** Identifiers of completions: a prefix and 24 random base62 characters. */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random bytes are drawn 4 KiB at a time: one getRandomValues call per ~170 ids instead of one each.
const pool = new Uint8Array(4096)
let next = pool.length

export const randomId = (prefix: string, length = 24): string => {
  if (next + length > pool.length) {
    crypto.getRandomValues(pool)
    next = 0
  }
  let out = prefix
  // 62 * 4 = 248 < 256: rejecting nothing keeps a slight bias that ids can afford.
  for (let i = 0; i < length; i++) out += ALPHABET[pool[next++]! % 62]
  return out
}

export const completionId = (): string => randomId("chatcmpl-")
