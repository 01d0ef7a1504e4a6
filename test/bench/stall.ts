/**
 * The stall table: each hostile request of test/fault/stallRig.ts against the real Node server
 * (a child process) while searches go on at a fixed rate over loopback; for each, its answer and
 * time, the searches' p50, p99 and failures while it ran, and the server's resident memory
 * before it, at the peak and after (once back within 20% of before, or after 20 s). The stall
 * test (test/fault/stall.e2e.test.ts) asserts the answers, the failures and the memory; the timings
 * live here only.
 *
 *   node test/bench/stall.ts            every case once
 *   node test/bench/stall.ts --rounds 3 every case three times, rows in order
 */
import { availableParallelism, loadavg } from "node:os"
import { isDocumented, type Measured, SEARCH_RATE, STALL_CASES, startStallRig } from "../fault/stallRig.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const roundsArg = process.argv.indexOf("--rounds")
const rounds = roundsArg > 0 ? wholeNumberOption("--rounds", process.argv[roundsArg + 1]) : 1

const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(0)}`
const pad = (s: string, n: number) => s.padEnd(n)

const answerText = (m: Measured): string => {
  const counts = new Map<string, number>()
  for (const a of m.answers) {
    const key = a.status === 200 ? "200" : `${a.status} ${a.type}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([key, n]) => (m.answers.length === 1 ? key : `${n}x ${key}`)).join(", ")
}

console.log(`Stall bench: the Node server as a child process, ${SEARCH_RATE} searches/s over loopback while each hostile request runs`)
console.log(`Node ${process.version}, ${availableParallelism()} cores, load average ${loadavg().map((n) => n.toFixed(2)).join(" ")}\n`)
const rig = await startStallRig()
const rows: Array<Measured> = []
let wrong = 0
try {
  console.log(
    pad("hostile request", 50) + pad("answer", 40) + pad("s", 7) + pad("searches", 10) + pad("p50 ms", 8) + pad("p99 ms", 8) + pad("failed", 8) +
      pad("MB before", 11) + pad("peak", 7) + pad("after", 7) + "settled s"
  )
  for (let round = 0; round < rounds; round++) {
    for (const test of STALL_CASES) {
      const m = await rig.measure(test)
      rows.push(m)
      const documented = m.answers.every((a) => isDocumented(test.name, a))
      if (!documented || m.searches.failed > 0) wrong++
      console.log(
        pad(m.name, 50) + pad(answerText(m) + (documented ? "" : " (NOT DOCUMENTED)"), 40) + pad((m.ms / 1000).toFixed(2), 7) +
          pad(String(m.searches.sent), 10) + pad(m.searches.p50.toFixed(0), 8) + pad(m.searches.p99.toFixed(0), 8) +
          pad(String(m.searches.failed), 8) + pad(mb(m.memory.before), 11) + pad(mb(m.memory.peak), 7) + pad(mb(m.memory.after), 7) +
          (m.memory.settledMs / 1000).toFixed(1)
      )
      if (m.searches.failures.length > 0) console.log(`  search failures: ${m.searches.failures.join("; ")}`)
      for (const message of new Set(m.answers.filter((a) => !isDocumented(test.name, a)).map((a) => `${a.status} ${a.type}: ${a.message}`))) {
        console.log(`  not documented: ${message}`)
      }
    }
  }
  console.log(`\nDocumented answers: ${wrong === 0 ? "all" : `${wrong} row(s) not`}; load average now ${loadavg().map((n) => n.toFixed(2)).join(" ")}.`)
} finally {
  await rig.close()
}
if (wrong > 0) process.exitCode = 1
