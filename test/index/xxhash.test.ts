/**
 * The snapshot checksum, both makers of it (plain JS and WebAssembly): xxHash32's published
 * values and a long input's value from the reference tool (xxhsum -H32), read aligned and not,
 * and the same value however the bytes are cut.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { fastXxHash32 } from "../../core/index/WasmXxHash32.ts"
import { jsXxHash32, xxhash32, type XxHash32Maker } from "../../core/index/XxHash32.ts"

const text = (s: string) => new TextEncoder().encode(s)
const wasmXxHash32 = await Effect.runPromise(fastXxHash32)
const once = (hashWith: XxHash32Maker, bytes: Uint8Array, seed = 0) => {
  const hash = hashWith(seed)
  hash.update(bytes)
  return hash.digest()
}

describe.each([["plain JS", jsXxHash32], ["WebAssembly", wasmXxHash32]] as const)("xxHash32 (%s)", (_, hashWith) => {
  it("gives the reference values", () => {
    expect(once(hashWith, text(""))).toBe(0x02cc5d05)
    expect(once(hashWith, text("a"))).toBe(0x550d7456)
    expect(once(hashWith, text("abc"))).toBe(0x32d153ff)
    expect(once(hashWith, text("Nobody inspects the spammish repetition"))).toBe(0xe2293b2f)
  })

  it("gives xxhsum's value over many stripes, from aligned and unaligned bytes", () => {
    // bytes (7i + 3) mod 256 for i < 1000: `xxhsum -H32` prints c85a5152.
    const backing = new Uint8Array(1001)
    for (let i = 0; i < 1000; i++) backing[i] = (i * 7 + 3) % 256
    expect(once(hashWith, backing.subarray(0, 1000))).toBe(0xc85a5152)
    backing.copyWithin(1, 0, 1000)
    expect(once(hashWith, backing.subarray(1))).toBe(0xc85a5152)
  })

  it("streams to the same value, whatever the pieces and their alignment", () => {
    let seed = 12345
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    for (const length of [0, 1, 3, 15, 16, 17, 31, 32, 33, 100, 1000, 4099, 70_000]) {
      // One byte of slack in front: pieces start at odd offsets too.
      const backing = new Uint8Array(length + 1)
      for (let i = 0; i < backing.length; i++) backing[i] = Math.floor(random() * 256)
      const bytes = backing.subarray(1)
      for (const hashSeed of [0, 0x9747b28c]) {
        // The one-shot JS function is the reference both makers stream to.
        const whole = xxhash32(bytes, hashSeed)
        for (let trial = 0; trial < 5; trial++) {
          const hash = hashWith(hashSeed)
          let at = 0
          while (at < length) {
            const size = Math.min(length - at, 1 + Math.floor(random() * (trial === 0 ? 5 : 5000)))
            hash.update(bytes.subarray(at, at + size))
            at += size
          }
          expect(hash.digest(), `length ${length}, trial ${trial}`).toBe(whole)
        }
      }
    }
  })
})
