/**
 * How often a busy thread loses its core, the floor under every p99 the other benches print: a
 * loop that reads the clock notes each gap longer than `--gap` ms (the thread was preempted: by
 * the kernel, the hypervisor or another process), first on one thread, then on as many threads
 * as there are cores at once (a query ranked on two threads, or a server beside its client).
 *
 *   node test/bench/machineJitter.ts [--seconds 5] [--gap 0.3]
 *
 * Prints, per setup, the gaps per second per thread and the longest ones, and what that means
 * for a p99 over a pass of 250 queries of about 0.4 ms (the search bench's): how many of its
 * queries a gap lands on. Not in `npm run bench`: a diagnostic of the machine, not of Periscope.
 */
import { cpus } from "node:os"
import { parseArgs } from "node:util"
import { Worker } from "node:worker_threads"

const { values } = parseArgs({ options: { seconds: { type: "string", default: "5" }, gap: { type: "string", default: "0.3" } } })
const seconds = Number(values.seconds)
const gapMs = Number(values.gap)
if (!(seconds > 0) || !(gapMs > 0)) throw new Error("--seconds and --gap must be positive numbers")

/** The spinning loop, as a worker's source: it posts the gaps it saw, longest first. */
const spinSource = `
const { parentPort, workerData } = require("node:worker_threads")
const { seconds, gapMs } = workerData
const end = performance.now() + seconds * 1000
const gaps = []
let last = performance.now()
for (;;) {
  const now = performance.now()
  if (now - last > gapMs) gaps.push(now - last)
  last = now
  if (now > end) break
}
parentPort.postMessage(gaps.sort((a, b) => b - a))
`

const spin = (): Promise<Array<number>> =>
  new Promise((done, fail) => {
    const worker = new Worker(spinSource, { eval: true, workerData: { seconds, gapMs } })
    worker.once("message", done)
    worker.once("error", fail)
  })

const describe = (label: string, perThread: ReadonlyArray<ReadonlyArray<number>>) => {
  const all = perThread.flat().sort((a, b) => b - a)
  const rate = all.length / perThread.length / seconds
  const over1 = all.filter((g) => g > 1).length / perThread.length / seconds
  // A pass of 250 queries of 0.4 ms lasts 0.1 s: the gaps expected in it, each one query's delay.
  const perPass = rate * 0.1
  console.log(
    `${label}: ${rate.toFixed(1)} gaps > ${gapMs} ms per second per thread (${over1.toFixed(1)} over 1 ms); longest ${all.slice(0, 6).map((g) => g.toFixed(2)).join(", ") || "none"} ms; ` +
      `in a 0.1 s pass of 250 queries ${perPass.toFixed(2)} expected (a p99 over 250 is the 3rd slowest)`
  )
}

const threads = Math.max(2, cpus().length)
console.log(`${cpus().length} cores, ${process.version}; ${seconds} s per setup, gaps over ${gapMs} ms`)
describe("one busy thread", [await spin()])
describe(`${threads} busy threads at once`, await Promise.all(Array.from({ length: threads }, spin)))
