/**
 * A growable byte buffer with LEB128 varints: how postings, positions and stored text
 * are written before they become fixed typed arrays.
 */
export class ByteWriter {
  private buffer: Uint8Array
  length = 0

  constructor(initialCapacity = 1 << 16) {
    this.buffer = new Uint8Array(initialCapacity)
  }

  private ensure(extra: number): void {
    const need = this.length + extra
    if (need <= this.buffer.length) return
    let capacity = this.buffer.length * 2
    while (capacity < need) capacity *= 2
    const next = new Uint8Array(capacity)
    next.set(this.buffer.subarray(0, this.length))
    this.buffer = next
  }

  /** Unsigned LEB128, 7 bits a byte; values up to 2^32 - 1. */
  writeVarint(value: number): void {
    this.ensure(5)
    const buf = this.buffer
    let v = value >>> 0
    let at = this.length
    while (v >= 0x80) {
      buf[at++] = (v & 0x7f) | 0x80
      v >>>= 7
    }
    buf[at++] = v
    this.length = at
  }

  writeBytes(bytes: Uint8Array): void {
    this.ensure(bytes.length)
    this.buffer.set(bytes, this.length)
    this.length += bytes.length
  }

  /** Copies source[from, to) without allocating a view (most copies are a few bytes). */
  copyFrom(source: Uint8Array, from: number, to: number): void {
    const n = to - from
    this.ensure(n)
    if (n > 64) {
      this.buffer.set(source.subarray(from, to), this.length)
    } else {
      const buf = this.buffer
      let at = this.length
      for (let i = from; i < to; i++) buf[at++] = source[i]!
    }
    this.length += n
  }

  /** A copy of exactly the written bytes. */
  toBytes(): Uint8Array {
    return this.buffer.slice(0, this.length)
  }

  /** The written bytes without copying; valid until the next write. */
  view(): Uint8Array {
    return this.buffer.subarray(0, this.length)
  }
}

/** A growable Int32 array for the builder's logs (document ids, offsets, lengths). */
export class IntWriter {
  private buffer: Int32Array
  length = 0

  constructor(initialCapacity = 1 << 12) {
    this.buffer = new Int32Array(initialCapacity)
  }

  push(value: number): void {
    if (this.length === this.buffer.length) {
      const next = new Int32Array(this.buffer.length * 2)
      next.set(this.buffer)
      this.buffer = next
    }
    this.buffer[this.length++] = value
  }

  get(index: number): number {
    return this.buffer[index]!
  }
}
