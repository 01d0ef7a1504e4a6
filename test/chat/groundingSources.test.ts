/** Grounding's sources: one page is one source by the page key fusion uses too (UrlNormalizer). */
import { describe, expect, it } from "vitest"
import { selectSources, SourceRegistry } from "../../core/chat/GroundingSources.ts"

const hit = (link: string, title = link) => ({ title, link, snippet: `about ${title}`, date: null })

describe("grounding sources", () => {
  it("selects distinct pages: spellings of one address, tracking parameters included, count once", () => {
    const chosen = selectSources([
      hit("https://docs.example/guide?utm_source=brave", "Guide"),
      hit("http://www.docs.example/guide/", "Guide again"),
      hit("https://docs.example/guide#install", "Guide, a section"),
      hit("  ", "No address"),
      hit("https://docs.example/guide?page=2&lang=en", "Guide, page 2"),
      hit("https://docs.example/guide?lang=en&page=2&fbclid=x", "Guide, page 2 again"),
      hit("https://docs.example/other", "Other")
    ], 5)
    expect(chosen.map((h) => h.title)).toEqual(["Guide", "Guide, page 2", "Other"])
  })

  it("numbers a page once, however a later search or fetch spells it, and keeps the longer text", () => {
    const registry = new SourceRegistry()
    const first = registry.add(hit("https://docs.example/guide", "Guide"))
    const again = registry.add(hit("https://docs.example/guide/?utm_campaign=x", "Guide"), "the whole page text, longer than the snippet")
    expect(first.number).toBe(1)
    expect(again.number).toBe(1)
    expect(again.url).toBe("https://docs.example/guide")
    expect(registry.sources).toHaveLength(1)
    expect(registry.get(1)!.text).toBe("the whole page text, longer than the snippet")
    expect(registry.add(hit("https://docs.example/other")).number).toBe(2)
  })
})
