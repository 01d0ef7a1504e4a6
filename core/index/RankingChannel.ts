/**
 * Two threads ranking one query: the shared memory between the thread that answers a query and
 * a helper thread over the same index (HelperThread.ts; an adapter starts it: see
 * adapters/node/rankingHelper.ts). Plain ECMAScript (SharedArrayBuffer and Atomics), so core
 * stays runtime-neutral.
 *
 * A costly query's documents are cut into chunks of about equal postings. The answering thread
 * posts the query (it never wakes the helper: see take) and both threads claim chunks from a
 * shared counter until none is left, each
 * into its own top-k heap; the k-th score either reaches is shared, so both prune as if one
 * thread had seen both heaps. After each chunk the helper publishes its heap and which chunks it
 * holds; the answering thread merges the last one published. A helper slow to wake costs little
 * (the answering thread claims the chunks it does not), and the answering thread never waits
 * long for one that is slow to finish (descheduled, collecting garbage): past a hedge of about
 * two of its own chunks' time it takes what the helper has published and ranks the helper's
 * other chunks itself, as Dean and Barroso's "tail at scale" hedges a slow replica.
 *
 * States: Idle -> Posted (a query waits) -> Working (the helper took it) -> Done (it has no
 * chunk left) -> Idle (read). Before a costly query is posted it may be Preparing (Idle ->
 * Preparing -> Posted): the answering thread is working out the query's primed bound and chunks,
 * and a helper that looks meanwhile stays awake for the post instead of sleeping through it. A
 * posted query the helper has not taken when the answering thread runs out of chunks is
 * withdrawn (Posted -> Idle: one compare-and-swap, which either thread wins). A query given up
 * on is marked in the publication counter (-1), which the helper's next publication then fails
 * on; it goes back to Idle by itself.
 */

const State = { Idle: 0, Posted: 1, Working: 2, Done: 3, Stopped: 4, Preparing: 5 } as const

/** Chunks a query's documents are cut into: enough that the last one leaves little imbalance. */
export const rankingChunks = 8
/** The most words and results a posted query may have (SearchIndex's maxQueryTerms and maxResults; a larger query is ranked on one thread). */
const maxTerms = 48
const maxK = 1000
/** The publication counter of a query the answering thread gave up waiting for. */
const abandoned = -1

// Int32 slots of the control region. Publications alternate between two areas, so the helper
// never writes the one last published while the answering thread may be reading it.
const STATE = 0
const NEXT = 1
const CHUNKS = 2
const K = 3
const CLUSTERED = 4
const STRATEGY = 5
const IMAGES = 6
const TERMS = 7
const FAILED = 8
const PUBLISHED = 9
const AREA_COUNT = 10 // two slots
const AREA_CHUNKS = 12 // two slots: bit c set when the area's heap holds chunk c
const BOUNDS = 14
const TERM_IDS = BOUNDS + rankingChunks + 1
const AREA_DOCS = TERM_IDS + maxTerms // two areas of maxK
const CONTROL_INTS = AREA_DOCS + 2 * maxK

// Float64 slots, after the control region.
const PRIMED = 0
const WEIGHTS = 1
const IDFS = WEIGHTS + maxTerms
const AREA_SCORES = IDFS + maxTerms // two areas of maxK
const FLOATS = AREA_SCORES + 2 * maxK

const floatsAt = Math.ceil((CONTROL_INTS * 4) / 8) * 8
const thresholdAt = floatsAt + FLOATS * 8
const channelBytes = thresholdAt + 8

/** How long after a query the helper looks for the next one every few tens of microseconds (queries come in bursts), before it looks less and less often. */
const helperBurstMs = 20
/** The helper's wait between looks within a burst: short enough that it joins a 56k-passage query in time, long enough to leave the core to others. */
const helperLookMs = 0.05
/**
 * How long a helper that finds a query being prepared looks for its post without sleeping. A
 * timed wait of 50 µs took 54 µs at the median and 95 at the 90th percentile to notice a post
 * (the kernel's timer slack), while priming a costly query at 56k passages takes about 60-90 µs:
 * woken during it, the helper is there when the chunks are handed out.
 */
const helperPrepareSpinMs = 0.5
/**
 * Queries of fewer postings over their words are ranked on one thread: below this the hand-over
 * and the chunks cost about what the second thread saves. Passes alternating thresholds over one
 * index (the search bench's queries, the helper looking every 50 µs): at 56k passages from 16,000
 * postings 1.00-1.04x / 1.04x the queries/s of one thread (AND / OR-like), p99 0.85-1.08 /
 * 0.95-1.08 ms against 1.08-1.14 / 1.22; from 8,000 0.96-1.03x; at 100k from 16,000 1.13x /
 * 1.10x, from 8,000 1.04x / 1.09x, from 128,000 (only a million-passage index's costly queries)
 * 1.02x / 1.00x.
 */
export const sharedRankingPostings = 16_000

/** The least the answering thread waits for the helper's last chunk (then about two of its own chunks' time). */
export const minHedgeMs = 0.05

export type ChunkStrategy = "maxScore" | "termAtATime"

/** A posted query, as the helper reads it. */
export interface PostedQuery {
  readonly images: boolean
  readonly termIds: Int32Array
  readonly weights: Float64Array
  /** Each term's idf as the answering thread scores it (NaN: the helper's own index says). */
  readonly idfs: Float64Array
  readonly k: number
  readonly clustered: boolean
  readonly strategy: ChunkStrategy
  readonly primed: number
  /** Chunk c is documents [bounds[c], bounds[c + 1]). */
  readonly bounds: Int32Array
}

/** The best k (document, score) pairs of a heap, best first. */
export interface RankedPairs {
  readonly docs: Int32Array
  readonly scores: Float64Array
}

/** What the answering thread gets back: the helper's heap (if it published one) and the chunks it must still rank itself. */
export interface HelperOutcome {
  readonly pairs: RankedPairs | undefined
  readonly chunks: ReadonlyArray<number>
}

const nothing: HelperOutcome = { pairs: undefined, chunks: [] }

export class RankingChannel {
  readonly buffer: SharedArrayBuffer
  private readonly ints: Int32Array
  private readonly floats: Float64Array
  private readonly threshold: BigInt64Array
  /** Float64 <-> its bits, for the shared threshold (Atomics work on integers only). */
  private readonly scratch = new Float64Array(1)
  private readonly scratchBits = new BigInt64Array(this.scratch.buffer)
  /** Chunks this thread ranked in the query under way (the answering thread's side). */
  private readonly mine = new Uint8Array(rankingChunks)
  private broken = false
  /** Queries whose heap the helper added to, and queries given up waiting on (the answering thread's counts). */
  helped = 0
  hedged = 0

  /** Queries of fewer postings are not shared (sharedRankingPostings by default). */
  readonly minPostings: number

  /** A new channel, or (on the helper's side) the one whose buffer the answering thread sent. */
  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(channelBytes), options: { readonly minPostings?: number } = {}) {
    if (buffer.byteLength < channelBytes) throw new Error(`ranking channel: ${buffer.byteLength} bytes, need ${channelBytes}`)
    this.buffer = buffer
    this.minPostings = options.minPostings ?? sharedRankingPostings
    this.ints = new Int32Array(buffer, 0, CONTROL_INTS)
    this.floats = new Float64Array(buffer, floatsAt, FLOATS)
    this.threshold = new BigInt64Array(buffer, thresholdAt, 1)
  }

  /** False once the helper failed or stopped: queries are ranked on one thread. */
  get usable(): boolean {
    return !this.failedUnseen() && Atomics.load(this.ints, STATE) !== State.Stopped
  }

  // ---- the answering thread ---------------------------------------------------------------

  /**
   * A costly query will be posted in a moment (its primed bound and chunks are being worked out):
   * a helper that looks meanwhile waits for it awake. `unprepare` when none is posted after all.
   */
  prepare(): void {
    if (this.failedUnseen()) return
    Atomics.compareExchange(this.ints, STATE, State.Done, State.Idle)
    Atomics.compareExchange(this.ints, STATE, State.Idle, State.Preparing)
  }

  unprepare(): void {
    Atomics.compareExchange(this.ints, STATE, State.Preparing, State.Idle)
  }

  /** Posts a query for the helper; false when it cannot take one (busy, failed or stopped). */
  post(
    query: Omit<PostedQuery, "termIds" | "weights" | "idfs">,
    terms: ReadonlyArray<{ readonly termId: number; readonly weight: number; readonly idf?: number | undefined }>
  ): boolean {
    const ints = this.ints
    if (this.failedUnseen() || terms.length > maxTerms || query.k > maxK || query.bounds.length > rankingChunks + 1) return false
    // Done here is left from a query given up on just as the helper finished it.
    Atomics.compareExchange(ints, STATE, State.Done, State.Idle)
    const state = Atomics.load(ints, STATE)
    if (state !== State.Idle && state !== State.Preparing) return false
    ints[NEXT] = 0
    ints[CHUNKS] = query.bounds.length - 1
    ints[K] = query.k
    ints[CLUSTERED] = query.clustered ? 1 : 0
    ints[STRATEGY] = query.strategy === "termAtATime" ? 1 : 0
    ints[IMAGES] = query.images ? 1 : 0
    ints[TERMS] = terms.length
    ints[FAILED] = 0
    ints[PUBLISHED] = 0
    ints.set(query.bounds, BOUNDS)
    for (let i = 0; i < terms.length; i++) {
      ints[TERM_IDS + i] = terms[i]!.termId
      this.floats[WEIGHTS + i] = terms[i]!.weight
      this.floats[IDFS + i] = terms[i]!.idf ?? Number.NaN
    }
    this.floats[PRIMED] = query.primed
    Atomics.store(this.threshold, 0, this.bitsOf(query.primed))
    this.mine.fill(0)
    // The store publishes everything written before it to the helper, which finds a posted
    // query by looking (take).
    Atomics.store(ints, STATE, State.Posted)
    return true
  }

  /** The answering thread's next chunk, or -1 when none is left. */
  claimMine(): number {
    const c = this.claim()
    if (c >= 0) this.mine[c] = 1
    return c
  }

  /**
   * Once the answering thread has no chunk left: the helper's heap, and the chunks this thread
   * must rank itself. Waits up to `hedgeMs` for the helper's last chunk; withdraws the query when
   * the helper never took it.
   */
  finish(hedgeMs: number): HelperOutcome {
    const ints = this.ints
    if (Atomics.compareExchange(ints, STATE, State.Posted, State.Idle) === State.Posted) return nothing
    // Polled, not slept on: the wait is short, and a thread woken by another took up to
    // milliseconds to run again when the machine was busy.
    const deadline = performance.now() + Math.max(minHedgeMs, hedgeMs)
    for (let polls = 1; Atomics.load(ints, STATE) === State.Working; polls++) {
      if ((polls & 255) === 0 && performance.now() >= deadline) break
    }
    if (Atomics.load(ints, STATE) === State.Done) {
      if (ints[FAILED] !== 0) {
        // The helper threw: its chunks are ranked here (and meet the error here if it is the index's).
        this.broken = true
        Atomics.store(ints, STATE, State.Idle)
        return { pairs: undefined, chunks: this.theirs(0) }
      }
      const outcome = { pairs: this.published(ints[PUBLISHED]!), chunks: [] }
      Atomics.store(ints, STATE, State.Idle)
      if (outcome.pairs !== undefined) this.helped++
      return outcome
    }
    // Given up on: whatever it published stands; its other chunks are ranked here.
    this.hedged++
    const count = Atomics.exchange(ints, PUBLISHED, abandoned)
    const pairs = this.published(count)
    if (pairs !== undefined) this.helped++
    return { pairs, chunks: this.theirs(count > 0 ? ints[AREA_CHUNKS + (count & 1)]! : 0) }
  }

  /**
   * True once the helper has failed, including on a query given up on before it said so (its
   * `done` then leaves the channel Idle, or Done, with FAILED set, and no `finish` reads it):
   * that report would otherwise be cleared by the next post, and the helper asked again.
   */
  private failedUnseen(): boolean {
    if (!this.broken && Atomics.load(this.ints, FAILED) !== 0) this.broken = true
    return this.broken
  }

  /** Tells the helper to end its loop; the channel is not used again. */
  stop(): void {
    this.broken = true
    Atomics.store(this.ints, STATE, State.Stopped)
    Atomics.notify(this.ints, STATE)
  }

  /** The helper's chunks (every chunk this thread did not rank) not in the mask `held`. */
  private theirs(held: number): Array<number> {
    const chunks: Array<number> = []
    for (let c = 0; c < this.ints[CHUNKS]!; c++) if (this.mine[c] === 0 && (held & (1 << c)) === 0) chunks.push(c)
    return chunks
  }

  /** The heap of publication `count` (none before the first). */
  private published(count: number): RankedPairs | undefined {
    if (count <= 0) return undefined
    const area = count & 1
    const n = this.ints[AREA_COUNT + area]!
    const docs = AREA_DOCS + area * maxK
    const scores = AREA_SCORES + area * maxK
    return { docs: this.ints.slice(docs, docs + n), scores: this.floats.slice(scores, scores + n) }
  }

  // ---- both threads -----------------------------------------------------------------------

  /** Chunk c's first document and the first after it. */
  chunkFrom(c: number): number {
    return this.ints[BOUNDS + c]!
  }

  chunkTo(c: number): number {
    return this.ints[BOUNDS + c + 1]!
  }

  /** The highest k-th score (lowered a little) either thread has reached, or the primed bound. */
  sharedThreshold(): number {
    this.scratchBits[0] = Atomics.load(this.threshold, 0)
    return this.scratch[0]!
  }

  /**
   * Offers a k-th score to the other thread. Lowered by a part in a billion first: a document of
   * the other thread scoring exactly this may still rank above it (ties go to the smaller id).
   * Scores are positive, and positive doubles order as their bits do, so the maximum is kept
   * with an integer compare-and-swap.
   */
  raiseThreshold(kth: number): void {
    const bits = this.bitsOf(kth * (1 - 1e-9))
    for (;;) {
      const current = Atomics.load(this.threshold, 0)
      if (current >= bits || Atomics.compareExchange(this.threshold, 0, current, bits) === current) return
    }
  }

  private claim(): number {
    const c = Atomics.add(this.ints, NEXT, 1)
    return c < this.ints[CHUNKS]! ? c : -1
  }

  private bitsOf(x: number): bigint {
    this.scratch[0] = x
    return this.scratchBits[0]!
  }

  // ---- the helper thread ------------------------------------------------------------------

  /**
   * Waits until a query is posted and takes it; undefined once the channel is stopped. For
   * `helperBurstMs` after the last query it looks every `helperLookMs` (a timed Atomics.wait), then
   * less and less often (up to every 50 ms after half a second idle); the answering thread ranks
   * alone the chunks it has not claimed meanwhile. Why timed waits, and no wake-up: measured
   * at 56k passages, a helper polling without pause, or woken by Atomics.notify when a query
   * came while it slept, left the answering thread stalled 2.4-4.7 ms a few times in 500
   * queries (the woken helper ran on the answering thread's core; a busy helper left V8's
   * compiler and collector threads only the answering thread's core to take); with these waits
   * the stalls were gone and a million-passage index ranked as fast.
   */
  take(): PostedQuery | undefined {
    const ints = this.ints
    const idleSince = performance.now()
    let preparingSince = -1
    for (;;) {
      const state = Atomics.load(ints, STATE)
      if (state === State.Stopped) return undefined
      if (state === State.Preparing) {
        // A post is coming: look again at once, for a while (a preparation never posted must not keep it spinning).
        const now = performance.now()
        if (preparingSince < 0) preparingSince = now
        if (now - preparingSince < helperPrepareSpinMs) continue
      } else preparingSince = -1
      if (state !== State.Posted) {
        const idle = performance.now() - idleSince
        Atomics.wait(ints, STATE, state, idle < helperBurstMs ? helperLookMs : Math.min(50, Math.max(1, idle / 10)))
        continue
      }
      if (Atomics.compareExchange(ints, STATE, State.Posted, State.Working) !== State.Posted) continue
      const terms = ints[TERMS]!
      return {
        images: ints[IMAGES] === 1,
        termIds: ints.slice(TERM_IDS, TERM_IDS + terms),
        weights: this.floats.slice(WEIGHTS, WEIGHTS + terms),
        idfs: this.floats.slice(IDFS, IDFS + terms),
        k: ints[K]!,
        clustered: ints[CLUSTERED] === 1,
        strategy: ints[STRATEGY] === 1 ? "termAtATime" : "maxScore",
        primed: this.floats[PRIMED]!,
        bounds: ints.slice(BOUNDS, BOUNDS + ints[CHUNKS]! + 1)
      }
    }
  }

  /** The helper's next chunk, or -1 when none is left. */
  claimTheirs(): number {
    return this.claim()
  }

  /**
   * Publishes the helper's heap, which holds the chunks in the mask `held`; false when the
   * answering thread gave the query up (the helper then stops claiming chunks).
   */
  publish(pairs: RankedPairs, held: number): boolean {
    const ints = this.ints
    const count = Atomics.load(ints, PUBLISHED)
    if (count === abandoned) return false
    // The area not last published: the answering thread may be reading that one.
    const area = (count + 1) & 1
    ints[AREA_COUNT + area] = pairs.docs.length
    ints[AREA_CHUNKS + area] = held
    ints.set(pairs.docs, AREA_DOCS + area * maxK)
    this.floats.set(pairs.scores, AREA_SCORES + area * maxK)
    return Atomics.compareExchange(ints, PUBLISHED, count, count + 1) === count
  }

  /** The helper is through with the query it took (`failed`: it threw); wakes the answering thread. */
  done(failed: boolean): void {
    const ints = this.ints
    if (failed) ints[FAILED] = 1
    // Given up on, nobody waits: ready for the next query at once. A stopped channel stays stopped.
    const next = Atomics.load(ints, PUBLISHED) === abandoned ? State.Idle : State.Done
    Atomics.compareExchange(ints, STATE, State.Working, next)
  }
}
