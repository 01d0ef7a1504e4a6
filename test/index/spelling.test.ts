import { describe, expect, it } from "vitest"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { linkSegment, type SegmentedIndex } from "../../core/index/SegmentedIndex.ts"
import { freeWordSpans, spellQuery } from "../../core/index/Spelling.ts"
import { parseQuery } from "../../core/index/QueryParser.ts"
import { buildIndex } from "./support.ts"

const page = (path: string, title: string, text: string) => ({ url: `https://docs.example.org/${path}`, title, text })

const docs = [
  page("forms/validation", "Form validation", "Validation of user input: every field is checked before the form is sent. Input validation rules live in the schema."),
  page("forms/fields", "Fields", "Each field has a type. Validation errors name the field and the rule it broke."),
  page("forms/schemas", "Schemas", "A schema lists the fields and their validation rules; the input is checked against it."),
  page("api/requests", "Requests", "A request is checked for validation errors before the handler runs."),
  page("api/errors", "Errors", "Errors carry a status and a message naming the field."),
  page("mail/inbox", "Inbox", "Messages you recieve are kept in the inbox until you delete them."),
  page("mail/sending", "Sending mail", "Messages are sent through the outbox and kept for a week."),
  page("physics/theory", "The theory of flight", "A theory explains lift: the theory of the wing and the flow around it."),
  page("physics/wings", "Wings", "The wing turns the flow of air; lift follows from the theory of circulation."),
  page("physics/engines", "Engines", "An engine gives thrust; the flow through it is heated and expanded."),
  page("physics/rockets", "Rockets", "A rocket's thrust comes from the heated gas it throws back."),
  page("garden/roses", "Roses", "Roses want sun and water; prune them in the spring."),
  page("garden/thistles", "Thistles", "Thistles spread by seed; pull them before they flower. A lone remark on validation.")
]
const index = buildIndex(docs)

describe("did you mean", () => {
  it("corrects a word no page holds to the word one edit away that most pages hold, and says what it did", () => {
    expect(spellQuery(index, "vaidation")).toEqual({ query: "validation", words: [{ from: "vaidation", to: "validation" }], searched: true })
    // Transposed, inserted, replaced letters; the typed word's case kept.
    expect(spellQuery(index, "Valdiation rules")?.words).toEqual([{ from: "Valdiation", to: "Validation" }])
    expect(spellQuery(index, "validattion rules")?.query).toBe("validation rules")
    expect(spellQuery(index, "VALIDATIPN rules")?.query).toBe("VALIDATION rules")
  })

  it("shows a correction as pages write it, not as a stem", () => {
    // "theori" and "theory" both stem to "theori"; pages write "theory".
    expect(spellQuery(index, "theort of flight")?.words).toEqual([{ from: "theort", to: "theory" }])
  })

  it("never corrects a word some page holds, even one a single page misspells", () => {
    expect(spellQuery(index, "recieve messages")).toBeUndefined()
    expect(spellQuery(index, "validation rules")).toBeUndefined()
    expect(spellQuery(index, "thrust")).toBeUndefined()
  })

  it("never corrects quoted, excluded or site: words, technical tokens, words with digits or short words", () => {
    expect(spellQuery(index, `"vaidation" rules`)).toBeUndefined()
    expect(spellQuery(index, `rules -vaidation`)).toBeUndefined()
    expect(spellQuery(index, `rules site:vaidation.org`)).toBeUndefined()
    expect(spellQuery(index, `vaidation.rules`)).toBeUndefined()
    expect(spellQuery(index, `vaidation2 rules`)).toBeUndefined()
    expect(spellQuery(index, `fiel`)).toBeDefined()
    expect(spellQuery(index, `fld rules`)).toBeUndefined()
    // Around them, the free words are corrected and the rest is kept as typed.
    expect(spellQuery(index, `"form" vaidation -errors site:docs.example.org`)?.query).toBe(`"form" validation -errors site:docs.example.org`)
  })

  it("finds nothing for a word no page holds and none is near", () => {
    expect(spellQuery(index, "kubernetes")).toBeUndefined()
    expect(spellQuery(index, "zzzzzz rules")).toBeUndefined()
  })

  it("searches the correction when the query finds nothing as typed, else when the correction is on enough of the best pages", () => {
    // Nothing matches "vaidation" alone: any correction has clearly more hits.
    expect(spellQuery(index, "vaidation")?.searched).toBe(true)
    // With words that have hits: the correction is on at least two pages and on the query's best pages.
    expect(spellQuery(index, "input vaidation")?.searched).toBe(true)
    // "thisle" is one edit from "thistle", on one page only: suggested, not searched, when "spring" finds pages.
    const few = spellQuery(index, "thisles spring")
    expect(few?.words).toEqual([{ from: "thisles", to: "thistles" }])
    expect(few?.searched).toBe(false)
    expect(spellQuery(index, "thisles")?.searched).toBe(true)
  })

  it("does not search a correction that is not on the best pages of the query's other words", () => {
    // "thrist" is on no page; "thrust" is, on two pages, but none of the garden's: suggested only.
    const off = spellQuery(index, "garden roses prune thrist")
    expect(off?.words).toEqual([{ from: "thrist", to: "thrust" }])
    expect(off?.searched).toBe(false)
    expect(spellQuery(index, "engine heated thrist")?.searched).toBe(true)
  })

  it("counts the words of pages added since the snapshot as known", async () => {
    const builder = new IndexBuilder()
    builder.add([page("garden/vaidation", "Vaidation", "A vaidation is a garden plant, and another vaidation grows here.")])
    const segment = builder.build()
    const steps = linkSegment(index, segment)
    let next = steps.next()
    while (next.done !== true) next = steps.next()
    const both = next.value as SegmentedIndex
    expect(spellQuery(both, "vaidation")).toBeUndefined()
    expect(spellQuery(both, "garden vaidaton")?.words).toEqual([{ from: "vaidaton", to: "vaidation" }])
  })

  it("finds the free words where the query parser does", () => {
    for (const query of [`a "b c" -d e site:x.org -site:y.org f`, `"unclosed g h`, `- lone -- dash`, `x"y z`, `tab\tsep\u3000wide`]) {
      const spans = freeWordSpans(query, 2000)
      expect(spans.map((s) => query.slice(s.start, s.end)).join(" ")).toBe(parseQuery(query).words)
    }
  })

  it("never throws on odd input", () => {
    for (const query of ["", " ", "\"", "-", "🙂🙂🙂🙂", "ÉÉÉÉÉ", "a".repeat(5000), "валидация", "東京都に住んで"]) {
      expect(() => spellQuery(index, query)).not.toThrow()
    }
    expect(spellQuery(new IndexBuilder().build(), "vaidation")).toBeUndefined()
  })
})
