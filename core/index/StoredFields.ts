/**
 * Stored text of records (a page's url, title, text, date; an image's url, alt, ...):
 * UTF-8 bytes in one buffer and one offset per field, decoded only for the hits shown.
 */
import { ByteWriter } from "./ByteWriter.ts"

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder()

export class StoredFields {
  /** Fields per record. */
  readonly width: number
  readonly bytes: Uint8Array
  /** width * count + 1 byte offsets. */
  readonly offsets: Uint32Array

  constructor(width: number, bytes: Uint8Array, offsets: Uint32Array) {
    this.width = width
    this.bytes = bytes
    this.offsets = offsets
  }

  get count(): number {
    return (this.offsets.length - 1) / this.width
  }

  get(record: number, field: number): string {
    const i = record * this.width + field
    const start = this.offsets[i]!
    const end = this.offsets[i + 1]!
    return start === end ? "" : utf8Decoder.decode(this.bytes.subarray(start, end))
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
