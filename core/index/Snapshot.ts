/**
 * The snapshot format: a whole SearchIndex as one byte array, read back without parsing
 * any document. Layout (all integers little-endian):
 *
 *   0   8 bytes  magic "PSCPIDX\0"
 *   8   u32      format version
 *   12  u32      flags (0)
 *   16  u32 x 2  total length in bytes (low, high)
 *   24  u32      checksum: xxHash32 over bytes 0..24, 28..32 and 32..end (all but itself)
 *   28  u32      length of the metadata JSON
 *   32  ...      metadata JSON (options, counts, field specs, the section table), padded to 8
 *   ...          sections: the index's typed arrays, each 8-byte aligned
 *
 * Sections are found by name in the table. The run data (`*.blockRunMax`, `*.blockRunLastDoc`,
 * `*.blockRunOffset`) was added within version 2: a snapshot without it loads, and its blocks
 * are read whole, as they were when it was written. So was `*.blockRunPositions` (where each
 * run's positions start), later still: without it positions are found from the block's start.
 * And `pages.textPositions` (how many positions each long page's text took): without it a
 * snippet scans the page's whole text instead of the part its words' positions point to.
 * And `pages.language` with the metadata's `languages` (each page's language and the analysis
 * its words got, LanguageAnalysis.ts): without them every page was analysed as English and is
 * in the language it declares.
 *
 * Decoding checks magic, version, length and checksum before it reads anything else, then
 * maps every section as a typed-array view over the same buffer (copying once only when the
 * input is not 8-byte aligned). A snapshot that fails any check is refused whole.
 *
 * openSnapshot reads a snapshot left where it is (a file, through positional reads): the
 * page text (pages.bytes, two thirds of a big snapshot) stays there and is read per hit
 * shown; everything else is read into memory. The checksum still covers every byte: the
 * page text is streamed through it a chunk at a time.
 */
import { Schema } from "effect"
import type { ResolvedEngineOptions } from "./EngineOptions.ts"
import { analysisNamed } from "./analysis/LanguageAnalysis.ts"
import { type FieldSpec, InvertedIndex, type InvertedIndexArrays, type InvertedIndexMeta, runsPerBlock } from "./InvertedIndex.ts"
import type { PageLanguage, PageLanguages } from "./PageLanguages.ts"
import { SearchIndex, type SearchIndexParts } from "./SearchIndex.ts"
import { type ByteRanges, StoredFields } from "./StoredFields.ts"
import { readVectors, type SectionReader, vectorSections, type VectorsMeta } from "./Vectors.ts"
import { jsXxHash32, xxhash32, type XxHash32Maker, type XxHash32Stream } from "./XxHash32.ts"

export const snapshotMagic = "PSCPIDX\0"
/** 2: exact field lengths as u16 (docLengths) instead of float64 norms per document and field. */
export const snapshotFormatVersion = 2
const headerLength = 32

export class SnapshotError extends Schema.TaggedError<SnapshotError>()("SnapshotError", {
  reason: Schema.Literals(["truncated", "bad-magic", "unsupported-version", "checksum-mismatch", "malformed", "unsupported-platform"]),
  message: Schema.String
}) {}

type ElementType = "u8" | "u16" | "i32" | "u32" | "f32" | "f64"
type Typed = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array

const elementSize: Record<ElementType, number> = { u8: 1, u16: 2, i32: 4, u32: 4, f32: 4, f64: 8 }

const typeOf = (array: Typed): ElementType =>
  array instanceof Uint8Array ? "u8"
  : array instanceof Uint16Array ? "u16"
  : array instanceof Int32Array ? "i32"
  : array instanceof Uint32Array ? "u32"
  : array instanceof Float32Array ? "f32"
  : "f64"

const view = (type: ElementType, buffer: ArrayBuffer, offset: number, count: number): Typed => {
  switch (type) {
    case "u8":
      return new Uint8Array(buffer, offset, count)
    case "u16":
      return new Uint16Array(buffer, offset, count)
    case "i32":
      return new Int32Array(buffer, offset, count)
    case "u32":
      return new Uint32Array(buffer, offset, count)
    case "f32":
      return new Float32Array(buffer, offset, count)
    case "f64":
      return new Float64Array(buffer, offset, count)
  }
}

interface SectionEntry {
  readonly name: string
  readonly type: ElementType
  readonly offset: number
  readonly count: number
}

interface InvertedMeta {
  readonly documentCount: number
  readonly fields: ReadonlyArray<FieldSpec>
  readonly k1: number
  readonly b: number
  readonly averageLengths: ReadonlyArray<number>
}

interface SnapshotMeta {
  readonly options: ResolvedEngineOptions
  readonly web: InvertedMeta
  readonly images: InvertedMeta
  readonly widths: { readonly pages: number; readonly hosts: number; readonly imageFields: number }
  readonly sections: ReadonlyArray<SectionEntry>
  /** The passages' vectors (`vectors.*` sections), when the snapshot was built with an embedding server. */
  readonly vectors?: VectorsMeta
  /** Each page's language and analysis, by its entry (`pages.language`); absent before languages. */
  readonly languages?: ReadonlyArray<PageLanguage>
}

const invertedArrayNames: ReadonlyArray<keyof InvertedIndexArrays> = [
  "termBytes", "termOffsets", "termDf", "termPostings", "termPositions", "termMaxTfn", "termFirstBlock",
  "blockLastDoc", "blockPostings", "blockPositions", "blockMaxTfn", "blockRunMax", "blockRunLastDoc", "blockRunOffset", "blockRunPositions", "postings",
  "positions", "docLengths"
]
/** Added within version 2: a snapshot written before them has none, and its blocks are read whole. */
const runSections = ["blockRunMax", "blockRunLastDoc", "blockRunOffset"] as const

const sectionsOf = (parts: SearchIndexParts): Array<[string, Typed]> => {
  const out: Array<[string, Typed]> = []
  for (const name of invertedArrayNames) out.push([`web.${name}`, parts.web.arrays[name]])
  for (const name of invertedArrayNames) out.push([`images.${name}`, parts.images.arrays[name]])
  out.push(
    ["pages.bytes", parts.pages.allBytes()], ["pages.offsets", parts.pages.offsets],
    ["hosts.bytes", parts.hosts.allBytes()], ["hosts.offsets", parts.hosts.offsets],
    ["imageFields.bytes", parts.imageFields.allBytes()], ["imageFields.offsets", parts.imageFields.offsets],
    ["pageHost", parts.pageHost], ["pageCluster", parts.pageCluster], ["pageImages", parts.pageImages],
    ["imagePage", parts.imagePage], ["imageCluster", parts.imageCluster], ["imageSize", parts.imageSize],
    ["pages.textPositions", parts.textPositions]
  )
  if (parts.vectors !== undefined) out.push(...vectorSections(parts.vectors))
  if (parts.pageLanguages !== undefined) out.push(["pages.language", parts.pageLanguages.ids])
  return out
}

const align8 = (n: number) => (n + 7) & ~7

const invertedMeta = (index: InvertedIndex): InvertedMeta => ({
  documentCount: index.meta.documentCount,
  fields: index.meta.fields.map((f) => ({ name: f.name, weight: f.weight, positions: f.positions })),
  k1: index.meta.k1,
  b: index.meta.b,
  averageLengths: [...index.meta.averageLengths]
})

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/** The index as snapshot bytes. */
export const encodeSnapshot = (index: SearchIndex): Uint8Array => {
  const parts = index.parts
  const sections = sectionsOf(parts)
  // The section table lives in the metadata, whose length moves the data: reserve room for
  // the metadata, lay out, and pad the JSON with spaces to exactly the reserved length.
  let reserved = 4096
  let metaBytes: Uint8Array
  let entries: Array<SectionEntry>
  for (;;) {
    let offset = align8(headerLength + reserved)
    entries = sections.map(([name, array]) => {
      const entry = { name, type: typeOf(array), offset, count: array.length }
      offset = align8(offset + array.byteLength)
      return entry
    })
    const meta: SnapshotMeta = {
      options: parts.options,
      web: invertedMeta(parts.web),
      images: invertedMeta(parts.images),
      widths: { pages: parts.pages.width, hosts: parts.hosts.width, imageFields: parts.imageFields.width },
      sections: entries,
      ...(parts.vectors === undefined ? {} : { vectors: parts.vectors.meta }),
      ...(parts.pageLanguages === undefined ? {} : { languages: parts.pageLanguages.table })
    }
    const json = new TextEncoder().encode(JSON.stringify(meta))
    if (json.length <= reserved) {
      metaBytes = new Uint8Array(reserved).fill(0x20)
      metaBytes.set(json)
      break
    }
    reserved = json.length + 256
  }
  const last = entries[entries.length - 1]!
  const total = align8(last.offset + last.count * elementSize[last.type])
  const out = new Uint8Array(total)
  out.set(new TextEncoder().encode(snapshotMagic), 0)
  const header = new DataView(out.buffer)
  header.setUint32(8, snapshotFormatVersion, true)
  header.setUint32(12, 0, true)
  header.setUint32(16, total % 0x100000000, true)
  header.setUint32(20, Math.floor(total / 0x100000000), true)
  header.setUint32(28, metaBytes.length, true)
  out.set(metaBytes, headerLength)
  sections.forEach(([, array], i) => {
    out.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), entries[i]!.offset)
  })
  header.setUint32(24, checksumOf(out, jsXxHash32), true)
  return out
}

/** The checksum's start: xxHash32 over the header but its checksum field; the rest of the file continues from it. */
const headerSeed = (bytes: Uint8Array): number => xxhash32(bytes.subarray(28, headerLength), xxhash32(bytes.subarray(0, 24)))

/** How many bytes a running hash takes at a time: a WebAssembly hasher copies each piece into its memory. */
const CHECK_CHUNK = 4 << 20

/** Feeds `bytes` to `hash` a chunk at a time. */
const updateInChunks = (hash: XxHash32Stream, bytes: Uint8Array): void => {
  for (let at = 0; at < bytes.length; at += CHECK_CHUNK) hash.update(bytes.subarray(at, Math.min(bytes.length, at + CHECK_CHUNK)))
}

/** xxHash32 over everything but the checksum field itself, header included. */
const checksumOf = (bytes: Uint8Array, hashWith: XxHash32Maker): number => {
  const hash = hashWith(headerSeed(bytes))
  updateInChunks(hash, bytes.subarray(headerLength))
  return hash.digest()
}

const fail = (reason: SnapshotError["reason"], message: string): never => {
  throw new SnapshotError({ reason, message })
}

interface Header {
  readonly total: number
  readonly checksum: number
  readonly flags: number
  readonly metaLength: number
}

/** The fixed header's checks, in order: magic, version, length (`available`: the bytes there are). */
const readHeader = (head: Uint8Array, available: number): Header => {
  const magic = new TextDecoder().decode(head.subarray(0, 8))
  if (magic !== snapshotMagic) return fail("bad-magic", "snapshot: not a Periscope index (wrong magic bytes)")
  const header = new DataView(head.buffer, head.byteOffset, headerLength)
  const version = header.getUint32(8, true)
  if (version !== snapshotFormatVersion) {
    return fail("unsupported-version", `snapshot: format version ${version}; this engine reads version ${snapshotFormatVersion} only: build the snapshot again from its documents`)
  }
  const total = header.getUint32(16, true) + header.getUint32(20, true) * 0x100000000
  if (available < total) {
    return fail("truncated", `snapshot: truncated, ${available} of ${total} bytes present`)
  }
  if (available > total) return fail("malformed", `snapshot: ${available - total} unexpected bytes after the end`)
  return { total, checksum: header.getUint32(24, true), flags: header.getUint32(12, true), metaLength: header.getUint32(28, true) }
}

/** The checks after the checksum: flags, and the metadata's place and JSON. */
const readMeta = (header: Header, metaBytes: () => Uint8Array): SnapshotMeta => {
  if (header.flags !== 0) return fail("malformed", "snapshot: unknown flags set in the header")
  if (headerLength + header.metaLength > header.total) return fail("malformed", "snapshot: metadata runs past the end")
  try {
    return JSON.parse(new TextDecoder().decode(metaBytes())) as SnapshotMeta
  } catch {
    return fail("malformed", "snapshot: metadata is not valid JSON")
  }
}

/**
 * Reads snapshot bytes back into a SearchIndex; throws SnapshotError when they are not a whole,
 * intact snapshot. `hashWith` checks the checksum (WasmXxHash32.ts's fastXxHash32 is quicker).
 */
export const decodeSnapshot = (input: Uint8Array, hashWith: XxHash32Maker = jsXxHash32): SearchIndex => {
  if (!(input instanceof Uint8Array)) return fail("malformed", "snapshot: expected bytes (Uint8Array)")
  if (!littleEndian) return fail("unsupported-platform", "snapshot: this engine needs a little-endian platform")
  if (input.length < headerLength) {
    return fail("truncated", `snapshot: ${input.length} bytes is shorter than the ${headerLength}-byte header`)
  }
  const header = readHeader(input, input.length)
  // Typed-array views need aligned offsets: copy once when the caller's bytes are not aligned.
  const bytes = input.byteOffset % 8 === 0 ? input : input.slice()
  if (checksumOf(bytes, hashWith) !== header.checksum) {
    return fail("checksum-mismatch", "snapshot: checksum mismatch, the file is corrupt")
  }
  const meta = readMeta(header, () => bytes.subarray(headerLength, headerLength + header.metaLength))
  return new SearchIndex(assemble(meta, bytes))
}

/** Positional reads of a snapshot left where it is (a file). */
export interface SnapshotSource {
  /** Bytes in the source. */
  readonly size: number
  /** Copies `length` bytes from `position` into `target` at `offset`: all of them, or throws. */
  readInto(target: Uint8Array, offset: number, position: number, length: number): void
}

/**
 * A SearchIndex over a snapshot that stays in `source`: everything but the page text is read
 * into memory, the page text is read per hit shown. Every byte is checked against the checksum
 * first (with `hashWith`), as decodeSnapshot does; the same failures, the same messages.
 */
export const openSnapshot = (
  source: SnapshotSource,
  hashWith: XxHash32Maker = jsXxHash32
): SearchIndex => {
  if (!littleEndian) return fail("unsupported-platform", "snapshot: this engine needs a little-endian platform")
  if (source.size < headerLength) {
    return fail("truncated", `snapshot: ${source.size} bytes is shorter than the ${headerLength}-byte header`)
  }
  const head = new Uint8Array(headerLength)
  source.readInto(head, 0, 0, headerLength)
  const header = readHeader(head, source.size)
  const { total } = header
  // Where the page text lies, from the section table; a table that cannot tell leaves nothing out.
  let pages: { readonly start: number; readonly length: number; readonly next: number } | undefined
  if (header.metaLength <= total - headerLength) {
    const metaBytes = new Uint8Array(header.metaLength)
    source.readInto(metaBytes, 0, headerLength, header.metaLength)
    try {
      const entry = (JSON.parse(new TextDecoder().decode(metaBytes)) as SnapshotMeta).sections?.find((e) => e.name === "pages.bytes")
      if (entry !== undefined && entry.type === "u8" && Number.isInteger(entry.offset) && Number.isInteger(entry.count) && entry.count >= 0 && entry.offset % 8 === 0 && entry.offset >= headerLength + header.metaLength) {
        const next = align8(entry.offset + entry.count)
        if (next <= total) pages = { start: entry.offset, length: entry.count, next }
      }
    } catch {
      // Reported after the checksum, as decodeSnapshot does.
    }
  }
  const start = pages?.start ?? total
  const next = pages?.next ?? total
  const resident = new Uint8Array(total - (next - start))
  source.readInto(resident, 0, 0, start)
  source.readInto(resident, start, next, total - next)
  // The checksum in file order: header, everything up to the page text, the page text streamed, the rest.
  const hash = hashWith(headerSeed(resident))
  updateInChunks(hash, resident.subarray(headerLength, start))
  const chunk = new Uint8Array(Math.min(CHECK_CHUNK, Math.max(8, next - start)))
  for (let at = start; at < next; at += chunk.length) {
    const length = Math.min(chunk.length, next - at)
    source.readInto(chunk, 0, at, length)
    hash.update(chunk.subarray(0, length))
  }
  updateInChunks(hash, resident.subarray(start))
  if (hash.digest() !== header.checksum) return fail("checksum-mismatch", "snapshot: checksum mismatch, the file is corrupt")
  const meta = readMeta(header, () => resident.subarray(headerLength, headerLength + header.metaLength))
  if (pages === undefined) return new SearchIndex(assemble(meta, resident))
  const text = new TextInSource(source, pages.start, pages.length)
  return new SearchIndex(assemble(meta, resident, { start: pages.start, next: pages.next, text }))
}

/**
 * The page text of an opened snapshot, read from its source per field shown. An adapter may
 * read it all into memory later (StoredFields.holdInMemory): `position` and `length` say where it is.
 */
export class TextInSource implements ByteRanges {
  readonly source: SnapshotSource
  readonly position: number
  readonly length: number

  constructor(source: SnapshotSource, position: number, length: number) {
    this.source = source
    this.position = position
    this.length = length
  }

  read(from: number, to: number): Uint8Array {
    const end = Math.min(to, this.length)
    const out = new Uint8Array(Math.max(0, end - from))
    if (out.length > 0) this.source.readInto(out, 0, this.position + from, out.length)
    return out
  }
}

/** The page text left in the source: its place in the file and how to read it. */
interface LeftInPlace {
  readonly start: number
  readonly next: number
  readonly text: TextInSource
}

/** `bytes`: the whole snapshot, or (with `left`) all of it but the page text, the sections after it moved up. */
const assemble = (meta: SnapshotMeta, bytes: Uint8Array, left?: LeftInPlace): SearchIndexParts => {
  if (typeof meta !== "object" || meta === null || !Array.isArray(meta.sections)) {
    return fail("malformed", "snapshot: metadata lacks its section table")
  }
  const sections = new Map<string, Typed>()
  const gap = left === undefined ? 0 : left.next - left.start
  for (const entry of meta.sections) {
    const size = elementSize[entry.type as ElementType] as number | undefined
    if (size === undefined || !Number.isInteger(entry.offset) || !Number.isInteger(entry.count) || entry.count < 0) {
      return fail("malformed", `snapshot: section ${String(entry.name)} has a bad type, offset or length`)
    }
    if (left !== undefined && entry.name === "pages.bytes") continue
    const inFile = entry.offset % 8 === 0 && entry.offset + entry.count * size <= bytes.length + gap
    const overlapsText = left !== undefined && entry.offset < left.next && entry.offset + entry.count * size > left.start
    if (!inFile || overlapsText) return fail("malformed", `snapshot: section ${entry.name} lies outside the file`)
    const offset = left !== undefined && entry.offset >= left.next ? entry.offset - gap : entry.offset
    sections.set(entry.name, view(entry.type, bytes.buffer as ArrayBuffer, bytes.byteOffset + offset, entry.count))
  }
  const get = <T extends Typed>(name: string, type: ElementType, length?: number): T => {
    const section = sections.get(name)
    if (section === undefined) return fail("malformed", `snapshot: section ${name} is missing`)
    if (typeOf(section) !== type) return fail("malformed", `snapshot: section ${name} should hold ${type} values`)
    if (length !== undefined && section.length !== length) {
      return fail("malformed", `snapshot: section ${name} has ${section.length} entries, expected ${length}`)
    }
    return section as T
  }
  const inverted = (prefix: string, m: InvertedMeta): InvertedIndex => {
    if (typeof m?.documentCount !== "number" || !Array.isArray(m.fields)) {
      return fail("malformed", `snapshot: ${prefix} index metadata is incomplete`)
    }
    const termDf = get<Uint32Array>(`${prefix}.termDf`, "u32")
    const blockMaxTfn = get<Float32Array>(`${prefix}.blockMaxTfn`, "f32")
    const runSectionsPresent = runSections.filter((name) => sections.has(`${prefix}.${name}`)).length
    if (runSectionsPresent !== 0 && runSectionsPresent !== runSections.length) {
      return fail("malformed", `snapshot: ${prefix} has ${runSectionsPresent} of the ${runSections.length} run sections (${runSections.join(", ")}): all or none`)
    }
    const hasRuns = runSectionsPresent === runSections.length
    const hasRunPositions = sections.has(`${prefix}.blockRunPositions`)
    if (hasRunPositions && !hasRuns) return fail("malformed", `snapshot: ${prefix} has blockRunPositions without the run sections (${runSections.join(", ")})`)
    const t = termDf.length
    const arrays: InvertedIndexArrays = {
      termBytes: get(`${prefix}.termBytes`, "u8"),
      termOffsets: get(`${prefix}.termOffsets`, "u32", t + 1),
      termDf,
      termPostings: get(`${prefix}.termPostings`, "u32", t + 1),
      termPositions: get(`${prefix}.termPositions`, "u32", t + 1),
      termMaxTfn: get(`${prefix}.termMaxTfn`, "f32", t),
      termFirstBlock: get(`${prefix}.termFirstBlock`, "i32", t),
      blockLastDoc: get(`${prefix}.blockLastDoc`, "i32"),
      blockPostings: get(`${prefix}.blockPostings`, "u32"),
      blockPositions: get(`${prefix}.blockPositions`, "u32"),
      blockMaxTfn,
      // Run data came later within version 2: without it (all three sections) blocks are read whole.
      blockRunMax: hasRuns ? get(`${prefix}.blockRunMax`, "u8", blockMaxTfn.length * runsPerBlock) : new Uint8Array(0),
      blockRunLastDoc: hasRuns ? get(`${prefix}.blockRunLastDoc`, "i32", blockMaxTfn.length * runsPerBlock) : new Int32Array(0),
      blockRunOffset: hasRuns ? get(`${prefix}.blockRunOffset`, "u16", blockMaxTfn.length * runsPerBlock) : new Uint16Array(0),
      // Later still: without it, positions are found from each block's start.
      blockRunPositions: hasRunPositions ? get(`${prefix}.blockRunPositions`, "u16", blockMaxTfn.length * runsPerBlock) : new Uint16Array(0),
      postings: get(`${prefix}.postings`, "u8"),
      positions: get(`${prefix}.positions`, "u8"),
      docLengths: get(`${prefix}.docLengths`, "u16", m.documentCount * m.fields.length)
    }
    const meta: InvertedIndexMeta = {
      documentCount: m.documentCount,
      fields: m.fields,
      k1: m.k1,
      b: m.b,
      averageLengths: m.averageLengths
    }
    return new InvertedIndex(meta, arrays)
  }
  const web = inverted("web", meta.web)
  const images = inverted("images", meta.images)
  const pages = web.documentCount
  const imageCount = images.documentCount
  const stored = (name: string, width: number, count: number): StoredFields =>
    new StoredFields(
      width,
      left !== undefined && name === "pages" ? left.text : get(`${name}.bytes`, "u8"),
      get(`${name}.offsets`, "u32", width * count + 1)
    )
  const hostOffsets = get<Uint32Array>("hosts.offsets", "u32")
  return {
    options: meta.options,
    web,
    pages: stored("pages", meta.widths.pages, pages),
    pageHost: get("pageHost", "i32", pages),
    hosts: stored("hosts", meta.widths.hosts, (hostOffsets.length - 1) / Math.max(1, meta.widths.hosts)),
    pageCluster: get("pageCluster", "i32", pages),
    pageImages: get("pageImages", "u32", pages + 1),
    images,
    imageFields: stored("imageFields", meta.widths.imageFields, imageCount),
    imagePage: get("imagePage", "i32", imageCount),
    imageCluster: get("imageCluster", "i32", imageCount),
    imageSize: get("imageSize", "i32", imageCount * 2),
    textPositions: sections.has("pages.textPositions") ? textPositions(get("pages.textPositions", "i32"), pages) : new Int32Array(0),
    ...(meta.vectors === undefined ? {} : { vectors: readVectors(meta.vectors, get as SectionReader, (message) => fail("malformed", message)) }),
    ...(meta.languages === undefined && !sections.has("pages.language")
      ? {}
      : { pageLanguages: pageLanguages(meta.languages, get("pages.language", "u16", pages) as Uint16Array) })
  }
}

/** The pages' languages: every entry an analysis this engine has, every page's entry in the table. */
const pageLanguages = (table: unknown, ids: Uint16Array): PageLanguages => {
  if (!Array.isArray(table)) return fail("malformed", "snapshot: section pages.language has no languages table in the metadata")
  const entries: Array<PageLanguage> = []
  for (const entry of table as Array<Partial<PageLanguage> | null>) {
    if (typeof entry?.language !== "string" || typeof entry.analysis !== "string") {
      return fail("malformed", "snapshot: the languages table should hold {language, analysis} strings")
    }
    if (analysisNamed(entry.analysis) === undefined) {
      return fail("unsupported-version", `snapshot: pages were analysed as "${entry.analysis}", an analysis this engine does not have: build the snapshot again from its documents`)
    }
    entries.push({ language: entry.language, analysis: entry.analysis })
  }
  for (const id of ids) if (id >= entries.length) return fail("malformed", `snapshot: section pages.language names entry ${id} of a languages table of ${entries.length}`)
  return { table: entries, ids }
}

/** (page, count) pairs, pages increasing and in range: snippets look pages up by halving. */
const textPositions = (pairs: Int32Array, pages: number): Int32Array => {
  if (pairs.length % 2 !== 0) return fail("malformed", "snapshot: section pages.textPositions should hold (page, count) pairs")
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i]! < 0 || pairs[i]! >= pages || (i > 0 && pairs[i]! <= pairs[i - 2]!) || pairs[i + 1]! < 0) {
      return fail("malformed", "snapshot: section pages.textPositions should hold pages in increasing order, each once, with counts of 0 or more")
    }
  }
  return pairs
}
