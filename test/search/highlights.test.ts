/**
 * Highlights: the passages of a page most relevant to a query, in whole sentences and page
 * order, found with the engine's analysis (stems, folding, stop words), within the budget.
 */
import { describe, expect, it } from "vitest"
import { highlightPassages, highlightQuery, highlights, PASSAGE_SEPARATOR, sentenceSpans } from "../../core/search/Highlights.ts"

const sentencesOf = (text: string) => {
  const spans = sentenceSpans(text)
  const out: Array<string> = []
  for (let i = 0; i < spans.length; i += 2) out.push(text.slice(spans[i], spans[i + 1]))
  return out
}

const page = [
  "Installing Periscope",
  "Periscope runs on Node 24. Download it from the site, e.g. with curl. Then run npm install.",
  "",
  "Configuration",
  "The config file names the providers. Dr. Smith wrote the first version in 2020. See Fig. 3 for the layout.",
  "",
  "Compaction",
  "Compaction merges the index's segments in the background. It runs while the index answers queries. Nothing else changes.",
  "",
  "Backups",
  "A backup copies the snapshot file. Restoring one replaces the index at the next start."
].join("\n")

describe("sentences", () => {
  it("end at . ! ? before a space, at a blank line and at a line of its own; abbreviations, initials and list numbers do not end one", () => {
    expect(sentencesOf(page).slice(0, 8)).toEqual([
      "Installing Periscope",
      "Periscope runs on Node 24.",
      "Download it from the site, e.g. with curl.",
      "Then run npm install.",
      "Configuration",
      "The config file names the providers.",
      "Dr. Smith wrote the first version in 2020.",
      "See Fig. 3 for the layout."
    ])
    expect(sentencesOf("1. Open the file.\n2. Edit it! Done? \"Yes.\" Next")).toEqual(["1. Open the file.", "2. Edit it!", "Done?", "\"Yes.\"", "Next"])
    expect(sentencesOf("Version 3.5 is out. J. R. Smith said so.")).toEqual(["Version 3.5 is out.", "J. R. Smith said so."])
  })

  it("a line wrapped at a fixed width goes on into the next line when that one goes on in lower case", () => {
    const wrapped = "an experimental study of a wing in a propeller slipstream was\nmade to determine the lift .  the results\nwere intended as a basis .\n  Another paragraph starts here ."
    expect(sentencesOf(wrapped)).toEqual([
      "an experimental study of a wing in a propeller slipstream was\nmade to determine the lift .",
      "the results\nwere intended as a basis .",
      "Another paragraph starts here ."
    ])
  })

  it("a run with no sentence end is cut at spaces into pieces of at most the passage size", () => {
    const run = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ")
    const pieces = sentencesOf(run)
    expect(pieces.length).toBeGreaterThan(2)
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(500)
      expect(run).toContain(piece)
      expect(piece).toMatch(/^word\d+( word\d+)*$/)
    }
  })

  it("Chinese and Japanese full stops end a sentence without a space after them", () => {
    expect(sentencesOf("今天天气很好。我们去公园吧！好吗？")).toEqual(["今天天气很好。", "我们去公园吧！", "好吗？"])
  })
})

describe("highlights", () => {
  it("the passage holding the query's words, by their stems, in whole sentences, its heading with it", () => {
    const passages = highlightPassages(page, highlightQuery("how does compacting work"), { maxChars: 200 })
    expect(passages.map((p) => p.text)).toEqual(["Compaction\nCompaction merges the index's segments in the background. It runs while the index answers queries. Nothing else changes."])
    expect(page.slice(passages[0]!.start, passages[0]!.end)).toBe(passages[0]!.text)
  })

  it("several passages in page order, joined; a word already shown counts half in the next choice", () => {
    const text = highlights(page, highlightQuery("backup snapshot install"), { maxChars: 400, passageChars: 150 })
    const parts = text.split(PASSAGE_SEPARATOR)
    expect(parts).toHaveLength(2)
    expect(parts[0]).toContain("npm install")
    expect(parts[1]).toBe("Backups\nA backup copies the snapshot file. Restoring one replaces the index at the next start.")
  })

  it("stays within maxChars with its separators, and within maxPassages", () => {
    for (const maxChars of [60, 120, 250, 400]) {
      const text = highlights(page, highlightQuery("periscope index snapshot providers"), { maxChars, passageChars: 120 })
      expect(text.length, String(maxChars)).toBeLessThanOrEqual(maxChars)
      expect(text.length).toBeGreaterThan(0)
    }
    expect(highlightPassages(page, highlightQuery("periscope index snapshot providers"), { maxChars: 1000, passageChars: 100, maxPassages: 1 })).toHaveLength(1)
  })

  it("a page that never names the query's words gives its opening; a page that fits is given whole", () => {
    expect(highlights(page, highlightQuery("zebra"), { maxChars: 200, passageChars: 100 })).toBe("Installing Periscope\nPeriscope runs on Node 24. Download it from the site, e.g. with curl.")
    expect(highlights("Short page.\n\nTwo lines.", highlightQuery("zebra"), { maxChars: 200 })).toBe("Short page.\nTwo lines.")
    expect(highlights("   ", highlightQuery("zebra"), { maxChars: 200 })).toBe("")
  })

  it("question words, -excluded words and site: filters are not looked for; phrases are", () => {
    expect([...highlightQuery("what is the best way to restore a backup -snapshot site:example.com \"next start\"").ids.keys()]).toEqual(["best", "wai", "restor", "backup", "next", "start"])
  })

  it("the passage holding most of the query's distinct words wins, wherever it is in the page", () => {
    const text = [
      "The index stores pages. The index answers queries.",
      "The index keeps a snapshot.",
      "",
      "Snapshots are written once a day by the index writer."
    ].join("\n")
    expect(highlights(text, highlightQuery("index writer"), { maxChars: 60, passageChars: 60 })).toBe("Snapshots are written once a day by the index writer.")
  })
})
