/**
 * Reads the first `limit` lines of a JSONL file of any size: a million passages are more text
 * than one JavaScript string may hold, so the file is split on newline bytes and each line
 * decoded on its own.
 */
import { closeSync, openSync, readSync } from "node:fs"

export const readJsonlLines = <A>(path: string, limit = Infinity): Array<A> => {
  const out: Array<A> = []
  const decoder = new TextDecoder()
  const fd = openSync(path, "r")
  try {
    const chunk = Buffer.allocUnsafe(16 << 20)
    let carry: Buffer = Buffer.alloc(0)
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null)
      if (n === 0) break
      const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n)
      let start = 0
      for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
        if (nl > start) out.push(JSON.parse(decoder.decode(data.subarray(start, nl))) as A)
        start = nl + 1
        if (out.length >= limit) return out
      }
      carry = Buffer.from(data.subarray(start))
    }
    if (carry.length > 0 && out.length < limit) out.push(JSON.parse(decoder.decode(carry)) as A)
    return out
  } finally {
    closeSync(fd)
  }
}

/** The JSON a bench worker prints as the last line of its standard output (earlier lines are its chatter). */
export const lastJsonLine = <A>(stdout: string): A => JSON.parse(stdout.trim().split("\n").pop()!) as A
