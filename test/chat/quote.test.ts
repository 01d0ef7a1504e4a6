/** What periscope-grounded quotes: whole sentences, the one nearest the question, never a cut piece. */
import { describe, expect, it } from "vitest"
import { quoteOf } from "../../core/chat/Quote.ts"

describe("quoteOf", () => {
  it("quotes the whole sentence that shares most words with the question, with the next one when both fit", () => {
    const text = "PostgreSQL is a database. VACUUM reclaims storage occupied by dead tuples. It runs on its own in the background.\n\nANALYZE collects statistics."
    expect(quoteOf(text, "how does vacuum reclaim storage")).toBe("VACUUM reclaims storage occupied by dead tuples. It runs on its own in the background.")
  })

  it("leaves out the cut ends of a snippet and code, and never cuts a sentence", () => {
    const snippet = "…tells the bar when it is complete. After that all we need to do is tick() appropriately. Then the bar is drawn again on every tick and…"
    expect(quoteOf(snippet, "progress bar")).toBe("After that all we need to do is tick() appropriately.")
    const long = `${"This sentence goes on and on ".repeat(20)}without an end in sight.`
    expect(quoteOf(long, "sentence")).toBeUndefined()
    expect(quoteOf("…a piece cut out of a longer sentence…", "piece")).toBeUndefined()
    expect(quoteOf("const bar = require('progress'); // make a bar.", "bar")).toBeUndefined()
  })

  it("takes a line of its own as whole, skips one that repeats the title, and prefers a finished sentence", () => {
    const page = "# Progress\n\neasy to use progress bar for terminal applications\n\nA progress bar shows how much of a task is done."
    expect(quoteOf(page, "progress bar terminal")).toBe("easy to use progress bar for terminal applications")
    expect(quoteOf(page, "progress bar terminal", "Progress: easy to use progress bar for terminal applications")).toBe(
      "A progress bar shows how much of a task is done."
    )
    expect(quoteOf("- Works in **asynchronous** and [synchronous](https://example.org/) tasks", "synchronous tasks")).toBe(
      "Works in asynchronous and synchronous tasks"
    )
  })

  it("quotes the first whole sentence when none shares a word with the question, and nothing from an empty text", () => {
    expect(quoteOf("Otters hold hands while they sleep. They live in kelp forests.", "database tuning")).toBe(
      "Otters hold hands while they sleep. They live in kelp forests."
    )
    expect(quoteOf("", "anything")).toBeUndefined()
  })
})
