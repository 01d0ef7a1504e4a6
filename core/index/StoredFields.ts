/**
 * Stored text of records (a page's url, title, text, date; an image's url, alt, ...):
 * UTF-8 bytes in one buffer and one offset per field, decoded only for the hits shown.
 * The bytes may also stay where they are (a snapshot file opened with openSnapshot):
 * then each field shown is read from there.
 */
import { ByteWriter } from "./ByteWriter.ts"

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder()

/** Bytes read on demand: `read(start, end)` answers the bytes from start to end. */
export interface ByteRanges {
  readonly length: number
  read(start: number, end: number): Uint8Array
}

export class StoredFields {
  /** Fields per record. */
  readonly width: number
  private source: Uint8Array | ByteRanges
  /** width * count + 1 byte offsets. */
  readonly offsets: Uint32Array

  constructor(width: number, bytes: Uint8Array | ByteRanges, offsets: Uint32Array) {
    this.width = width
    this.source = bytes
    this.offsets = offsets
  }

  get count(): number {
    return (this.offsets.length - 1) / this.width
  }

  get(record: number, field: number): string {
    const i = record * this.width + field
    const start = this.offsets[i]!
    const end = this.offsets[i + 1]!
    if (start === end) return ""
    const bytes = this.source
    return utf8Decoder.decode(bytes instanceof Uint8Array ? bytes.subarray(start, end) : bytes.read(start, end))
  }

  /** A field's length in UTF-8 bytes. */
  byteLength(record: number, field: number): number {
    const i = record * this.width + field
    return this.offsets[i + 1]! - this.offsets[i]!
  }

  /**
   * The text of bytes `from` to `to` of a field, each end moved forward to the first byte of a
   * character (a field's bytes are UTF-8): a piece of a long text without decoding all of it.
   */
  getPart(record: number, field: number, from: number, to: number): string {
    const i = record * this.width + field
    const start = this.offsets[i]!
    const length = this.offsets[i + 1]! - start
    const first = Math.max(0, Math.min(from, length))
    const last = Math.max(first, Math.min(to, length))
    // Three bytes past the end at most: where the last character that `to` cuts ends.
    const readEnd = Math.min(length, last + 3)
    const source = this.source
    const bytes = source instanceof Uint8Array ? source.subarray(start + first, start + readEnd) : source.read(start + first, start + readEnd)
    let head = 0
    while (head < bytes.length && (bytes[head]! & 0xc0) === 0x80) head++
    let tail = last - first
    while (tail < bytes.length && (bytes[tail]! & 0xc0) === 0x80) tail++
    return head >= tail ? "" : utf8Decoder.decode(bytes.subarray(head, tail))
  }

  /** Where the bytes are: in memory, or read per field from elsewhere. */
  get bytes(): Uint8Array | ByteRanges {
    return this.source
  }

  /** All the bytes in memory (read once when they were left in a file). */
  allBytes(): Uint8Array {
    const bytes = this.source
    return bytes instanceof Uint8Array ? bytes : bytes.read(0, bytes.length)
  }

  /** From now on the fields are read from `bytes`: the same bytes as the source read so far, now in memory. */
  holdInMemory(bytes: Uint8Array): void {
    if (bytes.length !== this.source.length) throw new Error(`stored fields: ${bytes.length} bytes in place of ${this.source.length}`)
    this.source = bytes
  }
}

export class StoredFieldsWriter {
  private readonly width: number
  private readonly bytes = new ByteWriter(1 << 20)
  private readonly offsets: Array<number> = [0]

  constructor(width: number) {
    this.width = width
  }

  add(values: ReadonlyArray<string>): void {
    for (let f = 0; f < this.width; f++) {
      const value = values[f] ?? ""
      if (value.length > 0) this.bytes.writeBytes(utf8Encoder.encode(value))
      this.offsets.push(this.bytes.length)
    }
  }

  finish(): StoredFields {
    return new StoredFields(this.width, this.bytes.toBytes(), Uint32Array.from(this.offsets))
  }
}
