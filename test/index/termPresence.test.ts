import { describe, expect, it } from "vitest"
import { Analyzer } from "../../core/index/analysis/Analyzer.ts"
import type { IndexDocument } from "../../core/index/Document.ts"
import { type CompiledQuery, proximityDepth, rankTopK, rerankByProximity } from "../../core/index/Ranker.ts"
import { PageField } from "../../core/index/SearchIndex.ts"
import { termsInField } from "../../core/index/TermPresence.ts"
import { buildIndex, seeded } from "./support.ts"

const random = seeded(23)
const words = ["kernel", "scheduler", "latency", "memory", "page", "cache", "socket", "buffer", "thread", "signal", "queue", "timer"]
const some = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * random() * words.length)]!).join(" ")
// Titles hold words the texts often lack, so many results match a query word only in their title.
const docs: Array<IndexDocument> = Array.from({ length: 400 }, (_, i) => ({
  url: `https://presence.example/${i}`,
  title: `${some(3)} ${words[i % words.length]}`,
  text: some(5 + Math.floor(random() * 60))
}))
const index = buildIndex(docs)
const web = index.parts.web
const body = web.meta.fields.findIndex((f) => f.name === "body")
const analyzer = new Analyzer({ stemming: index.options.stemming })
const termsOf = (text: string) => {
  const terms = new Set<string>()
  analyzer.analyze(text, (term) => void terms.add(term))
  return terms
}
const queries = Array.from({ length: 60 }, () => some(2 + Math.floor(random() * 3)))

describe("terms present in a result's text", () => {
  it("are read from the postings: the same words as analysing the stored text", () => {
    let checked = 0
    let missing = 0
    for (const q of queries) {
      const termIds = [...termsOf(q)].map((t) => web.lookup(t))
      const ranked = Int32Array.from(index.rank(q, 20).map((r) => r.doc))
      const masks = termsInField(web, termIds, ranked, body)!
      ranked.forEach((doc, i) => {
        const inText = termsOf(index.parts.pages.get(doc, PageField.Text))
        termIds.forEach((id, bit) => {
          const present = inText.has(web.termText(id))
          expect(((masks[i]! >>> bit) & 1) === 1, `${q}: ${web.termText(id)} in page ${doc}`).toBe(present)
          checked++
          if (!present) missing++
        })
      })
    }
    // Both cases occur, or the test says nothing.
    expect(checked).toBeGreaterThan(500)
    expect(missing).toBeGreaterThan(20)
  })

  it("come with proximity re-ranking, for the same documents, in its order", () => {
    let compared = 0
    for (const q of queries) {
      const termIds = [...termsOf(q)].map((t) => web.lookup(t))
      if (termIds.length < 2) continue
      const query: CompiledQuery = { terms: termIds.map((termId) => ({ termId, weight: 1 })), phrases: [], requiredTermIds: [], excluded: [] }
      const reranked = rerankByProximity(web, query, rankTopK(web, query, proximityDepth), 1)
      expect(reranked.termsIn?.field).toBe(body)
      expect(Array.from(reranked.termsIn!.masks)).toEqual(Array.from(termsInField(web, termIds, reranked.docs, body)!))
      compared++
    }
    expect(compared).toBeGreaterThan(30)
  })

  it("are not masked past 31 query terms", () => {
    expect(termsInField(web, Array.from({ length: 32 }, () => web.lookup("kernel")), Int32Array.of(0), body)).toBeUndefined()
  })
})
