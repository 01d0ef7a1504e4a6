import { describe, expect, it } from "vitest"
import { Analyzer } from "../../core/index/analysis/Analyzer.ts"
import { analysisForLanguage } from "../../core/index/analysis/LanguageAnalysis.ts"
import { expandQuery, rankExpanded, searchExpanded } from "../../core/index/Expansion.ts"
import { PageField } from "../../core/index/SearchIndex.ts"
import { buildIndex, links, seeded } from "./support.ts"

const page = (path: string, title: string, text: string) => ({ url: `https://docs.example.org/${path}`, title, text })

// Pages about sorting; one about key functions that never says "sort" or "list"; and filler
// pages of other words, so that the sorting words are on few enough of the pages to be telling.
const random = seeded(7)
const filler = ["garden", "river", "music", "bread", "winter", "harbour", "copper", "violin", "meadow", "lantern", "pepper", "canyon"]
/** `count` notes of twelve random words of `words`: at `path`0, `path`1, ..., titled `title` 0, 1, ... */
const notes = (count: number, path: string, title: string, words: ReadonlyArray<string>) =>
  Array.from({ length: count }, (_, i) => page(`${path}${i}`, `${title} ${i}`, Array.from({ length: 12 }, () => words[Math.floor(random() * words.length)]).join(" ")))
const docs = [
  page("howto/sorting", "Sorting HOWTO", "Sorting a list: sorted returns a new list ordered by a key function; the comparison uses each element's key."),
  page("library/list-sort", "list.sort", "The sort method orders the list in place; pass a key function and reverse to change the order."),
  page("library/sorted", "sorted", "sorted takes any iterable and a key function and returns a new sorted list in ascending order."),
  page("howto/key-functions", "Key functions", "A key function maps each element to the value compared: a lambda is the usual key, and the order follows it."),
  page("library/json", "json", "json.dumps writes objects as text; sort_keys orders the keys of mappings."),
  ...notes(60, "misc/", "Note", filler)
]
const index = buildIndex(docs)
const urls = (ranked: { docs: Int32Array }) => Array.from(ranked.docs, (d) => index.parts.pages.get(d, PageField.Url))

describe("query expansion (RM3)", () => {
  it("adds the words the best pages share, and finds a page that has them but not the words asked", () => {
    const expansion = expandQuery(index, "sort list")!
    expect(expansion.added.map((a) => a.term)).toContain("kei")
    expect(links(index, "sort list", 10)).not.toContain("https://docs.example.org/howto/key-functions")
    expect(urls(rankExpanded(index, expansion, 10))).toContain("https://docs.example.org/howto/key-functions")
  })

  it("leaves out words on more than a tenth of the pages", () => {
    const expansion = expandQuery(index, "garden river")!
    for (const { term } of expansion.added) expect(filler).not.toContain(term)
  })

  it("ranks as the plain query with no words to add or all the weight on the query's own", () => {
    const plain = index.rank("sort list", 10).map((r) => r.url)
    for (const settings of [{ documents: 10, terms: 0, originalWeight: 0.5 }, { documents: 0, terms: 10, originalWeight: 0.5 }, { documents: 10, terms: 10, originalWeight: 1 }]) {
      const expansion = expandQuery(index, "sort list", settings)!
      expect(expansion.added).toEqual([])
      expect(urls(rankExpanded(index, expansion, 10))).toEqual(plain)
    }
  })

  it("keeps exclusions and site filters, and shows snippets of the words asked", () => {
    const answer = searchExpanded(index, "sort list -lambda", 10)
    expect(answer.hits.map((h) => h.link)).not.toContain("https://docs.example.org/howto/key-functions")
    expect(answer.hits[0]!.snippet.toLowerCase()).toMatch(/sort|list/)
    expect(searchExpanded(index, "sort list site:nowhere.example", 10).hits).toEqual([])
    expect(searchExpanded(index, "zzzz", 10).hits).toEqual([])
    expect(searchExpanded(index, "sort list", 0).hits).toEqual([])
  })
})

describe("query expansion in a language", () => {
  const en = (path: string, title: string, text: string) => ({ ...page(path, title, text), lang: "en" })
  const de = (path: string, title: string, text: string) => ({ ...page(path, title, text), lang: "de" })
  const fillerDe = ["Garten", "Fluss", "Musik", "Brot", "Winter", "Hafen", "Kupfer", "Geige", "Wiese", "Laterne", "Pfeffer", "Schlucht"]
  const mixed = buildIndex([
    de("de/sortieren", "Listen sortieren", "Eine Liste sortieren: sorted liefert eine neue Liste, geordnet nach Schlüsselfunktionen."),
    de("de/list-sort", "list.sort", "Die Methode sort ordnet die Liste an Ort und Stelle; Schlüsselfunktionen bestimmen die Ordnung."),
    de("de/schluessel", "Schlüsselfunktionen", "Schlüsselfunktionen bilden jedes Element auf den verglichenen Wert ab."),
    en("en/sorting", "Sorting HOWTO", "Sorting a list: sorted returns a new list ordered by a key function."),
    en("en/list-sort", "list.sort", "The sort method orders the list in place; pass a key function."),
    ...notes(40, "de/notiz-", "Notiz", fillerDe).map((note) => ({ ...note, lang: "de" })),
    ...notes(40, "en/note-", "Note", filler).map((note) => ({ ...note, lang: "en" }))
  ])
  const word = "Schlüsselfunktionen"
  const german = new Analyzer({ language: analysisForLanguage("de") }).normalizeWord(word)
  const english = new Analyzer().normalizeWord(word)

  it("reads each feedback page's words as its language's analysis indexed them", () => {
    // Read as English the word is not in the dictionary: the model would lose it.
    expect(german).not.toBe(english)
    const expansion = expandQuery(mixed, "Liste sortieren", undefined, { language: "de" })!
    expect(expansion.added.map((a) => a.term)).toContain(german)
  })

  it("keeps to the language asked, as search does", () => {
    const answer = searchExpanded(mixed, "sort list", 10, undefined, { language: "de" })
    expect(answer.hits.length).toBeGreaterThan(0)
    for (const hit of answer.hits) expect(hit.link).toMatch(/\/de\//)
    expect(searchExpanded(mixed, "sort list", 10, undefined, { language: "en" }).hits.map((h) => h.link)).toContain("https://docs.example.org/en/sorting")
    expect(searchExpanded(mixed, "sort list", 10, undefined, { language: "fr" }).hits).toEqual([])
  })
})
