/**
 * xxHash32 (Yann Collet's specification): the snapshot checksum. It reads 16 bytes per
 * round with four independent lanes, fast enough in plain JS to check a large snapshot
 * on every load, where a table-driven CRC-32 reads a byte at a time. This is the
 * reference and the default; WasmXxHash32.ts gives the same values faster (test/bench/scale.ts).
 */
const P1 = 0x9e3779b1
const P2 = 0x85ebca77
const P3 = 0xc2b2ae3d
const P4 = 0x27d4eb2f
const P5 = 0x165667b1

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r))

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/** A running xxHash32: bytes in, in pieces; the hash of all of them out. */
export interface XxHash32Stream {
  update(bytes: Uint8Array): unknown
  digest(): number
}

/** Starts a running xxHash32 from a seed: this file's XxHash32, or a faster one of the same values (WasmXxHash32.ts). */
export type XxHash32Maker = (seed: number) => XxHash32Stream

/** The plain-JS maker: the reference, and the fallback where WebAssembly is missing or fails. */
export const jsXxHash32: XxHash32Maker = (seed) => new XxHash32(seed)

/** xxHash32 of `bytes` in one call. */
export const xxhash32 = (bytes: Uint8Array, seed = 0): number => new XxHash32(seed).update(bytes).digest()

/** The final mix of every xxHash32. */
const avalanche = (hash: number): number => {
  let h = hash
  h ^= h >>> 15
  h = Math.imul(h, P2)
  h ^= h >>> 13
  h = Math.imul(h, P3)
  h ^= h >>> 16
  return h >>> 0
}

/**
 * xxHash32 over bytes that arrive in pieces (a snapshot read a chunk at a time, so a big
 * file is checked without holding it in memory); the same value as `xxhash32` over them whole.
 */
export class XxHash32 {
  private v1: number
  private v2: number
  private v3: number
  private v4: number
  private readonly seed: number
  private total = 0
  /** Bytes of an unfinished 16-byte stripe. */
  private readonly pending = new Uint8Array(16)
  private pendingLength = 0
  private readonly pendingView = new DataView(this.pending.buffer)

  constructor(seed = 0) {
    this.seed = seed
    this.v1 = (seed + P1 + P2) | 0
    this.v2 = (seed + P2) | 0
    this.v3 = seed | 0
    this.v4 = (seed - P1) | 0
  }

  update(bytes: Uint8Array): this {
    this.total += bytes.length
    let i = 0
    if (this.pendingLength > 0) {
      const take = Math.min(16 - this.pendingLength, bytes.length)
      this.pending.set(bytes.subarray(0, take), this.pendingLength)
      this.pendingLength += take
      i = take
      if (this.pendingLength < 16) return this
      const p = this.pendingView
      this.stripe(p.getInt32(0, true), p.getInt32(4, true), p.getInt32(8, true), p.getInt32(12, true))
      this.pendingLength = 0
    }
    const stripes = (bytes.length - i) >>> 4
    if (stripes > 0) {
      const start = bytes.byteOffset + i
      if (littleEndian && start % 4 === 0) {
        const words = new Int32Array(bytes.buffer, start, stripes * 4)
        let v1 = this.v1, v2 = this.v2, v3 = this.v3, v4 = this.v4
        for (let w = 0; w < words.length; w += 4) {
          v1 = Math.imul(rotl((v1 + Math.imul(words[w]!, P2)) | 0, 13), P1)
          v2 = Math.imul(rotl((v2 + Math.imul(words[w + 1]!, P2)) | 0, 13), P1)
          v3 = Math.imul(rotl((v3 + Math.imul(words[w + 2]!, P2)) | 0, 13), P1)
          v4 = Math.imul(rotl((v4 + Math.imul(words[w + 3]!, P2)) | 0, 13), P1)
        }
        this.v1 = v1, this.v2 = v2, this.v3 = v3, this.v4 = v4
      } else {
        const view = new DataView(bytes.buffer, start, stripes * 16)
        for (let at = 0; at < stripes * 16; at += 16) {
          this.stripe(view.getInt32(at, true), view.getInt32(at + 4, true), view.getInt32(at + 8, true), view.getInt32(at + 12, true))
        }
      }
      i += stripes * 16
    }
    if (i < bytes.length) {
      this.pending.set(bytes.subarray(i), 0)
      this.pendingLength = bytes.length - i
    }
    return this
  }

  digest(): number {
    let h = this.total >= 16
      ? (rotl(this.v1, 1) + rotl(this.v2, 7) + rotl(this.v3, 12) + rotl(this.v4, 18)) | 0
      : (this.seed + P5) | 0
    h = (h + this.total) | 0
    let i = 0
    while (i + 4 <= this.pendingLength) {
      h = Math.imul(rotl((h + Math.imul(this.pendingView.getInt32(i, true), P3)) | 0, 17), P4)
      i += 4
    }
    while (i < this.pendingLength) {
      h = Math.imul(rotl((h + Math.imul(this.pending[i]!, P5)) | 0, 11), P1)
      i++
    }
    return avalanche(h)
  }

  private stripe(a: number, b: number, c: number, d: number): void {
    this.v1 = Math.imul(rotl((this.v1 + Math.imul(a, P2)) | 0, 13), P1)
    this.v2 = Math.imul(rotl((this.v2 + Math.imul(b, P2)) | 0, 13), P1)
    this.v3 = Math.imul(rotl((this.v3 + Math.imul(c, P2)) | 0, 13), P1)
    this.v4 = Math.imul(rotl((this.v4 + Math.imul(d, P2)) | 0, 13), P1)
  }
}
