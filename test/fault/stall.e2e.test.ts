/**
 * Nothing one request does stalls the rest: the real Node server (a child process) answers a
 * steady load of searches while each hostile request of test/fault/stallRig.ts runs (nested
 * HTML, a PDF bomb, a PDF of 20,000 pages, ten 9 MB pages at once, hostile tool calls, a page
 * added to the index). For each: no search fails, the hostile request gets its documented
 * answer, and the server's memory comes back within 20% of its level before. Timings are not
 * judged here: test/bench/stall.ts prints them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isDocumented, MEMORY_MARGIN, STALL_CASES, type StallRig, startStallRig } from "./stallRig.ts"

let rig: StallRig

beforeAll(async () => {
  rig = await startStallRig()
}, 180_000)

afterAll(async () => {
  await rig?.close()
})

describe.skipIf(process.platform !== "linux")("hostile requests while searches go on", () => {
  it.each(STALL_CASES.map((c) => [c.name, c] as const))("%s", async (_name, test) => {
    const measured = await rig.measure(test)
    expect(measured.searches.failures).toEqual([])
    expect(measured.searches.failed).toBe(0)
    expect(measured.searches.total).toBeGreaterThan(0)
    for (const answer of measured.answers) expect(isDocumented(test.name, answer), `${test.documented}: got ${JSON.stringify(answer)}`).toBe(true)
    expect(measured.memory.after, `memory ${measured.memory.before} before, ${measured.memory.peak} at the peak, ${measured.memory.after} after`)
      .toBeLessThanOrEqual(measured.memory.before * MEMORY_MARGIN)
  }, 180_000)
})
