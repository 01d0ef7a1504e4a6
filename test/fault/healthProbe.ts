/**
 * Requests /healthz at a steady pace while a server starts, reloads or stops, and
 * sorts every request by how it ended: answered, refused (nothing listening), hung
 * (10 s of silence) or other. The start-up tests assert that none hangs.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export type Outcome = "refused" | "answered" | "hung" | "other"

/** Sends /healthz every `everyMs` until `stop()`; every request gets an outcome (a hang is a 10 s silence). */
export const probe = (url: string, everyMs: number) => {
  const outcomes: Array<Promise<Outcome>> = []
  let running = true
  const loop = (async () => {
    while (running) {
      outcomes.push(
        fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) }).then(
          async (r) => (await r.text(), r.ok ? "answered" : "other"),
          (e: Error) => (e.name === "TimeoutError" ? "hung" : /ECONNREFUSED/.test(String((e.cause as Error)?.message ?? e)) ? "refused" : "other")
        )
      )
      await sleep(everyMs)
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      const all = await Promise.all(outcomes)
      const count = (o: Outcome) => all.filter((x) => x === o).length
      return { total: all.length, refused: count("refused"), answered: count("answered"), hung: count("hung"), other: count("other") }
    }
  }
}
