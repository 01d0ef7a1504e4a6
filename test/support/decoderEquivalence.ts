/**
 * Compiled against interpreted decoding (core/schema/Decode.ts `compiled`): random bodies made
 * from a valid one, a few fields replaced by values good and bad, must get the same answers.
 */
import { expect } from "vitest"
import type { Result } from "effect"

type Decoder = (input: unknown) => Result.Result<unknown, unknown>

/** A body: `base` with up to three fields replaced (one in ten left out) by a value of their generators. */
export const randomBody = (random: () => number, base: Record<string, unknown>, fields: Record<string, () => unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...base }
  const keys = Object.keys(fields)
  for (let changes = Math.floor(random() * 4); changes > 0; changes--) {
    const key = keys[Math.floor(random() * keys.length)]!
    if (random() < 0.1) delete out[key]
    else out[key] = fields[key]!()
  }
  return out
}

/** Both decoders answer `count` bodies alike; between a fifth and four fifths of them are valid, so both sides are exercised. */
export const expectSameAnswers = (compiled: Decoder, interpreted: Decoder, body: () => unknown, count: number): void => {
  let valid = 0
  for (let i = 0; i < count; i++) {
    const input = body()
    const fast = compiled(input)
    expect(JSON.stringify(fast), JSON.stringify(input)).toBe(JSON.stringify(interpreted(input)))
    if (fast._tag === "Success") valid++
  }
  expect(valid).toBeGreaterThan(count / 5)
  expect(valid).toBeLessThan((count * 4) / 5)
}
