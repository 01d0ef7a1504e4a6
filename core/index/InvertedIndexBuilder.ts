/**
 * Builds an InvertedIndex from documents added in id order.
 *
 * Each document is analysed once; its postings go to a forward log (term, document, packed
 * frequencies, positions). `build` sorts the dictionary bytewise, inverts the log with a
 * counting sort and encodes each term's postings in blocks, computing the BM25F bounds
 * MaxScore needs. Nothing per term is an object: the log is a handful of growable arrays.
 */
import type { AnalyzedFields } from "./analysis/AnalyzedText.ts"
import { type Analyzer, TokenKind } from "./analysis/Analyzer.ts"
import { ByteWriter, IntWriter } from "./ByteWriter.ts"
import { blockSize, type FieldSpec, InvertedIndex, type InvertedIndexArrays, fieldNorm, maxFieldLength, noRunPositions, runShift, runSize, runsPerBlock } from "./InvertedIndex.ts"

const utf8 = new TextEncoder()

/** Rounds a bound up so that float32 storage never makes it smaller than a real score. */
const roundUp = (x: number): number => Math.fround(x * (1 + 1e-6) + 1e-9)

export class InvertedIndexBuilder {
  readonly fields: ReadonlyArray<FieldSpec>
  private readonly analyzer: Analyzer
  private readonly k1: number
  private readonly b: number

  private readonly dictionary = new Map<string, number>()
  private readonly terms: Array<string> = []
  private df = new Int32Array(1 << 14)
  private hashes = new Uint32Array(1 << 14)
  private documents = 0
  // Forward log, one entry per (document, term).
  private readonly logTerm = new IntWriter(1 << 16)
  private readonly logDoc = new IntWriter(1 << 16)
  private readonly logPayload = new ByteWriter(1 << 18)
  private readonly logPayloadEnd = new IntWriter(1 << 16)
  private readonly logPositions = new ByteWriter(1 << 18)
  private readonly logPositionsEnd = new IntWriter(1 << 16)
  private readonly lengths: Array<IntWriter>

  // Per-document scratch.
  private readonly local = new Map<number, number>()
  private localTerms = new Int32Array(256)
  private localTf: Int32Array
  private readonly occurrenceLocal = new IntWriter(1 << 12)
  private readonly occurrencePosition = new IntWriter(1 << 12)
  private readonly occurrenceField = new IntWriter(1 << 12)
  /** Term ids of the last document's words in positional fields, in order (for near-duplicate fingerprints). */
  readonly sequence = new IntWriter(1 << 12)
  /** Positions the last document's fields took (the analyzer's count: stop words hold theirs). */
  readonly fieldPositions: Int32Array
  private field = 0
  private fieldLength = 0
  // A recorded text's term ids, by the term's index in it (addAnalyzedDocument).
  private termIds = new Int32Array(1024)
  private termSlots = new Int32Array(1024)
  private readonly sink: (term: string, position: number, start: number, end: number, kind: number) => void

  constructor(fields: ReadonlyArray<FieldSpec>, analyzer: Analyzer, k1: number, b: number) {
    this.fields = fields
    this.analyzer = analyzer
    this.k1 = k1
    this.b = b
    this.lengths = fields.map(() => new IntWriter(1 << 12))
    this.localTf = new Int32Array(this.localTerms.length * fields.length)
    this.fieldPositions = new Int32Array(fields.length)
    const sink = (term: string, position: number, _start: number, _end: number, kind: number) => {
      this.addToken(this.termId(term), position, kind)
    }
    this.sink = sink
  }

  /** One token of the current field: what the analyzer's sink gives, with the term's id. */
  private addToken(termId: number, position: number, kind: number): void {
    this.addOccurrence(this.slotOf(termId), termId, position, kind)
  }

  /** The term's slot among the current document's terms, given at its first token. */
  private slotOf(termId: number): number {
    let slot = this.local.get(termId)
    if (slot === undefined) {
      slot = this.local.size
      this.local.set(termId, slot)
      if (slot === this.localTerms.length) this.growLocal()
      this.localTerms[slot] = termId
      this.localTf.fill(0, slot * this.fields.length, (slot + 1) * this.fields.length)
    }
    return slot
  }

  private addOccurrence(slot: number, termId: number, position: number, kind: number): void {
    this.localTf[slot * this.fields.length + this.field]!++
    if (this.fields[this.field]!.positions) {
      this.occurrenceLocal.push(slot)
      this.occurrencePosition.push(position)
      this.occurrenceField.push(this.field)
    }
    // A compound and a word's exact form stand at a word's position: they add no length.
    if (kind === TokenKind.Word || kind === TokenKind.Part) {
      this.fieldLength++
      if (this.fields[this.field]!.positions) this.sequence.push(termId)
    }
  }

  get documentCount(): number {
    return this.documents
  }

  /** Indexes one document (field texts in `fields` order) with `analyzer` (by default the builder's) and returns its id. */
  addDocument(texts: ReadonlyArray<string>, analyzer: Analyzer = this.analyzer): number {
    return this.addFields((k) => {
      const text = texts[k] ?? ""
      return text.length > 0 ? analyzer.analyze(text, this.sink) : 0
    })
  }

  /**
   * Indexes one document from its fields' recorded tokens (AnalyzedText.ts, `fields` order): the
   * same calls addDocument's analysis makes, with each distinct term looked up once.
   */
  addAnalyzedDocument(analyzed: AnalyzedFields): number {
    return this.addFields((k) => {
      const text = analyzed[k]
      if (text === undefined) return 0
      // Terms get their ids and slots in the order of their first token, as the sink gives them.
      const count = text.terms.length
      if (this.termIds.length < count) {
        this.termIds = new Int32Array(count * 2)
        this.termSlots = new Int32Array(count * 2)
      }
      const ids = this.termIds
      const slots = this.termSlots
      for (let t = 0; t < count; t++) slots[t] = this.slotOf(ids[t] = this.termId(text.terms[t]!))
      const tokens = text.tokens
      for (let i = 0; i < tokens.length; i += 3) {
        const t = tokens[i]!
        this.addOccurrence(slots[t]!, ids[t]!, tokens[i + 1]!, tokens[i + 2]!)
      }
      return text.positions
    })
  }

  /** One document, field by field: `tokens(k)` gives field k's tokens and returns the positions it took. */
  private addFields(tokens: (field: number) => number): number {
    const doc = this.documents++
    const f = this.fields.length
    this.local.clear()
    this.occurrenceLocal.length = 0
    this.occurrencePosition.length = 0
    this.occurrenceField.length = 0
    this.sequence.length = 0
    for (let k = 0; k < f; k++) {
      this.field = k
      this.fieldLength = 0
      this.fieldPositions[k] = tokens(k)
      this.lengths[k]!.push(this.fieldLength)
    }
    this.flushDocument(doc)
    return doc
  }

  /** A 32-bit hash of a term (FNV-1a over its UTF-16 units), for fingerprints. */
  termHash(termId: number): number {
    return this.hashes[termId]!
  }

  private termId(term: string): number {
    let id = this.dictionary.get(term)
    if (id === undefined) {
      id = this.terms.length
      this.dictionary.set(term, id)
      this.terms.push(term)
      if (id === this.df.length) {
        const grown = new Int32Array(this.df.length * 2)
        grown.set(this.df)
        this.df = grown
        const hashes = new Uint32Array(this.hashes.length * 2)
        hashes.set(this.hashes)
        this.hashes = hashes
      }
      let h = 0x811c9dc5
      for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193)
      this.hashes[id] = h >>> 0
    }
    return id
  }

  private growLocal(): void {
    const terms = new Int32Array(this.localTerms.length * 2)
    terms.set(this.localTerms)
    this.localTerms = terms
    const tf = new Int32Array(this.localTf.length * 2)
    tf.set(this.localTf)
    this.localTf = tf
  }

  private flushDocument(doc: number): void {
    const f = this.fields.length
    const count = this.local.size
    // Group positional occurrences by local term (counting sort keeps field, then position order).
    const occurrences = this.occurrenceLocal.length
    const start = new Int32Array(count + 1)
    for (let i = 0; i < occurrences; i++) start[this.occurrenceLocal.get(i) + 1]!++
    for (let s = 0; s < count; s++) start[s + 1]! += start[s]!
    const order = new Int32Array(occurrences)
    const fill = start.slice(0, count)
    for (let i = 0; i < occurrences; i++) order[fill[this.occurrenceLocal.get(i)]!++] = i

    for (let s = 0; s < count; s++) {
      const termId = this.localTerms[s]!
      this.df[termId]!++
      this.logTerm.push(termId)
      this.logDoc.push(doc)
      let code = this.localTf[s * f]! * (1 << (f - 1))
      for (let k = 1; k < f; k++) if (this.localTf[s * f + k]! > 0) code |= 1 << (k - 1)
      this.logPayload.writeVarint(code)
      for (let k = 1; k < f; k++) {
        const tf = this.localTf[s * f + k]!
        if (tf > 0) this.logPayload.writeVarint(tf)
      }
      this.logPayloadEnd.push(this.logPayload.length)
      let previousField = -1
      let previous = 0
      for (let o = start[s]!; o < start[s + 1]!; o++) {
        const i = order[o]!
        const field = this.occurrenceField.get(i)
        const position = this.occurrencePosition.get(i)
        this.logPositions.writeVarint(field === previousField ? position - previous : position)
        previousField = field
        previous = position
      }
      this.logPositionsEnd.push(this.logPositions.length)
    }
  }

  /** Inverts the log into the final index. The builder must not be used afterwards. */
  build(): InvertedIndex {
    const n = this.documents
    const f = this.fields.length
    const termCount = this.terms.length
    const postingCount = this.logTerm.length

    // Dictionary in UTF-8 byte order, so lookups compare bytes.
    const encoded = this.terms.map((t) => utf8.encode(t))
    const sorted = Array.from({ length: termCount }, (_, i) => i)
    sorted.sort((x, y) => compareBytes(encoded[x]!, encoded[y]!))
    const newId = new Int32Array(termCount)
    sorted.forEach((old, i) => (newId[old] = i))
    const termOffsets = new Uint32Array(termCount + 1)
    let bytes = 0
    for (let i = 0; i < termCount; i++) {
      termOffsets[i] = bytes
      bytes += encoded[sorted[i]!]!.length
    }
    termOffsets[termCount] = bytes
    const termBytes = new Uint8Array(bytes)
    for (let i = 0; i < termCount; i++) termBytes.set(encoded[sorted[i]!]!, termOffsets[i]!)

    // Document norms.
    const averageLengths = this.lengths.map((l) => {
      let total = 0
      for (let d = 0; d < n; d++) total += l.get(d)
      return n === 0 ? 0 : total / n
    })
    const docLengths = new Uint16Array(n * f)
    for (let k = 0; k < f; k++) {
      const lengths = this.lengths[k]!
      for (let d = 0; d < n; d++) docLengths[d * f + k] = Math.min(maxFieldLength, lengths.get(d))
    }
    const weights = this.fields.map((field) => field.weight)

    // Invert: postings of each term in document order.
    const termDf = new Uint32Array(termCount)
    for (let old = 0; old < termCount; old++) termDf[newId[old]!] = this.df[old]!
    const bucketStart = new Int32Array(termCount + 1)
    for (let t = 0; t < termCount; t++) bucketStart[t + 1] = bucketStart[t]! + termDf[t]!
    const cursor = bucketStart.slice(0, termCount)
    const order = new Int32Array(postingCount)
    for (let p = 0; p < postingCount; p++) order[cursor[newId[this.logTerm.get(p)]!]!++] = p

    let blockTotal = 0
    for (let t = 0; t < termCount; t++) if (termDf[t]! > blockSize) blockTotal += Math.ceil(termDf[t]! / blockSize)
    const termPostings = new Uint32Array(termCount + 1)
    const termPositions = new Uint32Array(termCount + 1)
    const termMaxTfn = new Float32Array(termCount)
    const termFirstBlock = new Int32Array(termCount).fill(-1)
    const blockLastDoc = new Int32Array(blockTotal)
    const blockPostings = new Uint32Array(blockTotal)
    const blockPositions = new Uint32Array(blockTotal)
    const blockMaxTfn = new Float32Array(blockTotal)
    const blockRunMax = new Uint8Array(blockTotal * runsPerBlock)
    const blockRunLastDoc = new Int32Array(blockTotal * runsPerBlock)
    const blockRunOffset = new Uint16Array(blockTotal * runsPerBlock)
    const blockRunPositions = new Uint16Array(blockTotal * runsPerBlock).fill(noRunPositions)
    const runMax = new Float64Array(runsPerBlock)
    const postings = new ByteWriter(Math.max(1024, this.logPayload.length + postingCount * 2))
    const positions = new ByteWriter(Math.max(1024, this.logPositions.length))
    const payload = this.logPayload.view()
    const positionLog = this.logPositions.view()
    const presenceBits = f - 1
    const tfs = new Int32Array(f)
    let block = 0

    for (let t = 0; t < termCount; t++) {
      termPostings[t] = postings.length
      termPositions[t] = positions.length
      const df = termDf[t]!
      const multiBlock = df > blockSize
      if (multiBlock) termFirstBlock[t] = block
      let previous = -1
      let termMax = 0
      let blockMax = 0
      for (let i = 0; i < df; i++) {
        const p = order[bucketStart[t]! + i]!
        if (multiBlock && i % blockSize === 0) {
          if (i > 0) {
            blockLastDoc[block] = previous
            blockMaxTfn[block] = roundUp(blockMax)
            quantizeRuns(runMax, blockMaxTfn[block]!, blockRunMax, block * runsPerBlock)
            block++
          }
          blockPostings[block] = postings.length
          blockPositions[block] = positions.length
          blockMax = 0
          runMax.fill(0)
        }
        const doc = this.logDoc.get(p)
        const run = (i % blockSize) >>> runShift
        if (multiBlock) {
          // Runs: where each starts, and (written until the run is full) its last document.
          if (i % runSize === 0) {
            blockRunOffset[block * runsPerBlock + run] = postings.length - blockPostings[block]!
            const positionsFrom = positions.length - blockPositions[block]!
            blockRunPositions[block * runsPerBlock + run] = positionsFrom < noRunPositions ? positionsFrom : noRunPositions
          }
          blockRunLastDoc[block * runsPerBlock + run] = doc
        }
        postings.writeVarint(doc - previous - 1)
        previous = doc
        const from = p === 0 ? 0 : this.logPayloadEnd.get(p - 1)
        const to = this.logPayloadEnd.get(p)
        postings.copyFrom(payload, from, to)
        // BM25F normalised frequency of this posting, for the MaxScore bounds.
        decodeFrequencies(payload, from, f, presenceBits, tfs)
        let tfn = 0
        for (let k = 0; k < f; k++) {
          if (tfs[k] !== 0) tfn += tfs[k]! * fieldNorm(weights[k]!, this.b, averageLengths[k]!, docLengths[doc * f + k]!)
        }
        if (tfn > blockMax) blockMax = tfn
        if (tfn > runMax[run]!) runMax[run] = tfn
        if (tfn > termMax) termMax = tfn
        const positionsFrom = p === 0 ? 0 : this.logPositionsEnd.get(p - 1)
        positions.copyFrom(positionLog, positionsFrom, this.logPositionsEnd.get(p))
      }
      if (multiBlock) {
        blockLastDoc[block] = previous
        blockMaxTfn[block] = roundUp(blockMax)
        quantizeRuns(runMax, blockMaxTfn[block]!, blockRunMax, block * runsPerBlock)
        // A short last block: the runs past its end end where it ends (never decoded, only bounded).
        const lastCount = df - Math.floor((df - 1) / blockSize) * blockSize
        for (let r = Math.ceil(lastCount / runSize); r < runsPerBlock; r++) {
          blockRunLastDoc[block * runsPerBlock + r] = previous
          blockRunOffset[block * runsPerBlock + r] = postings.length - blockPostings[block]!
        }
        block++
      }
      termMaxTfn[t] = roundUp(termMax)
    }
    termPostings[termCount] = postings.length
    termPositions[termCount] = positions.length

    const arrays: InvertedIndexArrays = {
      termBytes, termOffsets, termDf, termPostings, termPositions, termMaxTfn, termFirstBlock,
      blockLastDoc, blockPostings, blockPositions, blockMaxTfn, blockRunMax, blockRunLastDoc, blockRunOffset, blockRunPositions,
      postings: postings.toBytes(), positions: positions.toBytes(), docLengths
    }
    return new InvertedIndex({ documentCount: n, fields: this.fields, k1: this.k1, b: this.b, averageLengths }, arrays)
  }
}

/**
 * Each run's best frequency as a byte relative to the block's bound, rounded up (and by a part
 * in a billion more) so that blockMax * byte / 255 is never below it; runs past the block's end are 0.
 */
const quantizeRuns = (runMax: Float64Array, blockMax: number, out: Uint8Array, at: number): void => {
  for (let r = 0; r < runsPerBlock; r++) {
    const best = runMax[r]!
    out[at + r] = best <= 0 || blockMax <= 0 ? 0 : Math.min(255, Math.ceil((255 * best * (1 + 1e-9)) / blockMax))
  }
}

const compareBytes = (a: Uint8Array, b: Uint8Array): number => {
  const common = Math.min(a.length, b.length)
  for (let i = 0; i < common; i++) {
    const d = a[i]! - b[i]!
    if (d !== 0) return d
  }
  return a.length - b.length
}

const readVarint = (bytes: Uint8Array, at: Int32Array): number => {
  let value = 0
  let shift = 0
  let byte: number
  let i = at[0]!
  do {
    byte = bytes[i++]!
    value |= (byte & 0x7f) << shift
    shift += 7
  } while (byte & 0x80)
  at[0] = i
  return value >>> 0
}

const cursor = new Int32Array(1)

/** Unpacks a posting's frequencies (code varint, then one varint per other present field). */
const decodeFrequencies = (bytes: Uint8Array, offset: number, f: number, presenceBits: number, out: Int32Array): void => {
  cursor[0] = offset
  const code = readVarint(bytes, cursor)
  out[0] = Math.floor(code / (1 << presenceBits))
  for (let k = 1; k < f; k++) out[k] = (code & (1 << (k - 1))) !== 0 ? readVarint(bytes, cursor) : 0
}
