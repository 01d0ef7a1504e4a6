import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { endOfPostings, noRunPositions, PostingCursor, runsPerBlock } from "../../core/index/InvertedIndex.ts"
import { SearchIndex } from "../../core/index/SearchIndex.ts"
import { longTextChars } from "../../core/index/SnippetPlaces.ts"
import { decodeSnapshot, encodeSnapshot, openSnapshot, SnapshotError, type SnapshotSource } from "../../core/index/Snapshot.ts"
import { sampleDocuments, sampleQueries } from "./corpus.ts"
import { fastXxHash32 } from "../../core/index/WasmXxHash32.ts"
import { jsXxHash32, xxhash32 } from "../../core/index/XxHash32.ts"
import { buildIndex, seeded } from "./support.ts"

const wasmXxHash32 = await Effect.runPromise(fastXxHash32)

const answers = (index: SearchIndex) => sampleQueries.map((q) => [index.search(q, 10), index.searchImages(q, 10)])

/** Positional reads over bytes in memory, as a file gives them; `reads` records each one. */
const memorySource = (bytes: Uint8Array, reads: Array<{ position: number; length: number }> = []): SnapshotSource => ({
  size: bytes.length,
  readInto: (target, offset, position, length) => {
    if (position + length > bytes.length) throw new Error("read past the end")
    reads.push({ position, length })
    target.set(bytes.subarray(position, position + length), offset)
  }
})

/** Both ways in, decoded from bytes and opened in place, each checked by both xxHash32 makers. */
const ways = [
  ["decodeSnapshot", (bytes: Uint8Array) => decodeSnapshot(bytes)],
  ["openSnapshot", (bytes: Uint8Array) => openSnapshot(memorySource(bytes))],
  ["decodeSnapshot, WebAssembly checksum", (bytes: Uint8Array) => decodeSnapshot(bytes, wasmXxHash32)],
  ["openSnapshot, WebAssembly checksum", (bytes: Uint8Array) => openSnapshot(memorySource(bytes), wasmXxHash32)]
] as const

const refusal = (bytes: Uint8Array, read: (bytes: Uint8Array) => SearchIndex = decodeSnapshot): SnapshotError => {
  try {
    read(bytes)
  } catch (error) {
    expect(error).toBeInstanceOf(SnapshotError)
    return error as SnapshotError
  }
  throw new Error("a damaged snapshot was accepted")
}

describe("snapshots", () => {
  const index = buildIndex(sampleDocuments)
  const bytes = encodeSnapshot(index)

  it("round-trip: same answers, same documents, same bytes", () => {
    const back = decodeSnapshot(bytes)
    expect(back.documentCount).toBe(5)
    expect(back.imageCount).toBe(3)
    expect(answers(back)).toEqual(answers(index))
    expect([...back.documents()]).toEqual([...index.documents()])
    expect(encodeSnapshot(back)).toEqual(bytes)
    // The answers are real ones, not empty lists that would trivially agree.
    expect(back.search("event loop", 10).hits.length).toBe(2)
    expect(back.searchImages("diagram", 10)).toEqual([{ url: "https://docs.python.org/3/_images/loop.png", refUrl: "https://docs.python.org/3/library/asyncio.html", title: "Event loop diagram", width: 640, height: 480 }])
  })

  it("are the same bytes whatever order and batches the documents came in", () => {
    const builder = new IndexBuilder()
    builder.add(sampleDocuments.slice(3))
    builder.add([...sampleDocuments.slice(0, 3)].reverse())
    expect(encodeSnapshot(builder.build())).toEqual(bytes)
  })

  it("rebuilds from its own documents into the same snapshot (how an update starts)", () => {
    const builder = new IndexBuilder()
    builder.add(decodeSnapshot(bytes).documents())
    expect(encodeSnapshot(builder.build())).toEqual(bytes)
  })

  it("read from unaligned bytes", () => {
    const shifted = new Uint8Array(bytes.length + 3)
    shifted.set(bytes, 3)
    expect(answers(decodeSnapshot(shifted.subarray(3)))).toEqual(answers(index))
  })

  it("hold an empty index", () => {
    const empty = decodeSnapshot(encodeSnapshot(new IndexBuilder().build()))
    expect(empty.documentCount).toBe(0)
    expect(empty.search("anything", 10).hits).toEqual([])
    expect(empty.searchImages("anything", 10)).toEqual([])
  })

  it.each(ways)("accept the intact bytes with the same answers (%s)", (_, read) => {
    expect(answers(read(bytes))).toEqual(answers(index))
  })

  it.each(ways)("refuse every truncation (%s)", (_, read) => {
    const random = seeded(9)
    const lengths = [0, 1, 8, 31, 32, 33, bytes.length - 1, ...Array.from({ length: 60 }, () => Math.floor(random() * bytes.length))]
    for (const length of lengths) expect(refusal(bytes.slice(0, length), read).reason, `length ${length}`).toBe("truncated")
  })

  it.each(ways)("refuse any single corrupted byte (%s)", (_, read) => {
    const random = seeded(10)
    const positions = [...Array.from({ length: 32 }, (_, i) => i), ...Array.from({ length: 150 }, () => Math.floor(random() * bytes.length))]
    for (const at of positions) {
      const damaged = bytes.slice()
      damaged[at] = damaged[at]! ^ (1 + Math.floor(random() * 255))
      const error = refusal(damaged, read)
      const expected = at < 8 ? "bad-magic" : at < 12 ? "unsupported-version" : at >= 16 && at < 24 ? ["truncated", "malformed"] : "checksum-mismatch"
      if (Array.isArray(expected)) expect(expected, `byte ${at}`).toContain(error.reason)
      else expect(error.reason, `byte ${at}`).toBe(expected)
      expect(error.message.length).toBeGreaterThan(10)
    }
  })

  it("refuse other files and trailing bytes with a clear reason", () => {
    expect(refusal(new TextEncoder().encode('{"url":"https://example.com"}\n'.repeat(10))).reason).toBe("bad-magic")
    const longer = new Uint8Array(bytes.length + 5)
    longer.set(bytes)
    expect(refusal(longer).reason).toBe("malformed")
    expect(refusal("not bytes" as unknown as Uint8Array).reason).toBe("malformed")
  })
})

/** Words prefix0, prefix1, ... drawn with a skew (a few common, most rare), as a language's are. */
const skewedWords = (random: () => number, prefix: string, size: number) => {
  const vocabulary = Array.from({ length: size }, (_, i) => `${prefix}${i}`)
  return () => vocabulary[Math.min(size - 1, Math.floor(Math.exp(random() * Math.log(size + 1)) - 1))]!
}

/** Pages on `host`: a title of 1-4 words, a text of 5 to 4 + `textWords` words, then `extra(i)`. */
const skewedPages = (random: () => number, word: () => string, count: number, host: string, textWords: number, extra = (_i: number): Array<string> => []) =>
  Array.from({ length: count }, (_, i) => ({
    url: `https://${host}/${String(i).padStart(5, "0")}`,
    title: Array.from({ length: 1 + Math.floor(random() * 4) }, word).join(" "),
    text: [...Array.from({ length: 5 + Math.floor(random() * textWords) }, word), ...extra(i)].join(" ")
  }))

type SectionEdit = (sections: Array<{ name: string; count: number }>) => Array<{ name: string; count: number }>

/** A snapshot with its section table edited and signed again (how a file written before a section is made from a new one). */
const editSections = (bytes: Uint8Array, edit: SectionEdit) => {
  const out = bytes.slice()
  const header = new DataView(out.buffer)
  const metaLength = header.getUint32(28, true)
  const meta = JSON.parse(new TextDecoder().decode(out.subarray(32, 32 + metaLength))) as { sections: Array<{ name: string; count: number }> }
  meta.sections = edit(meta.sections)
  const json = new TextEncoder().encode(JSON.stringify(meta))
  out.fill(0x20, 32, 32 + metaLength)
  out.set(json, 32)
  const hash = jsXxHash32(xxhash32(out.subarray(28, 32), xxhash32(out.subarray(0, 24))))
  hash.update(out.subarray(32))
  header.setUint32(24, hash.digest(), true)
  return out
}

/**
 * Run data (each run of 16 postings: its best frequency, last document and first byte) came
 * after format version 2 was fixed, as extra sections: a snapshot written before it has none,
 * loads with its blocks read whole, and ranks exactly as a snapshot with it. Such a file is
 * made here from a new one by dropping the sections from the table and signing it again.
 */
describe("snapshots written before run data", () => {
  const random = seeded(5)
  const word = skewedWords(random, "w", 300)
  const docs = skewedPages(random, word, 2500, "runs.example", 100)
  const bytes = encodeSnapshot(buildIndex(docs, { proximity: 0, nearDuplicateBits: -1 }))
  const withSections = (edit: SectionEdit) => editSections(bytes, edit)
  const withoutRuns = withSections((sections) => sections.filter((s) => !s.name.includes(".blockRun")))

  it("load, with their blocks read whole", () => {
    const current = decodeSnapshot(bytes).parts.web
    const old = decodeSnapshot(withoutRuns).parts.web
    expect(current.arrays.blockRunLastDoc.length).toBeGreaterThan(100)
    expect(current.arrays.blockRunMax.some((b) => b < 255)).toBe(true)
    expect(current.hasRuns).toBe(true)
    expect(old.hasRuns).toBe(false)
    expect(old.arrays.blockRunLastDoc.length).toBe(0)
  })

  it("are refused with some run sections but not all, or with runs that do not match the blocks", () => {
    const partial = refusal(withSections((sections) => sections.filter((s) => s.name !== "web.blockRunOffset")))
    expect(partial.reason).toBe("malformed")
    expect(partial.message).toBe("snapshot: web has 2 of the 3 run sections (blockRunMax, blockRunLastDoc, blockRunOffset): all or none")
    const short = refusal(withSections((sections) => sections.map((s) => (s.name === "web.blockRunLastDoc" ? { ...s, count: s.count - 8 } : s))))
    expect(short.reason).toBe("malformed")
    expect(short.message).toMatch(/^snapshot: section web\.blockRunLastDoc has \d+ entries, expected \d+$/)
  })

  it("rank exactly as snapshots with them", () => {
    const current = decodeSnapshot(bytes)
    const old = decodeSnapshot(withoutRuns)
    for (let q = 0; q < 300; q++) {
      const query = Array.from({ length: 1 + Math.floor(random() * 5) }, word).join(" ")
      const ranked = (index: SearchIndex) => index.rank(query, 10, { collapse: false }).map((r) => `${r.doc}:${r.score.toFixed(9)}`)
      expect(ranked(old), query).toEqual(ranked(current))
    }
  })
})

/**
 * Where each run's positions start (`blockRunPositions`), added after the run data: proximity
 * re-ranking and phrases find a posting's positions from its run's start instead of walking the
 * block. A snapshot without it loads and answers the same, walking; so does a run whose
 * positions start past what 16 bits hold (a word hundreds of times in each of its pages).
 */
describe("snapshots written before run positions", () => {
  const random = seeded(11)
  const word = skewedWords(random, "v", 200)
  // Every fifth page repeats "tango" hundreds of times: its blocks' positions pass 65,535 bytes.
  const docs = skewedPages(random, word, 3000, "positions.example", 120, (i) =>
    i % 5 === 0 ? Array.from({ length: 800 }, (_, k) => (k % 3 === 0 ? "tango zorba" : "tango")) : [])
  const bytes = encodeSnapshot(buildIndex(docs, { nearDuplicateBits: -1 }))
  const withoutRunPositions = editSections(bytes, (sections) => sections.filter((s) => !s.name.endsWith(".blockRunPositions")))
  const queries = [
    ...Array.from({ length: 150 }, () => Array.from({ length: 2 + Math.floor(random() * 3) }, word).join(" ")),
    ...Array.from({ length: 50 }, () => `"${word()} ${word()}" ${word()}`),
    "tango zorba", "\"tango zorba\"", "tango v1 v2", "\"zorba tango tango\" v3"
  ]

  it("have run positions now, some too far into their block for 16 bits", () => {
    const web = decodeSnapshot(bytes).parts.web
    expect(web.hasRunPositions).toBe(true)
    const starts = web.arrays.blockRunPositions
    expect(starts.length).toBe(web.arrays.blockRunLastDoc.length)
    expect(starts.filter((s) => s > 0 && s !== noRunPositions).length).toBeGreaterThan(100)
    // "tango"'s first block is full: its later runs start past 65,534 bytes of positions.
    const first = web.arrays.termFirstBlock[web.lookup("tango")]!
    const runs = Array.from(starts.subarray(first * runsPerBlock, (first + 1) * runsPerBlock))
    expect(runs[0]).toBe(0)
    expect(runs[1]).toBeGreaterThan(0)
    expect(runs.at(-1)).toBe(noRunPositions)
  })

  it("give every posting's positions, as walking the block does, every other posting and every posting read", () => {
    const current = decodeSnapshot(bytes).parts.web
    const old = decodeSnapshot(withoutRunPositions).parts.web
    const body = current.meta.fields.findIndex((f) => f.name === "body")
    const positionsOf = (web: typeof current, term: string, step: number) => {
      const cursor = new PostingCursor(web, web.lookup(term), 1)
      const out: Array<string> = []
      let buffer: Int32Array = new Int32Array(4)
      for (let i = 0; cursor.doc !== endOfPostings; i++, cursor.next()) {
        if (i % step !== 0) continue
        const { positions, count } = cursor.positionsIn(body, buffer)
        buffer = positions
        out.push(`${cursor.doc}:${positions.subarray(0, count).join(",")}`)
      }
      cursor.close()
      return out
    }
    for (const term of ["tango", "zorba", "v0", "v3"]) {
      for (const step of [1, 2, 37]) expect(positionsOf(current, term, step), `${term} every ${step}`).toEqual(positionsOf(old, term, step))
    }
    expect(positionsOf(current, "tango", 1).length).toBe(600)
  })

  it("load without them and answer the same: proximity, phrases, snippets", () => {
    const current = decodeSnapshot(bytes)
    const old = decodeSnapshot(withoutRunPositions)
    expect(old.parts.web.hasRunPositions).toBe(false)
    expect(old.parts.web.hasRuns).toBe(true)
    for (const query of queries) {
      const ranked = (index: SearchIndex) => index.rank(query, 20).map((r) => `${r.doc}:${r.score.toFixed(9)}`)
      expect(ranked(current), query).toEqual(ranked(old))
      expect(current.search(query, 10), query).toEqual(old.search(query, 10))
    }
    expect(current.rank("\"tango zorba\"", 10).length).toBe(10)
  })

  it("are refused without the run data they belong to, or with the wrong length", () => {
    const orphan = refusal(editSections(bytes, (sections) => sections.filter((s) => !/\.blockRun(Max|LastDoc|Offset)$/.test(s.name))))
    expect(orphan.reason).toBe("malformed")
    expect(orphan.message).toBe("snapshot: web has blockRunPositions without the run sections (blockRunMax, blockRunLastDoc, blockRunOffset)")
    const short = refusal(editSections(bytes, (sections) => sections.map((s) => (s.name === "web.blockRunPositions" ? { ...s, count: s.count - 8 } : s))))
    expect(short.reason).toBe("malformed")
    expect(short.message).toMatch(/^snapshot: section web\.blockRunPositions has \d+ entries, expected \d+$/)
  })
})

/**
 * How many positions each long page's text took (`pages.textPositions`), added later still:
 * a long page's snippet is read from the piece of its text its words' positions point to. A
 * snapshot without it loads and makes every snippet from the whole text, as before.
 */
describe("snapshots written before the long pages' position counts", () => {
  const random = seeded(29)
  const word = skewedWords(random, "p", 400)
  // Up to 3,000 words of two to four characters: many of the texts are long (8,192 characters or more).
  const docs = skewedPages(random, word, 80, "long.example", 3000)
  const bytes = encodeSnapshot(buildIndex(docs, { nearDuplicateBits: -1 }))
  const without = editSections(bytes, (sections) => sections.filter((s) => s.name !== "pages.textPositions"))
  const queries = Array.from({ length: 60 }, () => Array.from({ length: 1 + Math.floor(random() * 3) }, word).join(" "))
  /** The snapshot with pair `i + 1` naming the page of pair `i` again. */
  const repeated = (i: number) => {
    const out = bytes.slice()
    const metaLength = new DataView(out.buffer).getUint32(28, true)
    const meta = JSON.parse(new TextDecoder().decode(out.subarray(32, 32 + metaLength))) as { sections: Array<{ name: string; offset: number }> }
    const pairs = new Int32Array(out.buffer, meta.sections.find((s) => s.name === "pages.textPositions")!.offset, 2 * (i + 2))
    pairs[2 * i + 2] = pairs[2 * i]!
    return editSections(out, (sections) => sections)
  }

  it("load without them and answer as an index without them does: the same hits, snippets from whole texts", () => {
    const current = decodeSnapshot(bytes)
    const old = decodeSnapshot(without)
    const long = docs.filter((d) => d.text.length >= longTextChars).length
    expect(long).toBeGreaterThan(15)
    expect(current.parts.textPositions.length).toBe(2 * long)
    expect(old.parts.textPositions.length).toBe(0)
    const noCounts = new SearchIndex({ ...current.parts, textPositions: new Int32Array(0) })
    let hits = 0
    for (const query of queries) {
      expect(old.search(query, 10), query).toEqual(noCounts.search(query, 10))
      const links = (index: SearchIndex) => index.search(query, 10).hits.map((h) => h.link)
      expect(links(current), query).toEqual(links(old))
      hits += links(current).length
    }
    expect(hits).toBeGreaterThan(300)
  })

  it("are refused when their pairs are not (page, count) in page order", () => {
    const odd = refusal(editSections(bytes, (sections) => sections.map((s) => (s.name === "pages.textPositions" ? { ...s, count: s.count - 1 } : s))))
    expect(odd.reason).toBe("malformed")
    expect(odd.message).toBe("snapshot: section pages.textPositions should hold (page, count) pairs")
    const disordered = refusal(repeated(3))
    expect(disordered.reason).toBe("malformed")
    expect(disordered.message).toBe("snapshot: section pages.textPositions should hold pages in increasing order, each once, with counts of 0 or more")
  })
})

describe("snapshots opened in place", () => {
  const index = buildIndex(sampleDocuments)
  const bytes = encodeSnapshot(index)
  // Where the page text lies, from the snapshot's own section table.
  const metaLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(28, true)
  const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(32, 32 + metaLength))) as { sections: Array<{ name: string; offset: number; count: number }> }
  const text = meta.sections.find((s) => s.name === "pages.bytes")!

  it("answer as the decoded snapshot does, and encode back to the same bytes", () => {
    const opened = openSnapshot(memorySource(bytes))
    expect(answers(opened)).toEqual(answers(index))
    expect([...opened.documents()]).toEqual([...index.documents()])
    expect(encodeSnapshot(opened)).toEqual(bytes)
    expect(opened.search("event loop", 10).hits.length).toBe(2)
  })

  it("read the page text only to check it, then per hit shown", () => {
    const reads: Array<{ position: number; length: number }> = []
    const opened = openSnapshot(memorySource(bytes, reads))
    const inText = (r: { position: number; length: number }) => r.position >= text.offset && r.position < text.offset + text.count
    // Opening: the text went through the checksum once, in chunks, and nothing of it was kept.
    expect(reads.filter(inText).reduce((sum, r) => sum + r.length, 0)).toBeGreaterThanOrEqual(text.count)
    reads.length = 0
    const hits = opened.search("event loop", 10).hits
    expect(hits.length).toBe(2)
    const shown = reads.filter(inText)
    expect(shown.length).toBeGreaterThan(0)
    // Each read is one field of one hit, far less than the whole text.
    for (const r of shown) expect(r.length).toBeLessThan(text.count)
    expect(reads.length).toBe(shown.length)
  })
})
