/**
 * How much of what a request allocates survives a young-generation collection (is promoted to
 * the old generation), per HTTP client and per layer of Periscope's chat path: the source of
 * the streaming first chunk's p99 tail (a scavenge that promotes megabytes pauses the process
 * for 10-30 ms). Each path runs alone in a process started with --trace-gc-nvp, one request at
 * a time against the mock upstream (64-word streamed answers, in its own process); V8's
 * scavenge lines between the worker's markers are summed.
 *
 *   node test/bench/gcPromotion.ts [--requests 3000] [--semi-space 2] [--only <part of a path's name>]
 *
 * Paths without I/O show what the runtime alone promotes: promises and an Effect fiber through
 * ten async steps, and an Effect Stream of eight arrays passed on whole (map) or each as an
 * inner stream (flatMap). Prints, per path, the scavenges, their mean and longest pause, and KB allocated and promoted
 * per request. `--semi-space` (MB) sets the young generation's size; a share promoted that
 * does not change with it means the promoted objects are kept by something other than being
 * in flight at the collection.
 */
import { spawn } from "node:child_process"
import { cpus } from "node:os"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { alignedTable } from "./support/alignedTable.ts"
import { gcPromotionPaths } from "./support/gcPromotionPaths.ts"
import { startUpstreamProcess } from "./support/upstreamProcess.ts"
import { wholeNumberOption } from "./support/wholeNumberOption.ts"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "3000" },
    "semi-space": { type: "string", default: "2" },
    only: { type: "string" }
  }
})
const requests = wholeNumberOption("--requests", values.requests)
const semiSpace = wholeNumberOption("--semi-space", values["semi-space"])
const chosen = gcPromotionPaths.filter((p) => values.only === undefined || p.includes(values.only))
if (chosen.length === 0) throw new Error(`--only ${JSON.stringify(values.only)} is part of no path's name; the paths: ${gcPromotionPaths.join("; ")}`)

const upstream = await startUpstreamProcess(64)
const root = resolve(import.meta.dirname, "../..")

interface Figures {
  readonly scavenges: number
  readonly meanPauseMs: number
  readonly maxPauseMs: number
  readonly allocatedKB: number
  readonly promotedKB: number
}

/** A worker's whole run: a request takes about 0.1-3 ms here, so this is far beyond a slow one. */
const WORKER_TIMEOUT_MS = 120_000 + requests * 50

/** Runs one path in a worker and sums its scavenges between the markers. */
const measure = (path: string) =>
  new Promise<Figures>((done, fail) => {
    const child = spawn(process.execPath, [
      "--trace-gc-nvp",
      `--min-semi-space-size=${semiSpace}`,
      `--max-semi-space-size=${semiSpace}`,
      "test/bench/support/gcPromotionWorker.ts",
      path,
      String(requests),
      upstream.url
    ], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    // Stopped however the run ends, and failed instead of waited for when it hangs.
    const stop = () => child.kill("SIGKILL")
    process.once("exit", stop)
    const timer = setTimeout(() => {
      stop()
      fail(new Error(`${path}: no end after ${WORKER_TIMEOUT_MS} ms:\n${errors.slice(-2000)}`))
    }, WORKER_TIMEOUT_MS)
    let output = ""
    let errors = ""
    child.stdout.on("data", (d) => { output += d })
    child.stderr.on("data", (d) => { errors += d })
    child.once("exit", (code) => {
      clearTimeout(timer)
      process.off("exit", stop)
      const start = output.indexOf("\nmeasuring\n")
      const end = output.indexOf("\nmeasured\n")
      if (code !== 0 || start < 0 || end < 0) {
        fail(new Error(`${path}: the worker exited with ${code}:\n${errors.slice(-2000)}`))
        return
      }
      let scavenges = 0
      let pause = 0
      let maxPause = 0
      let allocated = 0
      let promoted = 0
      for (const line of output.slice(start, end).split("\n")) {
        // A scavenge's line: "pause=0.8 mutator=... gc=s ... allocated=... promoted=...".
        if (!/\bgc=s\b/.test(line)) continue
        const field = (name: string) => Number(new RegExp(`\\b${name}=([0-9.]+)`).exec(line)?.[1] ?? 0)
        scavenges++
        pause += field("pause")
        maxPause = Math.max(maxPause, field("pause"))
        allocated += field("allocated")
        promoted += field("promoted")
      }
      done({
        scavenges,
        meanPauseMs: scavenges === 0 ? 0 : pause / scavenges,
        maxPauseMs: maxPause,
        allocatedKB: allocated / requests / 1024,
        promotedKB: promoted / requests / 1024
      })
    })
  })

const rows: Array<Array<string>> = []
for (const path of chosen) {
  const f = await measure(path)
  rows.push([
    path,
    String(f.scavenges),
    f.meanPauseMs.toFixed(2),
    f.maxPauseMs.toFixed(1),
    f.allocatedKB.toFixed(1),
    f.promotedKB.toFixed(1),
    f.allocatedKB === 0 ? "-" : `${((100 * f.promotedKB) / f.allocatedKB).toFixed(1)}%`
  ])
}

console.log(`Young-generation promotion: ${requests} sequential requests per path, 64-word streamed answers from the mock upstream, ${semiSpace} MB semi-spaces; ${process.version}, ${cpus().length} cores\n`)
const header = ["path", "scavenges", "mean pause ms", "max pause ms", "KB allocated/req", "KB promoted/req", "promoted"]
console.log(alignedTable(header, rows))
process.exit(0)
