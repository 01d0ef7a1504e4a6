/**
 * Run by denoWorkers.e2e.test.ts under Deno: the Deno adapter's job runner (Web Workers) reads a
 * page, answers a job at its deadline and runs the next on a replacement worker, then prints
 * what it saw. (Deno's terminate() lets a worker finish the synchronous work it is in, so the
 * late job is short: the process ends when it does.)
 */
import { Effect } from "effect"
import { denoJobWorkers } from "../../adapters/deno/denoJobWorkers.ts"
import { DEFAULT_PAGE_LIMITS } from "../../core/ingest/PageLimits.ts"
import { readPageJob } from "../../core/ingest/ReadablePage.ts"
import { echoJob, spinJob } from "./testJobs.ts"

const seen = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const runner = yield* denoJobWorkers.start({ workers: 1, memoryMb: 512, queue: 4, deadlineMs: 30_000 })
  const html = "<html><head><title>On Deno</title></head><body><main><p>Read on a Web Worker.</p></main></body></html>"
  const read = yield* runner.run(readPageJob, { bytes: new TextEncoder().encode(html), contentType: "text/html", url: "https://example.com/", format: "markdown", limits: DEFAULT_PAGE_LIMITS })
  const started = Date.now()
  const late = yield* Effect.flip(runner.run(spinJob, { ms: 8000 }, { deadlineMs: 300 }))
  const waited = Date.now() - started
  const next = yield* runner.run(echoJob, "next")
  return { where: runner.where, read, late: { reason: late.reason, message: late.message }, waited, next }
})))
console.log(JSON.stringify(seen))
