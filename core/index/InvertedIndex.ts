/**
 * The inverted index of one collection (pages or images): a term dictionary and, per term,
 * postings in blocks of 128 documents, all in typed arrays that a snapshot maps without copying.
 *
 * A posting is `varint(docGap) varint(code) [varint(tf_f) ...]`, where `code` packs the first
 * field's term frequency with one presence bit for each other field. Field lengths are kept
 * exactly, two bytes per document and field, and BM25F's length normalisation of the short
 * ones (under 256 words, nearly all) is a lookup in a small table that stays in the L1 cache:
 * a posting is scored with one 2-byte read per field instead of a float64 per field. Positions (for phrases)
 * live in a parallel byte stream. Terms with more than one block keep per-block skip data
 * (last document, byte offsets, the block's best BM25F term frequency) and the same per run
 * of 16 postings (last document, byte offset, best frequency as a byte), so that a cursor can
 * jump over blocks and runs without decoding them and MaxScore can bound what they may add.
 */

export const blockSize = 128
/**
 * Each block is bounded again in runs of this many postings (one byte each, relative to the
 * block's bound): in a block of a word on half the pages, some posting nearly always scores
 * high, but few runs of 16 do, so MaxScore passes over most runs without scoring them.
 */
export const runShift = 4
export const runSize = 1 << runShift
export const runsPerBlock = blockSize / runSize
/** A run whose positions start too far into its block for blockRunPositions' 16 bits. */
export const noRunPositions = 0xffff
/** A document id past every real one: where exhausted cursors rest. */
export const endOfPostings = 0x7fffffff

export interface FieldSpec {
  readonly name: string
  /** BM25F weight; a field of weight 0 is not indexed at all. */
  readonly weight: number
  /** Whether positions are kept (phrases match only in such fields). */
  readonly positions: boolean
}

export interface InvertedIndexMeta {
  readonly documentCount: number
  readonly fields: ReadonlyArray<FieldSpec>
  readonly k1: number
  readonly b: number
  readonly averageLengths: ReadonlyArray<number>
}

/**
 * The statistics of a collection an index is part of (InvertedIndex.withStatistics): BM25F's
 * document count and term document frequencies across it, and its average field lengths.
 */
export interface CollectionStatistics {
  readonly documentCount: number
  /** By this index's term id: documents elsewhere in the collection that hold the term. */
  readonly otherDf: ReadonlyMap<number, number>
  /** Per field, in this index's field order. */
  readonly averageLengths: ReadonlyArray<number>
}

/** Every array of an index; snapshots write and read exactly these. */
export interface InvertedIndexArrays {
  /** UTF-8 bytes of all terms, sorted bytewise; term t is termBytes[termOffsets[t] .. termOffsets[t+1]]. */
  readonly termBytes: Uint8Array
  readonly termOffsets: Uint32Array
  readonly termDf: Uint32Array
  /** Byte offset of each term's postings; T + 1 entries. */
  readonly termPostings: Uint32Array
  /** Byte offset of each term's positions; T + 1 entries. */
  readonly termPositions: Uint32Array
  /** Largest BM25F-normalised term frequency over the term's postings (rounded up). */
  readonly termMaxTfn: Float32Array
  /** First skip block of the term, or -1 when its postings fit in one block. */
  readonly termFirstBlock: Int32Array
  readonly blockLastDoc: Int32Array
  readonly blockPostings: Uint32Array
  readonly blockPositions: Uint32Array
  readonly blockMaxTfn: Float32Array
  /**
   * runsPerBlock bytes per block: run r's best normalised frequency is at most
   * blockMaxTfn * blockRunMax[r] / 255. This and the next two are empty in snapshots written before runs.
   */
  readonly blockRunMax: Uint8Array
  /** runsPerBlock per block: each run's last document (runs past a short last block repeat the block's). */
  readonly blockRunLastDoc: Int32Array
  /** runsPerBlock per block: each run's first byte, from the block's first. */
  readonly blockRunOffset: Uint16Array
  /**
   * runsPerBlock per block: where each run's positions start, from the block's first position
   * byte; `noRunPositions` when that is past 65,534 (then they are found by walking the block).
   * Empty in snapshots written before it: positions are found from the block's start.
   */
  readonly blockRunPositions: Uint16Array
  readonly postings: Uint8Array
  readonly positions: Uint8Array
  /** Per document and field: the field's length in words (longer fields count as 65,535). */
  readonly docLengths: Uint16Array
}

export const maxFieldLength = 0xffff
/** Field lengths below this are normalised through a table, longer ones by the formula. */
export const tabledLengths = 256

/**
 * BM25F length normalisation of one field: weight / (1 - b + b * length / averageLength),
 * the factor its term frequencies are multiplied by. The one formula for tables, builder and ranker.
 */
export const fieldNorm = (weight: number, b: number, average: number, length: number): number =>
  average > 0 ? weight / (1 - b + (b * length) / average) : weight

/** fieldNorm for every length below tabledLengths of every field: table[field * 256 + length]. */
export const normTable = (fields: ReadonlyArray<FieldSpec>, b: number, averageLengths: ReadonlyArray<number>): Float64Array => {
  const table = new Float64Array(fields.length * tabledLengths)
  for (let k = 0; k < fields.length; k++) {
    for (let length = 0; length < tabledLengths; length++) {
      table[k * tabledLengths + length] = fieldNorm(fields[k]!.weight, b, averageLengths[k]!, length)
    }
  }
  return table
}

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder()

export class InvertedIndex {
  readonly meta: InvertedIndexMeta
  readonly arrays: InvertedIndexArrays
  readonly documentCount: number
  readonly fieldCount: number
  readonly termCount: number
  /** normTable of this index's fields, b and average lengths. */
  readonly norms: Float64Array
  /**
   * Decoding buffers of closed cursors, for the next ones: a query opens about ten cursors, and
   * typed arrays live outside V8's heap, so allocating a cursor's two cost more than decoding a block.
   */
  private readonly spareBuffers: Array<CursorBuffers> = []
  /** The UTF-8 bytes of the term being looked up (grown when a term needs more). */
  private keyBytes = new Uint8Array(64)

  /** Documents idf counts: this index's own, or its collection's (withStatistics). */
  private readonly idfDocuments: number
  /** Documents elsewhere in the collection holding a term, by this index's term id (withStatistics). */
  private readonly otherDf: ReadonlyMap<number, number> | undefined
  /** The index whose term-at-a-time accumulators a view shares (one thread ranks one query at a time). */
  private readonly accumulatorsOf: InvertedIndex | undefined

  constructor(meta: InvertedIndexMeta, arrays: InvertedIndexArrays, statistics?: CollectionStatistics, accumulatorsOf?: InvertedIndex) {
    this.meta = meta
    this.arrays = arrays
    this.documentCount = meta.documentCount
    this.fieldCount = meta.fields.length
    this.termCount = arrays.termDf.length
    this.norms = normTable(meta.fields, meta.b, meta.averageLengths)
    this.hasRuns = arrays.blockRunLastDoc.length === arrays.blockLastDoc.length * runsPerBlock && arrays.blockLastDoc.length > 0
    this.hasRunPositions = this.hasRuns && arrays.blockRunPositions.length === arrays.blockRunLastDoc.length
    this.idfDocuments = statistics?.documentCount ?? meta.documentCount
    this.otherDf = statistics?.otherDf
    this.accumulatorsOf = accumulatorsOf
  }

  /**
   * The same postings scored with a larger collection's statistics: this index searched beside
   * another (the pages added since a snapshot, beside it), so that both score a document as one
   * index would. Nothing is copied unless the averages grow a field's normalisation; then the
   * bounds MaxScore prunes with are raised by that factor, so they stay bounds.
   */
  withStatistics(statistics: CollectionStatistics): InvertedIndex {
    const { fields, averageLengths: own } = this.meta
    let factor = 1
    for (let k = 0; k < fields.length; k++) {
      // A field's norm grows with its average, by at most average / own (for the longest fields).
      const average = statistics.averageLengths[k]!
      if (own[k]! > 0 && average > own[k]!) factor = Math.max(factor, average / own[k]!)
    }
    const raise = (bounds: Float32Array) => bounds.map((x) => Math.fround(x * factor * (1 + 1e-6) + 1e-9))
    const arrays = factor === 1 ? this.arrays : { ...this.arrays, termMaxTfn: raise(this.arrays.termMaxTfn), blockMaxTfn: raise(this.arrays.blockMaxTfn) }
    const meta = { ...this.meta, averageLengths: statistics.averageLengths.slice(0, fields.length) }
    return new InvertedIndex(meta, arrays, statistics, this.accumulatorsOf ?? this)
  }

  /** Whether runs say where their positions start (positionsIn then walks at most a run, not the block). */
  readonly hasRunPositions: boolean

  /** Whether blocks carry run data (snapshots written before it do not: their blocks are read whole). */
  readonly hasRuns: boolean

  /** BM25F normalisation factor of one document's field. */
  norm(doc: number, field: number): number {
    const length = this.arrays.docLengths[doc * this.fieldCount + field]!
    return length < tabledLengths
      ? this.norms[field * tabledLengths + length]!
      : fieldNorm(this.meta.fields[field]!.weight, this.meta.b, this.meta.averageLengths[field]!, length)
  }

  /** Term id of an analysed term, or -1 when no document has it. Binary search over UTF-8 bytes. */
  lookup(term: string): number {
    if (this.keyBytes.length < term.length * 3) this.keyBytes = new Uint8Array(term.length * 3)
    const key = this.keyBytes
    const keyLength = utf8.encodeInto(term, key).written
    const { termBytes, termOffsets } = this.arrays
    let lo = 0
    let hi = this.termCount - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const start = termOffsets[mid]!
      const length = termOffsets[mid + 1]! - start
      const common = Math.min(length, keyLength)
      let cmp = 0
      for (let i = 0; i < common; i++) {
        const d = termBytes[start + i]! - key[i]!
        if (d !== 0) {
          cmp = d
          break
        }
      }
      if (cmp === 0) cmp = length - keyLength
      if (cmp === 0) return mid
      if (cmp < 0) lo = mid + 1
      else hi = mid - 1
    }
    return -1
  }

  /** Robertson-Sparck Jones idf as Lucene computes it: always positive. */
  idf(termId: number): number {
    const df = this.otherDf === undefined ? this.arrays.termDf[termId]! : this.arrays.termDf[termId]! + (this.otherDf.get(termId) ?? 0)
    return Math.log(1 + (this.idfDocuments - df + 0.5) / (df + 0.5))
  }

  /** The best score any posting of the term can have, for a query weight (PostingCursor.maxScore). */
  termMaxScore(termId: number, queryWeight: number): number {
    return queryWeight * this.idf(termId) * this.saturate(this.arrays.termMaxTfn[termId]!)
  }

  /** BM25 saturation of a normalised term frequency, times (k1 + 1). */
  saturate(tfn: number): number {
    const k1 = this.meta.k1
    return ((k1 + 1) * tfn) / (k1 + tfn)
  }

  /** Buffers for a new cursor: a closed cursor's, or new ones. */
  takeCursorBuffers(): CursorBuffers {
    return this.spareBuffers.pop() ?? { docs: new Int32Array(blockSize), tfs: new Int32Array(blockSize * this.fieldCount) }
  }

  /** Takes back a closed cursor's buffers (a few dozen are kept: more cursors than that are never open at once). */
  returnCursorBuffers(buffers: CursorBuffers): void {
    if (this.spareBuffers.length < maxSpareBuffers) this.spareBuffers.push(buffers)
  }

  /**
   * A score per document and a bitmap of marks (bit doc & 31 of word doc >>> 5), all zero
   * between queries, for term-at-a-time ranking (TermAtATime.ts): allocated on first use, 8
   * bytes and a bit per document, and kept, as ranking never runs inside itself.
   */
  accumulators(): { readonly scores: Float64Array; readonly marks: Int32Array } {
    if (this.accumulatorsOf !== undefined) return this.accumulatorsOf.accumulators()
    return (this.scoreAccumulators ??= {
      scores: new Float64Array(this.documentCount),
      marks: new Int32Array((this.documentCount + 31) >>> 5)
    })
  }

  private scoreAccumulators: { readonly scores: Float64Array; readonly marks: Int32Array } | undefined

  /** The term's text (for diagnostics and rebuilds). */
  termText(termId: number): string {
    const { termBytes, termOffsets } = this.arrays
    return utf8Decoder.decode(termBytes.subarray(termOffsets[termId]!, termOffsets[termId + 1]!))
  }
}

const maxSpareBuffers = 64

/** A cursor's decoded block: documents, and term frequencies per field. */
export interface CursorBuffers {
  readonly docs: Int32Array
  readonly tfs: Int32Array
}

/**
 * A forward-only reader of one term's postings. `doc` is the current document
 * (endOfPostings when done); `next` and `advance` move it, `score` weighs the current posting.
 *
 * A block of a term with skip data is decoded a run (16 postings) at a time, when a posting
 * of the run is first read: MaxScore passes over most runs of common words, and `runTo`,
 * `runEnd` and `runMaxScore` bound a run from the skip data without decoding it. A term of
 * one block, or an index without run data (an older snapshot), decodes the whole block at once.
 */
export class PostingCursor {
  doc = -1
  readonly termId: number
  readonly df: number
  /** Query weight times idf: score = weight * saturate(tfn). */
  readonly weight: number
  /** Upper bound of `score` over all postings of the term. */
  readonly maxScore: number

  private readonly index: InvertedIndex
  private readonly arrays: InvertedIndexArrays
  private readonly postings: Uint8Array
  private readonly norms: Float64Array
  private readonly lengths: Uint16Array
  private readonly fields: number
  private readonly k1: number
  /** weight * (k1 + 1), the numerator's constant. */
  private readonly scale: number
  private readonly firstBlock: number
  private readonly blockCount: number
  /** Whether blocks are decoded run by run (the term has skip data and the index has run data). */
  private readonly byRuns: boolean
  private block = -1
  private blockLength = 0
  /** The current block's first posting byte, and the document before its first posting. */
  private blockStart = 0
  private blockPrevious = -1
  /** Bit r: run r of the current block is decoded. */
  private decoded = 0
  private at = 0
  private readonly buffers: CursorBuffers
  private readonly docs: Int32Array
  private readonly tfs: Int32Array
  private closed = false
  /** Shallow pointers (skip data only): a block, and a run of the shallow block. */
  private shallowBlock = 0
  private shallowRun = 0
  private shallowRunBlock = -1
  // Positions: byte offset of the current block's positions, and a forward walker inside it.
  private positionsStart = 0
  private walkIndex = 0
  private walkOffset = 0

  /**
   * With `from`, the cursor starts at the term's first posting >= from, decoding only the run
   * that holds it.
   */
  constructor(index: InvertedIndex, termId: number, queryWeight: number, from = 0) {
    this.index = index
    this.termId = termId
    const a = index.arrays
    this.arrays = a
    this.df = a.termDf[termId]!
    this.postings = a.postings
    this.norms = index.norms
    this.lengths = a.docLengths
    this.fields = index.fieldCount
    this.k1 = index.meta.k1
    this.buffers = index.takeCursorBuffers()
    this.docs = this.buffers.docs
    this.tfs = this.buffers.tfs
    this.firstBlock = a.termFirstBlock[termId]!
    this.blockCount = this.firstBlock < 0 ? 1 : Math.ceil(this.df / blockSize)
    this.byRuns = this.firstBlock >= 0 && index.hasRuns
    this.weight = queryWeight * index.idf(termId)
    this.scale = this.weight * (this.k1 + 1)
    this.maxScore = index.termMaxScore(termId, queryWeight)
    if (from <= 0) {
      this.enterBlock(0)
      this.moveTo(0)
      return
    }
    this.enterBlock(this.blockReaching(from))
    this.doc = -1
    this.advance(from)
  }

  /** The first block whose last document is >= doc (the last block when none is). */
  private blockReaching(doc: number): number {
    if (this.firstBlock < 0) return 0
    return Math.min(this.blockCount - 1, firstBlockReaching(this.arrays, this.firstBlock, this.blockCount, doc))
  }

  /** Gives the cursor's buffers back to the index for the next cursor; the cursor must not be used after. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.doc = endOfPostings
    this.index.returnCursorBuffers(this.buffers)
  }

  /** Moves to the next posting. */
  next(): void {
    const at = this.at + 1
    if (at < this.blockLength) {
      this.moveTo(at)
    } else if (this.block + 1 < this.blockCount) {
      this.enterBlock(this.block + 1)
      this.moveTo(0)
    } else {
      this.at = at
      this.doc = endOfPostings
    }
  }

  /** Moves to the first posting whose document is >= target, skipping whole blocks and runs unread. */
  advance(target: number): void {
    if (this.doc >= target) return
    if (this.lastDocOfBlock() < target) {
      if (this.firstBlock < 0) {
        this.doc = endOfPostings
        return
      }
      const lastDocs = this.arrays.blockLastDoc
      let b = Math.max(this.block + 1, this.shallowBlock)
      while (b < this.blockCount && lastDocs[this.firstBlock + b]! < target) b++
      if (b >= this.blockCount) {
        this.doc = endOfPostings
        return
      }
      this.enterBlock(b)
    }
    let i = this.at
    if (this.byRuns) {
      // The run holding target, by the runs' last documents; the runs before it stay undecoded.
      const runLast = this.arrays.blockRunLastDoc
      const base = (this.firstBlock + this.block) * runsPerBlock
      let r = i >>> runShift
      while (runLast[base + r]! < target) r++
      this.ensureRun(r)
      if (i < r << runShift) i = r << runShift
    }
    const docs = this.docs
    while (docs[i]! < target) i++
    this.at = i
    this.doc = docs[i]!
  }

  /** BM25F score of the current posting. */
  score(): number {
    const f = this.fields
    const base = this.at * f
    const normBase = this.doc * f
    let tfn = 0
    for (let k = 0; k < f; k++) {
      const tf = this.tfs[base + k]!
      if (tf === 0) continue
      const length = this.lengths[normBase + k]!
      tfn += tf * (length < tabledLengths ? this.norms[(k << 8) + length]! : this.index.norm(this.doc, k))
    }
    return this.bound(tfn)
  }

  /** Term frequency of the current posting in one field. */
  tf(field: number): number {
    return this.tfs[this.at * this.fields + field]!
  }

  /**
   * Moves the shallow pointer (skip data only, nothing decoded) to the block holding the
   * first posting >= target; false when the term has no such posting. Block-max pruning
   * reads `shallowEnd` and `shallowMaxScore` of that block.
   */
  shallowTo(target: number): boolean {
    if (this.doc === endOfPostings) return false
    if (target <= this.lastDocOfBlock()) {
      this.shallowBlock = this.block
      return true
    }
    if (this.firstBlock < 0) return false
    const lastDocs = this.arrays.blockLastDoc
    let b = Math.max(this.shallowBlock, this.block + 1)
    while (b < this.blockCount && lastDocs[this.firstBlock + b]! < target) b++
    if (b >= this.blockCount) return false
    this.shallowBlock = b
    return true
  }

  /** Last document of the shallow block. */
  shallowEnd(): number {
    return this.shallowBlock === this.block ? this.lastDocOfBlock() : this.arrays.blockLastDoc[this.firstBlock + this.shallowBlock]!
  }

  /** Best score of any posting in the shallow block. */
  shallowMaxScore(): number {
    if (this.firstBlock < 0) return this.maxScore
    return this.bound(this.arrays.blockMaxTfn[this.firstBlock + this.shallowBlock]!)
  }

  /**
   * Moves the shallow run pointer to the run of the shallow block holding the first posting
   * >= target: the shallow block must hold that posting, as it does for any target inside the
   * window shallowTo set it for. A term without runs has one run per block: the block itself.
   */
  runTo(target: number): void {
    if (!this.byRuns) return
    const runLast = this.arrays.blockRunLastDoc
    const base = (this.firstBlock + this.shallowBlock) * runsPerBlock
    // Targets only grow within a shallow block; the block's last run ends at its last document, >= target.
    let r = this.shallowRunBlock === this.shallowBlock ? this.shallowRun : 0
    while (runLast[base + r]! < target) r++
    this.shallowRun = r
    this.shallowRunBlock = this.shallowBlock
  }

  /** Last document of the shallow run. */
  runEnd(): number {
    return this.byRuns ? this.arrays.blockRunLastDoc[(this.firstBlock + this.shallowBlock) * runsPerBlock + this.shallowRun]! : this.shallowEnd()
  }

  /** Best score of any posting in the shallow run. */
  runMaxScore(): number {
    if (!this.byRuns) return this.shallowMaxScore()
    const a = this.arrays
    const block = this.firstBlock + this.shallowBlock
    return this.bound((a.blockMaxTfn[block]! * a.blockRunMax[block * runsPerBlock + this.shallowRun]!) / 255)
  }

  /**
   * Best score of any posting in [target, end] by the maxima of the runs that can hold one, across
   * blocks (skip data only): moves the shallow pointers to target's block and run; 0 when no
   * posting is >= target. A non-essential term is bounded this way over an essential term's run.
   */
  runsMaxScore(target: number, end: number): number {
    if (!this.shallowTo(target)) return 0
    if (!this.byRuns) return this.blocksMaxScore(end)
    this.runTo(target)
    const a = this.arrays
    let block = this.firstBlock + this.shallowBlock
    const last = this.firstBlock + this.blockCount - 1
    let r = this.shallowRun
    let best = a.blockMaxTfn[block]! * a.blockRunMax[block * runsPerBlock + r]!
    while (a.blockRunLastDoc[block * runsPerBlock + r]! < end) {
      if (++r === runsPerBlock) {
        if (block === last) break
        block++
        r = 0
      }
      const max = a.blockMaxTfn[block]! * a.blockRunMax[block * runsPerBlock + r]!
      if (max > best) best = max
    }
    return this.bound(best / 255)
  }

  /** Best score of any posting from the shallow block's to the block holding end (skip data only). */
  blocksMaxScore(end: number): number {
    if (this.firstBlock < 0) return this.maxScore
    const a = this.arrays
    let b = this.firstBlock + this.shallowBlock
    const last = this.firstBlock + this.blockCount - 1
    let best = a.blockMaxTfn[b]!
    while (b < last && a.blockLastDoc[b]! < end) {
      const max = a.blockMaxTfn[++b]!
      if (max > best) best = max
    }
    return this.bound(best)
  }

  /** The score of a posting of normalised frequency tfn. */
  private bound(tfn: number): number {
    return (this.scale * tfn) / (this.k1 + tfn)
  }

  /**
   * Writes the positions of the current posting in `field` into `out` (grown when short)
   * and returns them with their count. Only fields that keep positions have any.
   */
  positionsIn(field: number, out: Int32Array): { readonly positions: Int32Array; readonly count: number } {
    const spec = this.index.meta.fields
    if (!spec[field]!.positions) return { positions: out, count: 0 }
    const bytes = this.arrays.positions
    // Walk forward from the last posting whose positions were located in this block, or from the
    // start of the posting's run when the run says where its positions begin and the walk would
    // otherwise pass earlier runs (it reads their frequencies, so they had to be decoded: proximity
    // re-ranking spent two thirds of its time there).
    const run = this.at >>> runShift
    if (this.walkIndex > this.at || this.walkIndex >>> runShift < run) {
      const start = this.byRuns && this.index.hasRunPositions ? this.arrays.blockRunPositions[(this.firstBlock + this.block) * runsPerBlock + run]! : noRunPositions
      if (start !== noRunPositions) {
        this.walkIndex = run << runShift
        this.walkOffset = this.positionsStart + start
      } else if (this.walkIndex > this.at) {
        this.walkIndex = 0
        this.walkOffset = this.positionsStart
      }
    }
    // The walk reads the frequencies of the postings it passes: their runs must be decoded.
    for (let r = this.walkIndex >>> runShift; r < this.at >>> runShift; r++) this.ensureRun(r)
    let offset = this.walkOffset
    for (let i = this.walkIndex; i < this.at; i++) offset = skipVarints(bytes, offset, this.positionalCount(i))
    this.walkIndex = this.at
    this.walkOffset = offset
    for (let k = 0; k < field; k++) {
      if (spec[k]!.positions) offset = skipVarints(bytes, offset, this.tfs[this.at * this.fields + k]!)
    }
    const count = this.tfs[this.at * this.fields + field]!
    const target = out.length >= count ? out : new Int32Array(Math.max(count, out.length * 2))
    let p = 0
    for (let i = 0; i < count; i++) {
      let value = 0
      let shift = 0
      let byte: number
      do {
        byte = bytes[offset++]!
        value |= (byte & 0x7f) << shift
        shift += 7
      } while (byte & 0x80)
      p = i === 0 ? value : p + value
      target[i] = p
    }
    return { positions: target, count }
  }

  private positionalCount(i: number): number {
    const spec = this.index.meta.fields
    let n = 0
    for (let k = 0; k < this.fields; k++) if (spec[k]!.positions) n += this.tfs[i * this.fields + k]!
    return n
  }

  /** Last document of the current block, from the skip data (a one-block term's block is decoded whole). */
  private lastDocOfBlock(): number {
    return this.firstBlock < 0 ? this.docs[this.blockLength - 1]! : this.arrays.blockLastDoc[this.firstBlock + this.block]!
  }

  /** Makes posting i of the current block the current one, decoding its run first when needed. */
  private moveTo(i: number): void {
    this.ensureRun(i >>> runShift)
    this.at = i
    this.doc = this.docs[i]!
  }

  /** Makes block b the current one, decoding nothing yet (all of it when it is not read by runs). */
  private enterBlock(b: number): void {
    const a = this.arrays
    if (this.firstBlock < 0) {
      this.blockStart = a.termPostings[this.termId]!
      this.positionsStart = a.termPositions[this.termId]!
      this.blockPrevious = -1
      this.blockLength = this.df
    } else {
      const global = this.firstBlock + b
      this.blockStart = a.blockPostings[global]!
      this.positionsStart = a.blockPositions[global]!
      this.blockPrevious = b === 0 ? -1 : a.blockLastDoc[global - 1]!
      this.blockLength = b + 1 < this.blockCount ? blockSize : this.df - b * blockSize
    }
    this.block = b
    this.at = 0
    this.walkIndex = 0
    this.walkOffset = this.positionsStart
    if (this.byRuns) {
      this.decoded = 0
      return
    }
    const end = this.firstBlock < 0 || b + 1 === this.blockCount ? a.termPostings[this.termId + 1]! : a.blockPostings[this.firstBlock + b + 1]!
    this.decodePostings(this.blockStart, end, this.blockPrevious, 0, this.blockLength, b)
    this.decoded = -1
  }

  /** Decodes run r of the current block unless it is decoded already. */
  private ensureRun(r: number): void {
    if ((this.decoded & (1 << r)) === 0) this.decodeRun(r)
  }

  /** Decodes run r of the current block (read by runs). */
  private decodeRun(r: number): void {
    const a = this.arrays
    const global = this.firstBlock + this.block
    const base = global * runsPerBlock
    const from = r << runShift
    const count = Math.min(runSize, this.blockLength - from)
    const start = this.blockStart + a.blockRunOffset[base + r]!
    const end = from + count < this.blockLength
      ? this.blockStart + a.blockRunOffset[base + r + 1]!
      : this.block + 1 < this.blockCount ? a.blockPostings[global + 1]! : a.termPostings[this.termId + 1]!
    this.decodePostings(start, end, r === 0 ? this.blockPrevious : a.blockRunLastDoc[base + r - 1]!, from, count, this.block)
    this.decoded |= 1 << r
  }

  /** Decodes `count` postings from byte `offset` (which must end at `end`) into docs and tfs from index `from`. */
  private decodePostings(offset: number, end: number, previous: number, from: number, count: number, block: number): void {
    const bytes = this.postings
    const docs = this.docs
    const tfs = this.tfs
    const f = this.fields
    const presenceBits = f - 1
    const presenceMask = (1 << presenceBits) - 1
    tfs.fill(0, from * f, (from + count) * f)
    for (let i = from; i < from + count; i++) {
      // Inline varint decoding: this loop is the engine's hottest. Most gaps and codes are one
      // byte, and most postings are in the first field only: both are the short path.
      let byte = bytes[offset++]!
      let gap = byte & 0x7f
      let shift = 7
      while (byte & 0x80) {
        byte = bytes[offset++]!
        gap |= (byte & 0x7f) << shift
        shift += 7
      }
      previous += gap + 1
      docs[i] = previous
      byte = bytes[offset++]!
      let code = byte & 0x7f
      shift = 7
      while (byte & 0x80) {
        byte = bytes[offset++]!
        code |= (byte & 0x7f) << shift
        shift += 7
      }
      const base = i * f
      tfs[base] = code >>> presenceBits
      if ((code & presenceMask) === 0) continue
      for (let k = 1; k < f; k++) {
        if ((code & (1 << (k - 1))) === 0) continue
        let tf = 0
        shift = 0
        do {
          byte = bytes[offset++]!
          tf |= (byte & 0x7f) << shift
          shift += 7
        } while (byte & 0x80)
        tfs[base + k] = tf
      }
    }
    if (offset !== end) throw new Error(`postings of term ${this.termId} are corrupt (block ${block})`)
  }
}

/**
 * Of a term's `blocks` skip blocks (the first at `first`), the first whose last document is >=
 * doc, or `blocks` when none is: a binary search of the skip data. Also the number of blocks
 * that lie wholly before doc.
 */
export const firstBlockReaching = (a: InvertedIndexArrays, first: number, blocks: number, doc: number): number => {
  let lo = 0
  let hi = blocks
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (a.blockLastDoc[first + mid]! < doc) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Term-at-a-time reading of one term's postings, start to end (a term's postings are one delta
 * stream across its blocks), without a cursor's block and run bookkeeping (TermAtATime.ts):
 * adds the BM25F score of each posting of the term to `scores[doc]` (the same arithmetic as
 * PostingCursor.score, so sums in the same term order are bit for bit the same); `weight` is
 * the query weight times idf (PostingCursor.weight). With `mark`, for every document, setting
 * its bit in `marks` (bit doc & 31 of word doc >>> 5); without, only for documents whose bit is
 * set. Returns the last document read (-1 when there is none).
 */
export const addScores = (
  index: InvertedIndex,
  termId: number,
  weight: number,
  scores: Float64Array,
  marks: Int32Array,
  mark: boolean
): number => {
  const a = index.arrays
  const bytes = a.postings
  const lengths = a.docLengths
  const norms = index.norms
  const f = index.fieldCount
  const k1 = index.meta.k1
  const presenceBits = f - 1
  const presenceMask = (1 << presenceBits) - 1
  const scale = weight * (k1 + 1)
  let offset = a.termPostings[termId]!
  const end = a.termPostings[termId + 1]!
  let doc = -1
  let last = -1
  while (offset < end) {
    let byte = bytes[offset++]!
    let gap = byte & 0x7f
    for (let shift = 7; byte & 0x80; shift += 7) {
      byte = bytes[offset++]!
      gap |= (byte & 0x7f) << shift
    }
    doc += gap + 1
    byte = bytes[offset++]!
    let code = byte & 0x7f
    for (let shift = 7; byte & 0x80; shift += 7) {
      byte = bytes[offset++]!
      code |= (byte & 0x7f) << shift
    }
    last = doc
    if (!mark && (marks[doc >>> 5]! & (1 << (doc & 31))) === 0) {
      for (let present = code & presenceMask; present !== 0; present &= present - 1) while (bytes[offset++]! & 0x80);
      continue
    }
    const base = doc * f
    let tfn = 0
    const first = code >>> presenceBits
    if (first !== 0) {
      const length = lengths[base]!
      tfn = first * (length < tabledLengths ? norms[length]! : index.norm(doc, 0))
    }
    // Most postings are in the first field only.
    if ((code & presenceMask) !== 0) {
      for (let k = 1; k < f; k++) {
        if ((code & (1 << (k - 1))) === 0) continue
        let tf = 0
        let shift = 0
        do {
          byte = bytes[offset++]!
          tf |= (byte & 0x7f) << shift
          shift += 7
        } while (byte & 0x80)
        const length = lengths[base + k]!
        tfn += tf * (length < tabledLengths ? norms[(k << 8) + length]! : index.norm(doc, k))
      }
    }
    scores[doc]! += (scale * tfn) / (k1 + tfn)
    if (mark) marks[doc >>> 5]! |= 1 << (doc & 31)
  }
  if (offset !== end) throw new Error(`postings of term ${termId} are corrupt`)
  return last
}

const skipVarints = (bytes: Uint8Array, offset: number, count: number): number => {
  for (let i = 0; i < count; i++) while (bytes[offset++]! & 0x80);
  return offset
}
