import { describe, expect, it } from "vitest"
import type { IndexDocument } from "../../core/index/Document.ts"
import { IndexBuilder, InvalidEngineOptions } from "../../core/index/IndexBuilder.ts"
import { PageRecorders } from "../../core/index/PageLanguages.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { sampleDocuments } from "./corpus.ts"

describe("IndexBuilder", () => {
  it("reports each refused document with the field and the rule", () => {
    const builder = new IndexBuilder()
    const report = builder.add([
      { url: "https://ok.example/", title: "Fine", text: "fine" },
      { url: "not a url", title: "x", text: "x" },
      { url: "ftp://files.example/a", title: "x", text: "x" },
      { title: "no url", text: "x" },
      { url: "https://a.example/1", title: 42, text: "x" },
      { url: "https://a.example/2", title: "x" },
      { url: "https://a.example/3", title: "  ", text: "\n" },
      { url: "https://a.example/4", title: "x", text: "x", date: "yesterday" },
      { url: "https://a.example/5", title: "x", text: "x", images: "none" },
      null,
      "a string"
    ] as unknown as Array<IndexDocument>)
    expect(report.added).toBe(1)
    expect(report.duplicates).toBe(0)
    expect(report.rejected).toEqual([
      { url: "not a url", reason: "url: must be an absolute http(s) URL" },
      { url: "ftp://files.example/a", reason: "url: must be an absolute http(s) URL" },
      { url: "", reason: "url: must be a string" },
      { url: "https://a.example/1", reason: "title: must be a string" },
      { url: "https://a.example/2", reason: "text: must be a string" },
      { url: "https://a.example/3", reason: "title, text: at least one must be non-empty" },
      { url: "https://a.example/4", reason: "date: must be an ISO 8601 date (YYYY-MM-DD or a full timestamp) or null" },
      { url: "https://a.example/5", reason: "images: must be an array when present" },
      { url: "", reason: "document: must be an object" },
      { url: "", reason: "document: must be an object" }
    ])
    expect(builder.build().documentCount).toBe(1)
  })

  it("drops a bad image but keeps its page", () => {
    const builder = new IndexBuilder()
    const report = builder.add([{
      url: "https://p.example/",
      title: "Page",
      text: "text",
      images: [{ url: "relative.png" }, { url: "https://p.example/ok.png", width: -3 }, { url: "https://p.example/good.png", alt: "good" }]
    }])
    expect(report.added).toBe(1)
    expect(report.rejected).toEqual([
      { url: "https://p.example/", reason: "images[0].url: must be an absolute http(s) URL" },
      { url: "https://p.example/", reason: "images[1].width: must be a whole number of pixels" }
    ])
    const index = builder.build()
    expect(index.imageCount).toBe(1)
    expect(index.searchImages("good", 5)).toEqual([{ url: "https://p.example/good.png", refUrl: "https://p.example/", title: "good" }])
  })

  it("gives documents back as stored, images, dates and languages included", () => {
    const builder = new IndexBuilder()
    builder.add(sampleDocuments)
    const back = [...builder.build().documents()]
    expect(back).toHaveLength(sampleDocuments.length)
    const asyncio = back.find((d) => d.url === "https://docs.python.org/3/library/asyncio.html")!
    expect(asyncio).toEqual({ ...sampleDocuments[0], lang: "en" })
    const japanese = back.find((d) => d.lang === "ja")!
    expect(japanese.url).toBe(new URL("https://ja.example.org/検索").href)
    expect(japanese.images).toEqual([{ url: "https://ja.example.org/img/index.png", caption: "索引の図", heading: "索引" }])
    expect(back.find((d) => d.url === "https://nodejs.org/en/learn/event-loop")!.date).toBe("2023-11-20T08:30:00Z")
  })

  it("refuses engine options that break their rule, naming the option", () => {
    expect(() => new IndexBuilder({ b: 2 })).toThrow(InvalidEngineOptions)
    expect(() => new IndexBuilder({ b: 2 })).toThrow("b: must be a number from 0 to 1 (got 2)")
    expect(() => new IndexBuilder({ k1: Number.NaN })).toThrow("k1: must be a number")
    expect(() => new IndexBuilder({ fieldWeights: { title: 0, body: 0, url: 0 } })).toThrow("fieldWeights: at least one field must have a weight above 0")
    expect(() => new IndexBuilder({ fieldWeights: { title: -1 } })).toThrow("fieldWeights.title")
  })

  it("uses the configured k1 and b", () => {
    const docs = [
      { url: "https://k.example/short", title: "", text: "zebra zebra" },
      { url: "https://k.example/long", title: "", text: `zebra zebra zebra ${"filler ".repeat(40)}` }
    ]
    const rank = (b: number) => {
      const builder = new IndexBuilder({ b, fieldWeights: { title: 0, body: 1, url: 0 }, proximity: 0 })
      builder.add(docs)
      return builder.build().search("zebra", 2).hits.map((h) => h.link)
    }
    // Without length normalisation more occurrences win; with full normalisation the short page does.
    expect(rank(0)).toEqual(["https://k.example/long", "https://k.example/short"])
    expect(rank(1)).toEqual(["https://k.example/short", "https://k.example/long"])
  })

  it("builds the same snapshot bytes from texts analysed elsewhere and replayed in page order", () => {
    // Compound tokens ("os.path.join", URLs), CJK segments, stop words, possessives and repeated words.
    const varied: Array<IndexDocument> = [
      ...sampleDocuments,
      ...Array.from({ length: 40 }, (_, i) => ({
        url: `https://replay.example/${i % 7}/${i}`,
        title: `Page ${i}: os.path.join and C++ in O'Reilly's ${i % 3 === 0 ? "検索エンジン" : "notes"}`,
        text: `The the ${"word ".repeat(i % 5)}https://a.example/x?y=${i} runs, running, ran; ${i % 2 === 0 ? "" : "ünïcödé façade "}end.`
      })),
      // Pages in other languages, declared and detected: each analysed in its own.
      { url: "https://replay.example/de", title: "Dateien kopieren", text: "Dieser Befehl kopiert die Dateien und Verzeichnisse rekursiv in das angegebene Zielverzeichnis." },
      { url: "https://replay.example/fr", title: "Copier", text: "L'outil copie les fichiers.", lang: "fr-CA" }
    ]
    for (const stemming of [true, false]) {
      const plain = new IndexBuilder({ stemming })
      plain.add(varied)
      const replayed = new IndexBuilder({ stemming })
      replayed.add(varied)
      const build = replayed.begin()
      const recorders = new PageRecorders()
      // Recorded in reverse order, as another thread's memo of words would see them: the replay does not depend on it.
      const analysed = Array.from({ length: build.pageCount }, (_, doc) => build.pageCount - 1 - doc)
        .map((doc) => recorders.analyze(build.pageToAnalyze(doc))).reverse()
      expect(analysed.filter((page) => page.analysis !== "en").map((page) => page.language)).toEqual(expect.arrayContaining(["de", "fr"]))
      for (let doc = 0; doc < build.pageCount; doc++) build.addPage(doc, analysed[doc])
      expect(Buffer.from(encodeSnapshot(build.finish())).equals(Buffer.from(encodeSnapshot(plain.build()))), `stemming ${stemming}`).toBe(true)
    }
  })

  it("refuses a page added out of order, and a build finished before its last page", () => {
    const builder = new IndexBuilder()
    builder.add(sampleDocuments)
    const build = builder.begin()
    expect(() => build.addPage(1)).toThrow("index build: page 1 added where 0 was next")
    build.addPage(0)
    expect(() => build.finish()).toThrow(`index build: 1 of ${build.pageCount} pages added`)
  })
})

