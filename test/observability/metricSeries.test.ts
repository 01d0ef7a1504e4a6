/**
 * labelled (core/store/MetricSeries.ts): a series made once per distinct label set, found again
 * for the same values, never shared by two label sets, label values that look like separators
 * included.
 */
import { describe, expect, it } from "vitest"
import { labelled } from "../../core/store/MetricSeries.ts"

describe("labelled", () => {
  it("makes a series once per label set and hands the same one back", () => {
    const made: Array<Record<string, string>> = []
    const series = labelled((attributes) => {
      made.push({ ...attributes })
      return { attributes: { ...attributes } }
    })
    const a = series({ method: "POST", route: "/api/search/webSearch" })
    expect(series({ method: "POST", route: "/api/search/webSearch" })).toBe(a)
    const b = series({ method: "GET", route: "/api/search/webSearch" })
    const c = series({ method: "POST", route: "/v1/chat/completions" })
    expect(new Set([a, b, c]).size).toBe(3)
    expect(made).toEqual([
      { method: "POST", route: "/api/search/webSearch" },
      { method: "GET", route: "/api/search/webSearch" },
      { method: "POST", route: "/v1/chat/completions" }
    ])
    expect(c.attributes).toEqual({ method: "POST", route: "/v1/chat/completions" })
  })

  it("keeps label sets apart whose values would run together in a joined key", () => {
    const series = labelled((attributes) => ({ ...attributes }))
    const pairs = [["a\u0000b", "c"], ["a", "b\u0000c"], ["a=b", "c"], ["a", "=b=c"], ["", "abc"], ["abc", ""]] as const
    const found = pairs.map(([x, y]) => series({ x, y }))
    expect(new Set(found).size).toBe(pairs.length)
    pairs.forEach(([x, y], i) => expect(found[i]).toEqual({ x, y }))
  })

  it("tells a label set apart from a longer one that begins with it", () => {
    const series = labelled((attributes) => ({ count: Object.keys(attributes).length }))
    // One labelled function names the same labels every call; a shorter set still gets a series of its own.
    const short = series({ cache: "search" })
    const long = series({ cache: "search", outcome: "hit" })
    expect(short).not.toBe(long)
    expect(series({ cache: "search" })).toBe(short)
  })
})
