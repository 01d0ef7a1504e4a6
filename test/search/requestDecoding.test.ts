/**
 * The search body is decoded by code Effect's schema JIT compiler generates (as the chat
 * request is: test/chat/requestDecoding.test.ts). Random bodies, valid and invalid, go through
 * the compiled and the interpreted decoder and must get the same answers; toSearchQuery then
 * trims the keywords and defaults `num`.
 */
import { describe, expect, it } from "vitest"
import { SearchBody, toSearchQuery } from "../../core/api/SearchWire.ts"
import { decoderFor } from "../../core/schema/Decode.ts"
import { seeded } from "../index/support.ts"
import { expectSameAnswers, randomBody } from "../support/decoderEquivalence.ts"

const compiled = decoderFor(SearchBody, "request body", { compiled: true })
const interpreted = decoderFor(SearchBody, "request body")

const random = seeded(31)
const pick = <A>(values: ReadonlyArray<A>): A => values[Math.floor(random() * values.length)]!

const fields: Record<string, () => unknown> = {
  keywords: () => pick(["effect schema", "  padded  ", "", "   ", "a".repeat(1000), ` ${"a".repeat(1000)} `, "a".repeat(1001), 5, null, ["x"]]),
  num: () => pick([1, 10, 100, 0, 101, 2.5, "10", null]),
  freshness: () => pick(["day", "week", "decade", { from: "2024-01-01", to: "2024-02-01" }, { from: "yesterday" }, 3]),
  language: () => pick(["en", "deu", "english", "e1", 1]),
  region: () => pick(["US", "usa", "u", null]),
  safeSearch: () => pick(["off", "moderate", "strict", "on"]),
  sources: () => pick([["engine"], [], ["a", "b"], "engine", [1]]),
  explain: () => pick([true, false, "yes"]),
  extra_field: () => pick([1, "kept out"])
}

const body = () => randomBody(random, { keywords: "effect schema" }, fields)

describe("the compiled search body decoder", () => {
  it("answers as the interpreter does on 3,000 random bodies, valid and invalid", () => {
    expectSameAnswers(compiled, interpreted, body, 3000)
  })

  it("counts the keywords trimmed, and toSearchQuery trims them and defaults num", () => {
    const padded = compiled({ keywords: ` ${"a".repeat(1000)} ` })
    if (padded._tag !== "Success") throw new Error(padded.failure.message)
    expect(toSearchQuery(padded.success)).toEqual({ keywords: "a".repeat(1000), num: 10 })
    expect(compiled({ keywords: "   " })._tag).toBe("Failure")
    expect(compiled({ keywords: "a".repeat(1001) })._tag).toBe("Failure")
  })
})
