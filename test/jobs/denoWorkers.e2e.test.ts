/**
 * The Deno adapter's job runner on Web Workers (adapters/deno/denoJobWorkers.ts), run by the
 * Deno npm installed: a page read on a worker, a job answered at its deadline rather than when
 * its work would have ended, and the next job answered by a replacement worker.
 */
import { execFileSync } from "node:child_process"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")

describe("job runner on Deno", () => {
  it("reads on Web Workers, answers a job at its deadline and replaces its worker", () => {
    const out = execFileSync(resolve(root, "node_modules/.bin/deno"), ["run", "--allow-read", "--allow-env", "test/jobs/denoJobs.ts"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 120_000
    })
    const seen = JSON.parse(out.trim().split("\n").at(-1)!)
    expect(seen.where).toBe("threads")
    expect(seen.read).toEqual({
      _tag: "Read",
      page: { title: "On Deno", content: "Read on a Web Worker.", text: "Read on a Web Worker.", date: null, contentType: "text/html" }
    })
    expect(seen.late).toEqual({ reason: "timeout", message: "the spin job did not finish within 300 ms" })
    expect(seen.waited).toBeLessThan(5000)
    expect(seen.next).toBe("next")
  }, 180_000)
})
