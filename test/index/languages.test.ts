import { describe, expect, it } from "vitest"
import { Analyzer, exactFormMarker, isExactForm, TokenKind } from "../../core/index/analysis/Analyzer.ts"
import { analysisForLanguage, analysisNamed, languageAnalyses } from "../../core/index/analysis/LanguageAnalysis.ts"
import { detectLanguage, detectPageLanguage, detectQueryLanguage, pageLanguageSample, pageSampleChars } from "../../core/index/analysis/LanguageDetection.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { primaryLanguage } from "../../core/index/LanguageTag.ts"
import { parseQuery } from "../../core/index/QueryParser.ts"
import { PageField, SearchIndex } from "../../core/index/SearchIndex.ts"
import { linkSegment, runToEnd } from "../../core/index/SegmentedIndex.ts"
import { spellQuery } from "../../core/index/Spelling.ts"
import { decodeSnapshot, encodeSnapshot, SnapshotError } from "../../core/index/Snapshot.ts"
import { StoredFieldsWriter } from "../../core/index/StoredFields.ts"
import { jsXxHash32, xxhash32 } from "../../core/index/XxHash32.ts"

const terms = (text: string, language: string, stemming = true) => {
  const analyzer = new Analyzer({ stemming, language: analysisForLanguage(language) })
  const out: Array<string> = []
  analyzer.analyze(text, (term) => void out.push(term))
  return out
}

const build = (docs: ReadonlyArray<IndexDocument>) => {
  const builder = new IndexBuilder()
  builder.add(docs)
  return builder.build()
}

const links = (index: Pick<SearchIndex, "search">, query: string, language?: string) =>
  index.search(query, 10, language === undefined ? undefined : { language }).hits.map((h) => h.link).sort()

// Texts long enough to be detected, in the words a person would write.
const german = "Dieser Befehl kopiert die ausgewählten Dateien und Verzeichnisse rekursiv in das angegebene Zielverzeichnis, ohne die Rechte zu ändern."
const french = "Cette commande copie les fichiers sélectionnés et les répertoires de manière récursive dans le répertoire de destination indiqué."
const english = "This command copies the selected files and directories recursively into the given target directory, keeping their permissions."

describe("analysis by language", () => {
  it("stems and drops stop words in each language's own way", () => {
    expect(terms("Die Häuser und das Haus", "de")).toEqual(["haus", "haus"])
    expect(terms("Les chevaux et le cheval", "fr")).toEqual(["cheval", "cheval"])
    expect(terms("las naciones y la nación", "es")).toEqual(["nacion", "nacion"])
    expect(terms("i gatti e il gatto", "it")).toEqual(["gatt", "gatt"])
    expect(terms("книги и книга", "ru")).toEqual(["книг", "книг"])
    expect(terms("flickorna och flickor", "sv")).toEqual(["flick", "flick"])
    // English keeps Lucene's EnglishAnalyzer: Porter, its 33 stop words.
    expect(terms("the running of the houses", "en")).toEqual(["run", "hous"])
  })

  it("stems before folding, so that accented and plain spellings of one word meet", () => {
    // Snowball's French rules see the accents: "égalité" and "égal" share a stem, folded afterwards.
    expect(terms("égalité égal", "fr")).toEqual(["egal", "egal"])
    // A stop word typed without its accent is still one: "fur" for "für", "meme" for "même".
    expect(terms("für fur Haus", "de")).toEqual(["haus"])
    expect(terms("même meme maison", "fr")).toEqual(["maison"])
  })

  it("drops elided articles in French and Italian, and keeps English apostrophes as before", () => {
    expect(terms("l'homme d'affaires qu'il", "fr")).toEqual(["homm", "affair"])
    expect(terms("dell'anno l'uomo", "it")).toEqual(["anno", "uom"])
    expect(terms("don't O'Reilly's", "en")).toEqual(["dont", "oreilli"])
  })

  it("lower-cases Turkish with its own dotted and dotless i", () => {
    expect(terms("KITAPLAR kitaplar", "tr")).toEqual(["kitap", "kitap"])
    expect(new Analyzer({ language: analysisForLanguage("tr") }).normalizeWord("IŞIKLAR")).toBe("isik")
  })

  it("does not stem without stemming, in any language", () => {
    expect(terms("Die Häuser", "de", false)).toEqual(["hauser"])
    expect(terms("les chevaux", "fr", false)).toEqual(["chevaux"])
  })

  it("has an analysis under a stable name for each language, English the default", () => {
    for (const analysis of languageAnalyses) expect(analysisNamed(analysis.name)).toBe(analysis)
    expect(analysisForLanguage("pl").name).toBe("en")
    expect(analysisForLanguage(undefined).name).toBe("en")
    expect(analysisNamed("xx")).toBeUndefined()
  })

  it("names a language by its primary subtag in ISO 639-1", () => {
    expect(["de-AT", "deu", "ger", "fr_CA", "nb-NO", "nn", "EN", "und", "", "not a tag", undefined].map(primaryLanguage))
      .toEqual(["de", "de", "de", "fr", "no", "no", "en", undefined, undefined, undefined, undefined])
  })
})

describe("language detection", () => {
  it("detects the language of sentences", () => {
    expect(detectLanguage(german)).toBe("de")
    expect(detectLanguage(french)).toBe("fr")
    expect(detectLanguage(english)).toBe("en")
  })

  it("leaves a page of few letters, or of code, of no known language", () => {
    expect(detectPageLanguage("Options")).toBeUndefined()
    expect(detectPageLanguage("zebra zebra zebra filler filler filler filler filler filler filler filler filler filler")).toBeUndefined()
    expect(detectPageLanguage("x = np.array([1, 2, 3]) >>> y = x.reshape(3, 1) >>> z = np.dot(x, y)")).toBeUndefined()
    expect(detectPageLanguage("")).toBeUndefined()
  })

  it("reads a sample of a long page: the start of its text", () => {
    const sample = pageLanguageSample("Title", `${german} ${"x".repeat(10_000)}`)
    expect(sample.length).toBeLessThanOrEqual(pageSampleChars)
    expect(sample.startsWith("Dieser Befehl")).toBe(true)
    expect(pageLanguageSample("Kopieren", "kurz")).toBe("Kopieren\nkurz")
  })

  it("guesses a query's language only when it has letters enough", () => {
    expect(detectQueryLanguage("Verzeichnisinhalte auflisten")).toBe("de")
    expect(detectQueryLanguage("Datei")).toBeUndefined()
    expect(detectQueryLanguage("42 + 17 = 59")).toBeUndefined()
  })
})

describe("pages in several languages", () => {
  const docs: Array<IndexDocument> = [
    { url: "https://docs.example/de/kopieren", title: "Dateien kopieren", text: german, images: [{ url: "https://docs.example/de/kopieren.png", alt: "Kopieren von Dateien" }] },
    { url: "https://docs.example/fr/copier", title: "Copier des fichiers", text: french },
    { url: "https://docs.example/en/copy", title: "Copying files", text: english, images: [{ url: "https://docs.example/en/copy.png", alt: "Copying files" }] },
    { url: "https://docs.example/at/short", title: "Kurz", text: "Kopieren.", lang: "de-AT" },
    { url: "https://docs.example/x/short", title: "Options", text: "-r -f" }
  ]
  const index = build(docs)

  it("records each page's language, declared or detected, and the analysis it got", () => {
    const languages = index.parts.pageLanguages!
    expect(languages.ids.length).toBe(docs.length)
    const byUrl = Object.fromEntries(Array.from({ length: index.documentCount }, (_, doc) => [index.parts.pages.get(doc, PageField.Url), languages.table[languages.ids[doc]!]]))
    expect(byUrl["https://docs.example/de/kopieren"]).toEqual({ language: "de", analysis: "de" })
    expect(byUrl["https://docs.example/fr/copier"]).toEqual({ language: "fr", analysis: "fr" })
    expect(byUrl["https://docs.example/en/copy"]).toEqual({ language: "en", analysis: "en" })
    // Declared: no detection, however short the page.
    expect(byUrl["https://docs.example/at/short"]).toEqual({ language: "de", analysis: "de" })
    // Too short to tell: no known language, English's analysis.
    expect(byUrl["https://docs.example/x/short"]).toEqual({ language: "", analysis: "en" })
    // The declared tag stays as declared; a detected language is not written into the page.
    const stored = [...index.documents()]
    expect(stored.find((d) => d.url.endsWith("/at/short"))!.lang).toBe("de-AT")
    expect(stored.find((d) => d.url.endsWith("/de/kopieren"))!.lang).toBeUndefined()
  })

  it("filters by language: language de finds only the German pages", () => {
    expect(links(index, "kopieren Dateien copying files fichiers", "de")).toEqual(["https://docs.example/at/short", "https://docs.example/de/kopieren"])
    expect(links(index, "kopieren Dateien copying files fichiers", "deu")).toEqual(["https://docs.example/at/short", "https://docs.example/de/kopieren"])
    expect(links(index, "kopieren Dateien copying files fichiers", "en")).toEqual(["https://docs.example/en/copy"])
    expect(links(index, "kopieren Dateien copying files fichiers", "fr")).toEqual(["https://docs.example/fr/copier"])
    // A language no page is in: nothing, not everything.
    expect(links(index, "kopieren", "pl")).toEqual([])
    // Without the option, pages of any language answer (the query is read in one: a page of
    // another answers on the words both analyses leave alike).
    expect(links(index, "kopieren Dateien copying files fichiers")).toEqual(expect.arrayContaining(["https://docs.example/de/kopieren", "https://docs.example/fr/copier"]))
    expect(index.searchImages("kopieren copying", 10, { language: "de" }).map((h) => h.url)).toEqual(["https://docs.example/de/kopieren.png"])
    expect(index.rank("files Dateien", 10, { language: "en" }).map((r) => r.url)).toEqual(["https://docs.example/en/copy"])
  })

  it("reads the query in the language asked", () => {
    // "Verzeichnis" (singular) meets the page's "Verzeichnisse" through German stemming, not through English's.
    expect(links(index, "Verzeichnis", "de")).toEqual(["https://docs.example/de/kopieren"])
    expect(index.reading(parseQuery("Verzeichnis"), { language: "de" }).analysis.name).toBe("de")
    // French: the elided and plural forms meet.
    expect(links(index, "l'répertoire fichier", "fr")).toEqual(["https://docs.example/fr/copier"])
  })

  it("reads a query without a language in the language detected, when it has letters enough", () => {
    expect(index.reading(parseQuery("Verzeichnisse rekursiv kopieren"), {}).analysis.name).toBe("de")
    expect(index.reading(parseQuery("copier les répertoires récursivement"), {}).analysis.name).toBe("fr")
    // Too short to tell: the index's main language.
    expect(index.reading(parseQuery("Datei"), {}).analysis.name).toBe(index.reading(parseQuery("x"), {}).analysis.name)
    expect(links(index, "Verzeichnis rekursiv kopieren")).toContain("https://docs.example/de/kopieren")
  })

  it("reads every query of a one-language index in that language, whatever it looks like", () => {
    const only = build([{ url: "https://de.example/a", title: "Dateien kopieren", text: german }])
    expect([...only.analysisCounts]).toEqual([["de", 1]])
    expect(only.reading(parseQuery("copying the selected files recursively"), {}).analysis.name).toBe("de")
    expect(links(only, "Verzeichnis")).toEqual(["https://de.example/a"])
  })

  it("shows a snippet of the page's words in its own analysis", () => {
    const hit = index.search("Verzeichnis", 10, { language: "de" }).hits[0]!
    expect(hit.snippet).toContain("Verzeichnisse")
    const elided = build([{ url: "https://fr.example/a", title: "L'homme", text: "Un texte assez long sur l'homme et ses outils, écrit en français pour que la langue soit reconnue sans peine par le détecteur." }])
    expect(elided.search("homme", 10, { language: "fr" }).hits[0]!.snippet).toContain("l'homme")
  })

  it("keeps bad language values harmless: nothing matches a value that is no language", () => {
    for (const bad of ["", "123", "not a language", "und"]) expect(links(index, "kopieren", bad)).toEqual([])
    expect(links(index, "kopieren", undefined).length).toBeGreaterThan(0)
    expect(index.search("kopieren", 10, { language: 42 as unknown as string }).hits.length).toBeGreaterThan(0)
  })

  it("keeps languages through a snapshot, and searches a segment of added pages in them", () => {
    const decoded = decodeSnapshot(encodeSnapshot(index))
    expect(decoded.parts.pageLanguages).toEqual(index.parts.pageLanguages)
    expect(links(decoded, "Verzeichnis", "de")).toEqual(["https://docs.example/de/kopieren"])
    const segment = build([{ url: "https://docs.example/de/neu", title: "Verzeichnisse verschieben", text: "Dieser Befehl verschiebt die ausgewählten Dateien und Verzeichnisse in das angegebene Zielverzeichnis, ohne sie zu kopieren." }])
    const served = runToEnd(linkSegment(decoded, segment))
    expect(links(served, "Verzeichnis", "de")).toEqual(["https://docs.example/de/kopieren", "https://docs.example/de/neu"])
    expect(links(served, "Verzeichnis", "en")).toEqual([])
  })
})

/** The snapshot with its metadata edited and signed again: how a file written before languages is made from a new one. */
const editMeta = (bytes: Uint8Array, edit: (meta: Record<string, unknown> & { sections: Array<{ name: string }> }) => void) => {
  const out = bytes.slice()
  const header = new DataView(out.buffer)
  const metaLength = header.getUint32(28, true)
  const meta = JSON.parse(new TextDecoder().decode(out.subarray(32, 32 + metaLength)))
  edit(meta)
  const json = new TextEncoder().encode(JSON.stringify(meta))
  out.fill(0x20, 32, 32 + metaLength)
  out.set(json, 32)
  const hash = jsXxHash32(xxhash32(out.subarray(28, 32), xxhash32(out.subarray(0, 24))))
  hash.update(out.subarray(32))
  header.setUint32(24, hash.digest(), true)
  return out
}

const refusal = (bytes: Uint8Array): SnapshotError => {
  try {
    decodeSnapshot(bytes)
  } catch (error) {
    if (error instanceof SnapshotError) return error
    throw error
  }
  throw new Error("the snapshot was not refused")
}

describe("snapshots written before languages", () => {
  const docs: Array<IndexDocument> = [
    { url: "https://old.example/de", title: "Dateien kopieren", text: german, lang: "de" },
    { url: "https://old.example/en", title: "Copying files", text: english }
  ]
  // What an engine before languages wrote: every page analysed as English (here: built as English
  // pages), the languages they declare stored, no languages section.
  const builder = new IndexBuilder()
  builder.add(docs.map((d) => ({ ...d, lang: "en" })))
  const asEnglish = builder.build()
  const pages = new StoredFieldsWriter(5)
  for (let doc = 0; doc < asEnglish.documentCount; doc++) {
    const url = asEnglish.parts.pages.get(doc, PageField.Url)
    pages.add([url, asEnglish.parts.pages.get(doc, PageField.Title), asEnglish.parts.pages.get(doc, PageField.Text), "", docs.find((d) => d.url === url)!.lang ?? ""])
  }
  const oldBytes = encodeSnapshot(new SearchIndex({ ...asEnglish.parts, pages: pages.finish(), pageLanguages: undefined }))

  it("loads as English, filters by the languages pages declare", () => {
    const old = decodeSnapshot(oldBytes)
    expect(old.parts.pageLanguages).toBeUndefined()
    expect([...old.analysisCounts]).toEqual([["en", 2]])
    expect(old.reading(parseQuery("Verzeichnisse rekursiv kopieren"), {}).analysis.name).toBe("en")
    expect(links(old, "Dateien")).toEqual(["https://old.example/de"])
    // The filter reads what pages declare: the English page declares nothing.
    expect(links(old, "Dateien files", "de")).toEqual(["https://old.example/de"])
    expect(links(old, "Dateien files", "en")).toEqual([])
    expect([...old.documents()].map((d) => d.lang)).toEqual(["de", undefined])
  })

  it("refuses a languages table naming an analysis this engine lacks, or a page outside the table", () => {
    const bytes = encodeSnapshot(build(docs))
    const unknown = refusal(editMeta(bytes, (meta) => void (meta.languages = [{ language: "xx", analysis: "klingon" }, { language: "en", analysis: "en" }])))
    expect(unknown.reason).toBe("unsupported-version")
    expect(unknown.message).toContain(`analysed as "klingon"`)
    const short = refusal(editMeta(bytes, (meta) => void (meta.languages = [])))
    expect(short.reason).toBe("malformed")
    expect(short.message).toContain("pages.language names entry")
    const noTable = refusal(editMeta(bytes, (meta) => void delete meta.languages))
    expect(noTable.message).toBe("snapshot: section pages.language has no languages table in the metadata")
    const noSection = refusal(editMeta(bytes, (meta) => void (meta.sections = meta.sections.filter((s) => s.name !== "pages.language"))))
    expect(noSection.message).toBe("snapshot: section pages.language is missing")
  })
})

describe("exact forms beside stems", () => {
  const tokens = (text: string, language: string, exactForms: boolean) => {
    const analyzer = new Analyzer({ language: analysisForLanguage(language), exactForms })
    const out: Array<[string, number, number]> = []
    analyzer.analyze(text, (term, position, _start, _end, kind) => void out.push([term, position, kind]))
    return out
  }

  it("gives a word of another language than English its exact form at its position, stop words too; English none", () => {
    expect(tokens("die neuen Ebenen", "de", true)).toEqual([
      [`${exactFormMarker}die`, 0, TokenKind.Form],
      ["neu", 1, TokenKind.Word], [`${exactFormMarker}neuen`, 1, TokenKind.Form],
      ["eben", 2, TokenKind.Word], [`${exactFormMarker}ebenen`, 2, TokenKind.Form]
    ])
    // Elided articles and accents go as the stem's do: l'égalité is "egalite".
    expect(tokens("l'égalité", "fr", true).map(([term]) => term)).toEqual(["egal", `${exactFormMarker}egalite`])
    expect(tokens("the new layers", "en", true)).toEqual(tokens("the new layers", "en", false))
    expect(tokens("die neuen Ebenen", "de", false).some(([, , kind]) => kind === TokenKind.Form)).toBe(false)
    expect(isExactForm(`${exactFormMarker}ebenen`)).toBe(true)
    expect(isExactForm("eben")).toBe(false)
  })

  const page = (path: string, title: string, text: string): IndexDocument => ({ url: `https://forms.example/${path}`, title, text, lang: "de" })
  const index = build([
    page("ebene", "Dialog Ebene", "Die Ebene zeigt den Inhalt des Bildes."),
    page("ebenen", "Menü Ebenen", "Die Ebenen zeigen den Inhalt des Bildes."),
    page("eben", "Kurz", "Eben noch war das Bild leer."),
    page("zusammen", "Zusammen", "Neue Ebenen anlegen und Ebenen verschieben."),
    page("getrennt", "Getrennt", "Ebenen sind nicht neu, verschieben kann man sie.")
  ])
  const ranked = (query: string) => index.rank(query, 10, { collapse: false }).map((r) => r.url.slice("https://forms.example/".length))

  it("ranks the pages that write a word as the query does first, and still finds its other forms", () => {
    expect(ranked("Ebenen").slice(0, 3)).toEqual(["ebenen", "zusammen", "getrennt"])
    expect(ranked("Ebenen")).toEqual(expect.arrayContaining(["ebene", "eben"]))
    expect(ranked("Ebene")[0]).toBe("ebene")
    expect(ranked("Ebene")).toEqual(expect.arrayContaining(["ebenen", "eben"]))
  })

  it("keeps phrases, snippets and spelling to the words: a form is never shown or suggested", () => {
    expect(links(index, `"Ebenen verschieben"`)).toEqual(["https://forms.example/zusammen"])
    for (const hit of index.search("Ebenen", 10).hits) expect(hit.snippet + hit.title).not.toContain(exactFormMarker)
    expect(index.search("Ebenen", 10).hits.find((h) => h.link.endsWith("/ebenen"))!.snippet).toMatch(/Ebenen/)
    const spelling = spellQuery(index, "Ebenne")
    expect(["Ebene", "Ebenen"]).toContain(spelling?.query)
    expect(JSON.stringify(spelling)).not.toContain(exactFormMarker)
  })

  it("plans the forms after every stem, and leaves them out of what snippets look for", () => {
    const plan = index.planFor(parseQuery("die neuen Ebenen verschieben"), false, () => false)!
    const kinds = plan.query.terms.map((t) => t.exactForm === true)
    expect(kinds.filter(Boolean).length).toBeGreaterThan(0)
    // Bit i of a ranking's term mask is the i-th stem only when no form comes before a stem.
    expect(kinds.indexOf(true)).toBe(kinds.filter((form) => !form).length)
    const looked = [...plan.snippet().weights.keys()]
    expect(looked.length).toBe(kinds.filter((form) => !form).length)
    for (const term of looked) expect(isExactForm(term)).toBe(false)
  })

  it("adds nothing to a page's length: a form scores as BM25 of its own beside its stem's", () => {
    const bm25 = (tf: number, length: number, average: number, df: number, n: number, k1 = 0.9, b = 0.4) =>
      Math.log(1 + (n - df + 0.5) / (df + 0.5)) * ((k1 + 1) * tf) / (tf + k1 * (1 - b + (b * length) / average))
    const builder = new IndexBuilder({ fieldWeights: { title: 0, body: 1, url: 0 }, proximity: 0, nearDuplicateBits: -1 })
    // Three words and four (im is a stop word: it has a form, but no length).
    builder.add([page("a", "", "Hunde bellen nachts"), page("b", "", "Hund bellt nachts im Garten")])
    const scored = builder.build().rank("Hunde", 10, { collapse: false })
    const average = (3 + 4) / 2
    expect(scored.map((r) => r.url)).toEqual(["https://forms.example/a", "https://forms.example/b"])
    expect(scored[0]!.score).toBeCloseTo(bm25(1, 3, average, 2, 2) + bm25(1, 3, average, 1, 2), 9)
    expect(scored[1]!.score).toBeCloseTo(bm25(1, 4, average, 2, 2), 9)
  })
})
