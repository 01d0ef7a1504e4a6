/**
 * Costly queries ranked on two threads (core/index/RankingChannel.ts, with the Node adapter's
 * helper thread, adapters/node/rankingHelper.ts, a real worker over the same shared memory)
 * give the answers of one thread: every strategy, near-duplicates collapsed or not, several k,
 * snippets; and a helper that fails, never answers or is stopped leaves the answers as they were.
 */
import { once } from "node:events"
import { Worker } from "node:worker_threads"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startRankingHelper } from "../../adapters/node/rankingHelper.ts"
import { rankingArraysOf } from "../../core/index/HelperThread.ts"
import { RankingChannel, sharedRankingPostings } from "../../core/index/RankingChannel.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import { decodeSnapshot, encodeSnapshot } from "../../core/index/Snapshot.ts"
import { warmUp } from "../../core/index/WarmUp.ts"
import { buildIndex, pagesWithNearDuplicates, rankingChannelOf, seeded } from "./support.ts"

const random = seeded(29)
const common = Array.from({ length: 16 }, (_, i) => `w${i}`)
const rare = Array.from({ length: 400 }, (_, i) => `r${i}`)
const pick = () => (random() < 0.9 ? common[Math.floor(random() * random() * common.length)]! : rare[Math.floor(random() * rare.length)]!)
const paragraph = () => Array.from({ length: 10 + Math.floor(random() * 30) }, pick).join(" ")
// 12,000 pages; every tenth repeats the one before (near-duplicates). Queries of common words here
// have tens of thousands of postings: the channels share them from `minPostings` on (the default
// is lower: the test of it makes a channel of its own).
const minPostings = 16_000
const bytes = encodeSnapshot(buildIndex(pagesWithNearDuplicates(12_000, random, pick, paragraph)))
/** The same snapshot decoded twice: from ordinary memory (one thread) and from shared memory (two). */
const one = decodeSnapshot(bytes)
const inShared = () => {
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.length))
  shared.set(bytes)
  return decodeSnapshot(shared)
}
const query = () => Array.from({ length: 2 + Math.floor(random() * 4) }, () => common[Math.floor(random() * common.length)]!).join(" ")
const postingsOf = (index: SearchIndex, words: string) =>
  [...new Set(words.split(" "))].reduce((sum, w) => sum + index.parts.web.arrays.termDf[index.parts.web.lookup(w)]!, 0)

describe("ranking shared with a helper thread", () => {
  const two = inShared()
  const helper = startRankingHelper(two, { minPostings })!
  const channel = () => rankingChannelOf(two)!

  beforeAll(async () => {
    await once(helper.worker, "online")
  })
  afterAll(() => helper.stop())

  it("starts only for an index in shared memory", () => {
    expect(startRankingHelper(one)).toBeUndefined()
    expect(helper).toBeDefined()
  })

  it("has queries costly enough to share", () => {
    expect(postingsOf(one, "w0 w1 w2")).toBeGreaterThan(minPostings)
  })

  it("shares queries from the default's postings on, and none below", async () => {
    // The least common of the common words, as many as stay under the default together.
    const cheap: Array<string> = []
    let postings = 0
    for (const word of [...common].reverse()) {
      if (postings + postingsOf(one, word) >= sharedRankingPostings) break
      cheap.push(word)
      postings += postingsOf(one, word)
    }
    expect(cheap.length).toBeGreaterThanOrEqual(2)
    expect(postingsOf(one, "w0 w1")).toBeGreaterThanOrEqual(sharedRankingPostings)
    await withHelper({}, (index, channel) => {
      for (let q = 0; q < 100; q++) expect(index.rank(cheap.join(" "), 15)).toEqual(one.rank(cheap.join(" "), 15))
      expect(channel.helped + channel.hedged).toBe(0)
      const trying = patience()
      for (let q = 0; trying(q) && (channel.helped + channel.hedged === 0 || q < 20); q++) expect(index.rank("w0 w1", 15)).toEqual(one.rank("w0 w1", 15))
      expect(channel.helped + channel.hedged).toBeGreaterThan(0)
    })
  })

  for (const strategy of ["auto", "maxScore", "termAtATime"] as const) {
    for (const k of [1, 15, 100]) {
      it(`ranks as one thread does: ${strategy}, k = ${k}, near-duplicates collapsed and not`, () => {
        const helped = channel().helped
        // Until the helper has taken part (it may be in a longer wait between bursts), and at least 60.
        const trying = patience()
        for (let q = 0; trying(q) && (channel().helped === helped || q < 60); q++) {
          const words = query()
          for (const collapse of [true, false]) {
            const expected = one.rank(words, k, { collapse, strategy })
            expect(expected.length, words).toBeGreaterThan(0)
            expect(two.rank(words, k, { collapse, strategy }), words).toEqual(expected)
          }
        }
        // The helper ranked part of some of them: the comparison above is not one thread against itself.
        expect(channel().helped).toBeGreaterThan(helped)
      })
    }
  }

  it("answers searches with the same pages, snippets and order", () => {
    for (let q = 0; q < 100; q++) {
      const words = query()
      expect(two.search(words, 10), words).toEqual(one.search(words, 10))
    }
  })

  it("takes part in a burst of costly queries with its default wait between looks", async () => {
    await withHelper({ minPostings }, (index, channel) => {
      const trying = patience()
      for (let q = 0; trying(q) && (channel.helped === 0 || q < 20); q++) {
        const words = query()
        expect(index.rank(words, 100), words).toEqual(one.rank(words, 100))
      }
      expect(channel.helped).toBeGreaterThan(0)
    })
  })

  it("takes part in the warm-up queries, so its thread is warmed too", async () => {
    // Every query shared, however cheap: the warm-up's queries of title words are the test's subject.
    await withHelper({ minPostings: 1 }, (index, channel) => {
      const trying = patience(20)
      for (let round = 0; trying(round) && channel.helped === 0; round++) warmUp(index, { maxQueries: 100, maxMs: 60_000 })
      expect(channel.helped).toBeGreaterThan(0)
    })
  })

  it("answers cheap queries and queries with phrases, exclusions and site: filters on one thread, the same", () => {
    for (const words of ["r1 r2", "\"w0 w1\" w2", "w0 w1 -w2", "w0 w1 site:t.example", "w3 +w4 w5"]) {
      expect(two.search(words, 10), words).toEqual(one.search(words, 10))
    }
  })
})

/**
 * How long a test waits for the helper to take part: `tries` queries, and then on for up to 10 s
 * of them, as the helper's thread may get no time slice for a while when the whole suite runs
 * on the machine's cores at once.
 */
const patience = (tries = 400) => {
  const until = performance.now() + 10_000
  return (q: number) => q < tries || performance.now() < until
}

/** A shared index with a helper thread of its own (the adapter's), stopped after `check` whatever it said. */
const withHelper = async (options: { readonly minPostings?: number }, check: (index: SearchIndex, channel: RankingChannel) => void) => {
  const index = inShared()
  const helper = startRankingHelper(index, options)!
  try {
    await once(helper.worker, "online")
    check(index, rankingChannelOf(index)!)
  } finally {
    helper.stop()
  }
}

/** A shared index with a faulty helper thread (faultyRankingHelper.ts) on a channel of its own. */
const withFaultyHelper = async (mode: "fail" | "stall" | "slow", check: (index: SearchIndex, channel: RankingChannel) => void) => {
  const index = inShared()
  const channel = new RankingChannel(undefined, { minPostings })
  const arrays = rankingArraysOf(index)
  const worker = new Worker(new URL("./faultyRankingHelper.ts", import.meta.url), { workerData: { buffer: channel.buffer, mode, arrays } })
  try {
    await once(worker, "online")
    index.shareRanking(channel)
    check(index, channel)
  } finally {
    await worker.terminate()
  }
}

describe("a helper thread that goes wrong", () => {
  for (const mode of ["fail", "stall"] as const) {
    it(`leaves the answers as they were when it ${mode === "fail" ? "fails a query (and is not asked again)" : "never answers (it is waited for no longer than a hedge)"}`, async () => {
      await withFaultyHelper(mode, (index, channel) => {
        // Until the helper has taken a query (it may still be starting: then each is withdrawn), and a few after.
        const settled = () => (mode === "fail" ? !channel.usable : channel.hedged > 0)
        const trying = patience()
        for (let q = 0; trying(q) && (!settled() || q < 20); q++) {
          const words = query()
          expect(index.rank(words, 15), words).toEqual(one.rank(words, 15))
        }
        expect(settled()).toBe(true)
        expect(channel.helped).toBe(0)
      })
    })
  }

  it("leaves the answers as they were when it is slow: what it published is merged and its other chunks ranked here", async () => {
    await withFaultyHelper("slow", (index, channel) => {
      const trying = patience()
      for (let q = 0; trying(q) && (channel.hedged === 0 || channel.helped === 0 || q < 20); q++) {
        const words = query()
        for (const k of [1, 15, 100]) expect(index.rank(words, k), words).toEqual(one.rank(words, k))
      }
      // Given up on after some of its chunks: both heaps merged, the rest ranked here.
      expect(channel.hedged).toBeGreaterThan(0)
      expect(channel.helped).toBeGreaterThan(0)
    })
  })

  it("leaves the answers as they were once stopped", async () => {
    const index = inShared()
    const helper = startRankingHelper(index, { minPostings })!
    await once(helper.worker, "online")
    helper.stop()
    await once(helper.worker, "exit")
    for (let q = 0; q < 20; q++) {
      const words = query()
      expect(index.rank(words, 15), words).toEqual(one.rank(words, 15))
    }
  })
})

describe("a costly query being prepared (the helper kept awake for its post)", () => {
  const posted = { images: false, k: 10, clustered: false, strategy: "maxScore" as const, primed: 0, bounds: Int32Array.of(0, 50, 100) }
  const terms = [{ termId: 3, weight: 1 }, { termId: 5, weight: 2 }]
  /** The helper's part, on this thread: take the posted query, say it is through. */
  const helperTakes = (helperSide: RankingChannel) => {
    const taken = helperSide.take()
    helperSide.done(false)
    return taken
  }

  it("is posted and taken as any query; a preparation withdrawn or never posted leaves the channel to the next one", () => {
    const answering = new RankingChannel()
    const helperSide = new RankingChannel(answering.buffer)
    answering.prepare()
    expect(answering.post(posted, terms)).toBe(true)
    const taken = helperTakes(helperSide)
    expect(taken?.bounds).toEqual(posted.bounds)
    expect(Array.from(taken!.termIds)).toEqual([3, 5])
    expect(answering.finish(1).pairs).toBeUndefined()
    // Withdrawn: the next query is posted as usual.
    answering.prepare()
    answering.unprepare()
    expect(answering.post(posted, terms)).toBe(true)
    expect(helperTakes(helperSide)?.k).toBe(10)
    answering.finish(1)
    // Never posted (a query that failed while priming): the next preparation and post go through.
    answering.prepare()
    answering.prepare()
    expect(answering.post({ ...posted, k: 20 }, terms)).toBe(true)
    expect(helperTakes(helperSide)?.k).toBe(20)
    answering.finish(1)
    // A stopped channel is not prepared, and takes nothing.
    answering.stop()
    answering.prepare()
    expect(answering.post(posted, terms)).toBe(false)
    expect(helperSide.take()).toBeUndefined()
  })

  it("is not posted again once the helper failed, even on a query given up on before it said so", () => {
    for (const leftAs of ["given up on first", "left unread"] as const) {
      const answering = new RankingChannel()
      const helperSide = new RankingChannel(answering.buffer)
      answering.prepare()
      expect(answering.post(posted, terms)).toBe(true)
      expect(helperSide.take()?.k).toBe(10)
      if (leftAs === "given up on first") {
        // The helper is descheduled past the hedge: the answering thread ranks its chunks, then it throws.
        expect(answering.finish(0).chunks.length).toBeGreaterThan(0)
        helperSide.done(true)
      } else {
        // It throws just as it is given up on: its report is left Done, and no finish reads it.
        helperSide.done(true)
      }
      expect(answering.usable, leftAs).toBe(false)
      answering.prepare()
      expect(answering.post(posted, terms), leftAs).toBe(false)
    }
  })

  it("does not keep a real helper spinning when nothing is posted, and the helper takes part afterwards", async () => {
    const index = inShared()
    const helper = startRankingHelper(index, { minPostings })!
    const helpedIn = (channel: RankingChannel) => {
      const from = channel.helped
      const trying = patience()
      for (let q = 0; trying(q) && (channel.helped === from || q < 20); q++) {
        const words = query()
        expect(index.rank(words, 15), words).toEqual(one.rank(words, 15))
      }
      return channel.helped - from
    }
    try {
      await once(helper.worker, "online")
      const channel = rankingChannelOf(index)!
      // Up and ranking (its modules loaded: that work must not count below).
      expect(helpedIn(channel)).toBeGreaterThan(0)
      channel.prepare()
      // A helper spinning on it would burn a core for the whole wait; it looks for half a millisecond, then sleeps.
      const before = process.cpuUsage()
      await new Promise((resolve) => setTimeout(resolve, 400))
      const used = process.cpuUsage(before)
      expect((used.user + used.system) / 1000).toBeLessThan(200)
      channel.unprepare()
      expect(helpedIn(channel)).toBeGreaterThan(0)
    } finally {
      helper.stop()
    }
  })
})
