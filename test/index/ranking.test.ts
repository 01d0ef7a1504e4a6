import { describe, expect, it } from "vitest"
import { blockSize, endOfPostings, PostingCursor } from "../../core/index/InvertedIndex.ts"
import { mergeOccurrences, rankTopK, type RankStrategy } from "../../core/index/Ranker.ts"
import { prefersTermAtATime, termAtATimePlan } from "../../core/index/TermAtATime.ts"
import type { SearchIndex } from "../../core/index/SearchIndex.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import type { EngineOptions } from "../../core/index/IndexBuilder.ts"
import { rankWithDeadline } from "./rankingDeadline.ts"
import { buildIndex, links, pagesWithNearDuplicates, plainBm25, rankKey as key, seeded } from "./support.ts"

const ranked = (index: SearchIndex, query: string, limit = 10) =>
  index.rank(query, limit, { collapse: false }).map((r) => [r.url.replace("https://t.example/", ""), Number(r.score.toFixed(6))])

describe("BM25 on hand-checked cases (k1 0.9, b 0.4)", () => {
  // Lengths 3, 2, 4: average 3. idf = ln(1 + (N - df + 0.5) / (df + 0.5)).
  const index = buildIndex([
    { url: "https://t.example/a", title: "", text: "apple banana apple" },
    { url: "https://t.example/b", title: "", text: "banana cherry" },
    { url: "https://t.example/c", title: "", text: "cherry cherry cherry date" }
  ], plainBm25)

  it("scores one term", () => {
    // idf(apple) = ln(1 + 2.5/1.5) = 0.980829; a: 1.9*2 / (2 + 0.9*(0.6 + 0.4*3/3)) = 3.8/2.9
    expect(ranked(index, "apple")).toEqual([["a", 1.285225]])
  })

  it("sums terms and ranks by the sum", () => {
    // idf(banana) = idf(cherry) = ln(1.6) = 0.4700036
    // b: 2 * 0.4700036 * 1.9/(1 + 0.9*(0.6 + 0.4*2/3)) = 1.003379
    // c: 0.4700036 * 1.9*3/(3 + 0.9*(0.6 + 0.4*4/3)) = 0.666423
    // a: 0.4700036 * 1.9/(1 + 0.9) = 0.470004
    expect(ranked(index, "banana cherry")).toEqual([["b", 1.003379], ["c", 0.666423], ["a", 0.470004]])
  })

  it("weights a repeated query word by its count", () => {
    expect(ranked(index, "apple apple")[0]![1]).toBeCloseTo(2 * 1.285225, 5)
  })

  it("returns nothing for words no document has, or for stop words only", () => {
    expect(ranked(index, "zebra")).toEqual([])
    expect(ranked(index, "the of and")).toEqual([])
  })
})

describe("ranking behaviour", () => {
  it("ranks a title match above the same word deep in a body (BM25F)", () => {
    const filler = (seed: string) => Array.from({ length: 40 }, (_, i) => `${seed}${i}`).join(" ")
    const index = buildIndex([
      { url: "https://t.example/body", title: "Other things", text: `${filler("a")} kubernetes ${filler("b")}` },
      { url: "https://t.example/title", title: "Kubernetes", text: `${filler("c")} kubernetes ${filler("d")}` }
    ])
    expect(links(index, "kubernetes")).toEqual(["https://t.example/title", "https://t.example/body"])
  })

  it("ranks documents where the query words stand together first (proximity)", () => {
    const filler = "alpha beta gamma delta epsilon zeta eta theta iota kappa "
    const index = buildIndex([
      { url: "https://t.example/apart", title: "", text: `quantum ${filler.repeat(3)} computing` },
      { url: "https://t.example/together", title: "", text: `${filler} quantum computing ${filler.repeat(2)}` }
    ])
    expect(links(index, "quantum computing")).toEqual(["https://t.example/together", "https://t.example/apart"])
  })

  it("breaks ties by URL, whatever order the documents were added in", () => {
    const docs = ["https://t.example/c", "https://t.example/a", "https://t.example/b"].map((url) => ({ url, title: "", text: "same words here" }))
    const forward = buildIndex(docs, { nearDuplicateBits: -1 })
    const backward = buildIndex([...docs].reverse(), { nearDuplicateBits: -1 })
    expect(links(forward, "words")).toEqual(["https://t.example/a", "https://t.example/b", "https://t.example/c"])
    expect(links(backward, "words")).toEqual(links(forward, "words"))
  })

  it("finds technical tokens the way people type them", () => {
    const index = buildIndex([
      { url: "https://t.example/cpp", title: "C++ templates", text: "Templates in C++ are resolved at compile time." },
      { url: "https://t.example/c", title: "C pointers", text: "Pointers in C hold addresses." },
      { url: "https://t.example/node", title: "Node.js streams", text: "Streams in node.js process data." },
      { url: "https://t.example/http2", title: "HTTP/2", text: "HTTP/2 multiplexes streams over one connection." },
      { url: "https://t.example/utf8", title: "Encodings", text: "UTF-8 encodes every code point." }
    ])
    expect(links(index, "C++")[0]).toBe("https://t.example/cpp")
    expect(links(index, "c++")).not.toContain("https://t.example/c")
    expect(links(index, "node.js")).toEqual(["https://t.example/node"])
    expect(links(index, "HTTP/2")).toEqual(["https://t.example/http2"])
    expect(links(index, "utf-8")).toEqual(["https://t.example/utf8"])
    // Parts still match when typed alone.
    expect(links(index, "node")).toEqual(["https://t.example/node"])
  })
})

/** Top k by scoring every posting of every query term (no pruning), ties to the smaller id. */
const exhaustiveTopK = (index: SearchIndex, query: string, k: number, keep: (doc: number) => boolean = () => true) => {
  const web = index.parts.web
  const counts = new Map<number, number>()
  for (const term of query.split(" ")) {
    const id = web.lookup(term)
    if (id >= 0) counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  const scores = new Map<number, number>()
  for (const [id, weight] of counts) {
    const cursor = new PostingCursor(web, id, weight)
    for (; cursor.doc !== endOfPostings; cursor.next()) {
      if (keep(cursor.doc)) scores.set(cursor.doc, (scores.get(cursor.doc) ?? 0) + cursor.score())
    }
  }
  return [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k)
}

const strategies: ReadonlyArray<RankStrategy> = ["auto", "maxScore", "termAtATime"]

/**
 * Same documents with the same scores as exhaustive scoring, among equal scores ascending ids,
 * whichever ranking strategy runs; term at a time's scores are MaxScore's bit for bit.
 */
const expectExact = (index: SearchIndex, query: string, k: number) => {
  const expected = exhaustiveTopK(index, query, k).map(([doc, score]) => key(score, doc))
  const byStrategy = strategies.map((strategy) => index.rank(query, k, { collapse: false, strategy }))
  byStrategy.forEach((actual, i) => expect(actual.map((r) => key(r.score, r.doc)), `${query} (${strategies[i]})`).toEqual(expected))
  expect(byStrategy[2]!.map((r) => r.score), query).toEqual(byStrategy[1]!.map((r) => r.score))
}

/** Far above the 2-3 s these checks take (a worker start and an index build included): a query past it never returns. */
const RANK_DEADLINE_MS = 60_000

/**
 * The same check with the ranking done in a worker thread that is stopped at a deadline (the
 * exhaustive reference, a plain loop over the postings, runs here): a query on which MaxScore
 * loops forever fails the test, named, instead of hanging it.
 */
const expectExactInWorker = async (
  docs: ReadonlyArray<IndexDocument>,
  options: EngineOptions,
  index: SearchIndex,
  queries: ReadonlyArray<string>,
  k: number
) => {
  const ranked = await rankWithDeadline({ docs, options, queries, k }, RANK_DEADLINE_MS)
  queries.forEach((query, i) => expect(ranked[i], query).toEqual(exhaustiveTopK(index, query, k).map(([doc, score]) => key(score, doc))))
}

const pruned: EngineOptions = { proximity: 0, nearDuplicateBits: -1 }

/**
 * MaxScore with block-max bounds must return exactly what exhaustive scoring returns. The
 * reference here walks every posting of every query term with the same cursors, so the only
 * difference left is the pruning.
 */
describe("top-k pruning is exact", () => {
  const random = seeded(7)
  const vocabulary = Array.from({ length: 400 }, (_, i) => `t${i}`)
  // Zipf-like: low-numbered terms are common, so their postings span many skip blocks.
  const word = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(Math.exp(random() * Math.log(vocabulary.length + 1)) - 1))]!
  const text = (n: number) => Array.from({ length: n }, word).join(" ")
  const hosts = ["t.example", "a.t.example", "other.example", "t.example.org"]
  const docs = Array.from({ length: 3000 }, (_, i) => ({
    url: `https://${hosts[i % 4]}/${String(i).padStart(5, "0")}`,
    title: text(1 + Math.floor(random() * 4)),
    text: text(5 + Math.floor(random() * 120))
  }))
  const index = buildIndex(docs, pruned)
  const web = index.parts.web

  it("has multi-block posting lists to prune", () => {
    expect(web.arrays.blockLastDoc.length).toBeGreaterThan(50)
  })

  it("matches exhaustive scoring restricted to the site for site: queries", () => {
    const host = (doc: number) => new URL(index.parts.pages.get(doc, 0)).hostname
    for (let q = 0; q < 100; q++) {
      const words = Array.from({ length: 1 + Math.floor(random() * 5) }, word).join(" ")
      const expected = exhaustiveTopK(index, words, 10, (doc) => host(doc) === "t.example" || host(doc).endsWith(".t.example"))
      const actual = index.rank(`${words} site:t.example`, 10, { collapse: false })
      expect(actual.map((r) => key(r.score, r.doc)), words).toEqual(expected.map(([doc, score]) => key(score, doc)))
    }
  })

  for (const k of [1, 10, 100]) {
    it(`matches exhaustive scoring for 300 random queries, k = ${k}`, () => {
      for (let q = 0; q < 300; q++) {
        expectExact(index, Array.from({ length: 1 + Math.floor(random() * 6) }, word).join(" "), k)
      }
    })
  }

  // Long queries (a pasted sentence): windows span several blocks of terms that were not essential
  // before, some of whose postings end inside a window (a cursor left with no posting there once
  // looped forever, so these rank in a worker with a deadline).
  for (const k of [1, 10]) {
    it(`matches exhaustive scoring for 200 queries of 8-20 words, k = ${k}`, async () => {
      const queries = Array.from({ length: 200 }, () => Array.from({ length: 8 + Math.floor(random() * 13) }, word).join(" "))
      await expectExactInWorker(docs, pruned, index, queries, k)
    }, RANK_DEADLINE_MS + 10_000)
  }
})

/**
 * A rare word with common ones ("vtklsdynareader class reference"): the strongest term has fewer
 * documents than k, so the threshold MaxScore starts from also reads the next terms' best blocks,
 * where a document may be met twice (it must count once).
 */
describe("top-k pruning is exact for queries led by a rare word", () => {
  const random = seeded(13)
  const common = Array.from({ length: 40 }, (_, i) => `c${i}`)
  const rare = Array.from({ length: 40 }, (_, i) => `r${i}`)
  const pick = () => common[Math.floor(random() * random() * common.length)]!
  const docs = Array.from({ length: 2500 }, (_, i) => ({
    url: `https://t.example/${String(i).padStart(5, "0")}`,
    title: Array.from({ length: 1 + Math.floor(random() * 3) }, pick).join(" "),
    text: Array.from({ length: 5 + Math.floor(random() * 60) }, pick).join(" ")
  }))
  // Each rare word in 1 to 8 documents, among the common words.
  for (const word of rare) {
    for (let n = 1 + Math.floor(random() * 8); n > 0; n--) {
      const doc = docs[Math.floor(random() * docs.length)]!
      doc.text = `${doc.text} ${word}`
    }
  }
  const index = buildIndex(docs, pruned)
  const web = index.parts.web

  it("has rare words with fewer documents than k, beside words of many skip blocks", () => {
    for (const word of rare) expect(web.arrays.termDf[web.lookup(word)]).toBeLessThan(10)
    expect(web.arrays.termDf[web.lookup("c0")]).toBeGreaterThan(4 * blockSize)
  })

  for (const k of [10, 100]) {
    it(`matches exhaustive scoring for 200 queries, k = ${k}`, () => {
      for (let q = 0; q < 200; q++) {
        const words = [rare[Math.floor(random() * rare.length)]!, ...Array.from({ length: 1 + Math.floor(random() * 3) }, pick)]
        expectExact(index, words.join(" "), k)
      }
    })
  }
})

/**
 * Real corpora come in sections (a manual, then another), and URL order keeps a section's
 * pages together, so common words of different sections rarely meet: two of them in one query
 * ("manual django") need both in a document to beat the k-th score, and ranking jumps over
 * the stretches where one is missing. Exhaustive scoring checks those jumps.
 */
describe("top-k pruning is exact when words keep to sections of the corpus", () => {
  const random = seeded(11)
  const sections = 6
  const perSection = 700
  const common = Array.from({ length: 30 }, (_, i) => `c${i}`)
  const own = (section: number) => Array.from({ length: 12 }, (_, i) => `s${section}w${i}`)
  const pick = (words: ReadonlyArray<string>) => words[Math.floor(random() * random() * words.length)]!
  // Mostly the section's own words; a few spill into the next section, so sections overlap at their edges.
  const text = (section: number, n: number) =>
    Array.from({ length: n }, () => {
      const r = random()
      return r < 0.5 ? pick(own(section)) : r < 0.53 ? pick(own((section + 1) % sections)) : pick(common)
    }).join(" ")
  const docs = Array.from({ length: sections * perSection }, (_, i) => {
    const section = Math.floor(i / perSection)
    return { url: `https://t.example/${String(i).padStart(5, "0")}`, title: text(section, 1 + Math.floor(random() * 3)), text: text(section, 10 + Math.floor(random() * 80)) }
  })
  const index = buildIndex(docs, pruned)
  const sectionWord = () => pick(own(Math.floor(random() * sections)))

  it("has words whose postings fill many skip blocks of one section", () => {
    const id = index.parts.web.lookup("s0w0")
    expect(index.parts.web.arrays.termDf[id]).toBeGreaterThan(4 * blockSize)
  })

  for (const k of [1, 10, 100]) {
    it(`matches exhaustive scoring for 300 queries mixing sections' words, k = ${k}`, () => {
      for (let q = 0; q < 300; q++) {
        const words = Array.from({ length: 2 + Math.floor(random() * 3) }, () => (random() < 0.75 ? sectionWord() : pick(common)))
        expectExact(index, words.join(" "), k)
      }
    })
  }

  it("matches exhaustive scoring for 200 queries of 8-20 words from several sections, k = 10", async () => {
    const queries = Array.from({ length: 200 }, () =>
      Array.from({ length: 8 + Math.floor(random() * 13) }, () => (random() < 0.75 ? sectionWord() : pick(common))).join(" "))
    await expectExactInWorker(docs, pruned, index, queries, 10)
  }, RANK_DEADLINE_MS + 10_000)
})

/**
 * Term at a time (TermAtATime.ts) serves queries of several common words, where MaxScore probes
 * every candidate word by word. Its results must be MaxScore's, near-duplicate collapsing
 * included, and the accumulators it shares between queries must be clean after each one.
 */
describe("term-at-a-time ranking", () => {
  const random = seeded(17)
  const common = Array.from({ length: 12 }, (_, i) => `w${i}`)
  const pick = () => common[Math.floor(random() * random() * common.length)]!
  const paragraph = () => Array.from({ length: 20 + Math.floor(random() * 60) }, pick).join(" ")
  const index = buildIndex(pagesWithNearDuplicates(2000, random, pick, paragraph), { proximity: 0 })
  const query = () => Array.from({ length: 2 + Math.floor(random() * 4) }, pick).join(" ")

  it("has near-duplicates to collapse", () => {
    expect(new Set(index.parts.pageCluster).size).toBeLessThan(index.documentCount - 150)
  })

  for (const k of [1, 15, 100]) {
    it(`ranks as MaxScore does with near-duplicates collapsed, 200 queries, k = ${k}`, () => {
      for (let q = 0; q < 200; q++) {
        const words = query()
        const termAtATime = index.rank(words, k, { strategy: "termAtATime" })
        expect(termAtATime.length, words).toBeGreaterThan(0)
        expect(termAtATime, words).toEqual(index.rank(words, k, { strategy: "maxScore" }))
      }
    })
  }

  it("ranks as MaxScore does whatever the order of the query's words (strongest first, as planned, or not: then by MaxScore)", () => {
    const web = index.parts.web
    for (let q = 0; q < 100; q++) {
      const ids = [...new Set(query().split(" ").map((w) => web.lookup(w)))]
      // Weakest first: the essential words come last, and MaxScore ranks the query.
      const terms = ids.map((termId) => ({ termId, weight: 1 })).sort((a, b) => web.termMaxScore(a.termId, 1) - web.termMaxScore(b.termId, 1))
      for (const ordered of [terms, [...terms].reverse()]) {
        const compiled = { terms: ordered, phrases: [], requiredTermIds: [], excluded: [] }
        const termAtATime = rankTopK(web, compiled, 15, undefined, "termAtATime")
        const maxScore = rankTopK(web, compiled, 15, undefined, "maxScore")
        expect(termAtATime.docs, ids.join(" ")).toEqual(maxScore.docs)
        expect(termAtATime.scores, ids.join(" ")).toEqual(maxScore.scores)
      }
    }
  })

  it("leaves no score behind: a query ranks the same after any other", () => {
    const words = "w3 w5 w7"
    const alone = index.rank(words, 15, { strategy: "termAtATime" })
    for (let q = 0; q < 50; q++) {
      index.rank(query(), 1 + Math.floor(random() * 50), { strategy: "termAtATime" })
      expect(index.rank(words, 15, { strategy: "termAtATime" })).toEqual(alone)
    }
  })

  it("is chosen for several common words and not for a rare word among them", () => {
    const web = index.parts.web
    const cursorsOf = (words: ReadonlyArray<string>) => words.map((w) => new PostingCursor(web, web.lookup(w), 1))
    // A primed threshold that only the two strongest words' documents can beat (the others together cannot).
    const common4 = cursorsOf(["w0", "w1", "w2", "w3"]).sort((a, b) => b.maxScore - a.maxScore)
    const primed = common4[2]!.maxScore + common4[3]!.maxScore
    const plan = termAtATimePlan(common4, primed)!
    expect([...plan]).toEqual([1, 1, 0, 0])
    expect(prefersTermAtATime(common4, plan)).toBe(true)
    expect(termAtATimePlan(common4, 0)).toBeUndefined()
    expect(termAtATimePlan([...common4].reverse(), primed)).toBeUndefined()
    for (const cursor of common4) cursor.close()
  })

  it("is not chosen when a rare word leads words of nearly every page", () => {
    // 4,000 pages of three common words, a rare word on 3 of them: term at a time would read
    // 12,000 postings; MaxScore reads the rare word's 3 and probes the others there.
    const pages = Array.from({ length: 4000 }, (_, i) => ({
      url: `https://r.example/${String(i).padStart(5, "0")}`,
      title: "c0 c1",
      text: `c0 c1 c2 ${i % 1400 === 0 ? "rare" : "plain"}`
    }))
    const web = buildIndex(pages, { proximity: 0, nearDuplicateBits: -1 }).parts.web
    const cursors = ["rare", "c0", "c1", "c2"].map((w) => new PostingCursor(web, web.lookup(w), 1))
    const others = cursors.slice(1).reduce((sum, c) => sum + c.maxScore, 0)
    expect(cursors[0]!.df).toBe(3)
    const plan = termAtATimePlan(cursors, others)!
    expect([...plan]).toEqual([1, 0, 0, 0])
    expect(prefersTermAtATime(cursors, plan)).toBe(false)
    for (const cursor of cursors) cursor.close()
  })
})

describe("posting cursors", () => {
  const random = seeded(31)
  const words = ["alpha", "beta", "gamma", "delta"]
  const index = buildIndex(Array.from({ length: 600 }, (_, i) => ({
    url: `https://cursors.example/${i}`,
    title: `page ${i}`,
    text: Array.from({ length: 3 + Math.floor(random() * 20) }, () => words[Math.floor(random() * words.length)]!).join(" ")
  })))
  const web = index.parts.web
  const ids = ["alpha", "beta"].map((w) => web.lookup(w))
  const postings = (cursor: PostingCursor) => {
    const out: Array<string> = []
    for (; cursor.doc !== endOfPostings; cursor.next()) out.push(`${cursor.doc}:${cursor.tf(0)}`)
    return out
  }

  it("started from a document, read what a cursor advanced there reads", () => {
    // "alpha" and "beta": several blocks each; "page": in every title; "5": one page, a single block.
    const terms = [...ids, web.lookup("page"), web.lookup("5")]
    expect(terms.every((id) => id >= 0)).toBe(true)
    for (const id of terms) {
      const all = postings(new PostingCursor(web, id, 1))
      const lastDoc = Number(all.at(-1)!.split(":")[0])
      for (const from of [0, 1, 127, 128, 129, 300, lastDoc, lastDoc + 1, 10_000]) {
        const advanced = new PostingCursor(web, id, 1)
        advanced.advance(from)
        expect(postings(new PostingCursor(web, id, 1, from)), `term ${id} from ${from}`).toEqual(postings(advanced))
      }
    }
  })

  it("started from a document, read the positions a cursor walked there reads", () => {
    // A cursor started from a document decodes only the run (16 postings) holding it; reading
    // positions walks the block from its start, so the runs before must be decoded then.
    const body = web.meta.fields.findIndex((f) => f.name === "body")
    const positions = (cursor: PostingCursor) => {
      const { positions, count } = cursor.positionsIn(body, new Int32Array(4))
      return Array.from(positions.subarray(0, count)).join(",")
    }
    for (const id of ids) {
      const walked = new PostingCursor(web, id, 1)
      const expected = new Map<number, string>()
      for (; walked.doc !== endOfPostings; walked.next()) expected.set(walked.doc, positions(walked))
      walked.close()
      expect(expected.size).toBeGreaterThan(2 * blockSize)
      // Backwards: each cursor gets the buffers of the one before, which hold later postings'
      // numbers, so runs left undecoded would be read as wrong frequencies.
      for (const doc of [...expected.keys()].filter((_, i) => i % 7 === 3).reverse()) {
        const started = new PostingCursor(web, id, 1, doc)
        expect(positions(started), `term ${id} from ${doc}`).toBe(expected.get(doc))
        started.close()
      }
    }
  })

  it("read the same postings from a closed cursor's buffers, which go to one new cursor only", () => {
    const expected = ids.map((id) => postings(new PostingCursor(web, id, 1)))
    expect(expected[0]!.length).toBeGreaterThan(300) // several blocks of 128
    const closed = new PostingCursor(web, ids[1]!, 1)
    closed.close()
    closed.close() // a second close must not hand the same buffers out twice
    const a = new PostingCursor(web, ids[0]!, 1)
    const b = new PostingCursor(web, ids[1]!, 1)
    const read: Array<Array<string>> = [[], []]
    // Interleaved: two cursors sharing buffers would overwrite each other's blocks.
    while (a.doc !== endOfPostings || b.doc !== endOfPostings) {
      for (const [i, cursor] of [a, b].entries()) {
        if (cursor.doc === endOfPostings) continue
        read[i]!.push(`${cursor.doc}:${cursor.tf(0)}`)
        cursor.next()
      }
    }
    expect(read).toEqual(expected)
  })
})

describe("proximity re-ranking's merge of a document's occurrences", () => {
  it("gives what sorting them gives: by position, then term", () => {
    const random = seeded(41)
    for (let n = 0; n < 500; n++) {
      const terms = 1 + Math.floor(random() * 8)
      const starts = new Int32Array(terms)
      const ends = new Int32Array(terms)
      const positions: Array<number> = []
      for (let j = 0; j < terms; j++) {
        starts[j] = positions.length
        // Sorted per term; terms share positions at times (a compound and its part).
        const own = Array.from({ length: Math.floor(random() * 12) }, () => Math.floor(random() * 40)).sort((a, b) => a - b)
        positions.push(...own)
        ends[j] = positions.length
      }
      const encoded = Float64Array.from(Array.from(starts).flatMap((from, j) => positions.slice(from, ends[j]).map((p) => p * 256 + j))).sort()
      const out = new Float64Array(positions.length)
      const count = mergeOccurrences(Int32Array.from(positions), starts, ends, terms, out)
      expect(count).toBe(positions.length)
      expect(Array.from(out)).toEqual(Array.from(encoded))
    }
  })
})
