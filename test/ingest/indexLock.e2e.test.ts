/**
 * One `periscope index` at a time per snapshot: two runs started together never both
 * report success while the snapshot lacks one's documents (the second fails at once,
 * naming the first, or they did not overlap and both landed); a lock left by a killed
 * run is taken over; the temporary file of a killed run is removed by the next run and
 * named in its summary. The race is run many times: in-process (cheap) and as real CLI
 * processes.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Exit } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { decodeSnapshot } from "../../core/index/Snapshot.ts"
import { indexSnapshot } from "../../adapters/node/indexCommand.ts"
import { jsonlSource } from "../../adapters/node/sources/jsonlSource.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-index-lock-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const cli = (args: ReadonlyArray<string>): Promise<CliRun> =>
  new Promise((done) => {
    execFile(process.execPath, ["adapters/node/cli.ts", "index", "--quiet", ...args], {
      cwd: root,
      env: { ...process.env, PERISCOPE_DATA_DIR: join(work, "data") },
      timeout: 120_000
    }, (error, stdout, stderr) => done({ code: error === null ? 0 : (error as { code?: number }).code ?? 1, stdout, stderr }))
  })

/** A JSONL file of `count` documents whose URLs start with `https://<name>.example.org/`. */
const documents = (name: string, count: number): string => {
  const file = join(work, `${name}.jsonl`)
  writeFileSync(file, Array.from({ length: count }, (_, i) =>
    JSON.stringify({ url: `https://${name}.example.org/${i}`, title: `${name} page ${i}`, text: `The ${name} collection, page number ${i}, about orchards and rivers.` })).join("\n") + "\n")
  return file
}

const urlsIn = (snapshot: string): Set<string> =>
  new Set([...decodeSnapshot(new Uint8Array(readFileSync(snapshot))).documents()].map((d) => d.url))

const hasAll = (urls: Set<string>, name: string, count: number) => Array.from({ length: count }, (_, i) => `https://${name}.example.org/${i}`).every((u) => urls.has(u))

const LOCKED = /is being changed by periscope index \(pid \d+, since [^)]+\); tried to lock it with .*\.lock\. Wait for that run to finish/

describe("periscope index: one run at a time per snapshot", () => {
  it("in-process, 30 rounds of two runs at once: every run that succeeds has its documents in the snapshot; the other names the lock", async () => {
    const a = documents("alpha", 200)
    const b = documents("beta", 200)
    let refusals = 0
    for (let round = 0; round < 30; round++) {
      const out = join(work, `inproc-${round}`, "index.snapshot")
      const run = (file: string) => Effect.exit(indexSnapshot({ sources: [jsonlSource(file)], out }))
      const [first, second] = await Effect.runPromise(Effect.all([run(a), run(b)], { concurrency: 2 }))
      const urls = urlsIn(out)
      for (const [exit, name] of [[first, "alpha"], [second, "beta"]] as const) {
        if (Exit.isSuccess(exit)) {
          expect(exit.value.notWritten).toBeUndefined()
          expect(hasAll(urls, name, 200), `round ${round}: ${name} succeeded but its documents are missing`).toBe(true)
        } else {
          refusals++
          expect(String(exit.cause)).toMatch(LOCKED)
        }
      }
      expect(Exit.isSuccess(first) || Exit.isSuccess(second)).toBe(true)
      expect(existsSync(`${out}.lock`)).toBe(false)
    }
    // Started together in one process, the second always finds the first holding the lock.
    expect(refusals).toBe(30)
  }, 120_000)

  it("as CLI processes, 6 rounds of two runs at once: an exit 0 means the documents are in the snapshot; the other exits 1 naming the lock", async () => {
    const a = documents("gamma", 300)
    const b = documents("delta", 300)
    const outcomes: Array<string> = []
    for (let round = 0; round < 6; round++) {
      const out = join(work, `cli-${round}`, "index.snapshot")
      const runs = await Promise.all([cli([a, "--out", out]), cli([b, "--out", out])])
      const urls = urlsIn(out)
      runs.forEach((run, i) => {
        const name = i === 0 ? "gamma" : "delta"
        if (run.code === 0) {
          expect(hasAll(urls, name, 300), `round ${round}: ${name} exited 0 but its documents are missing`).toBe(true)
        } else {
          expect(run.code, run.stderr).toBe(1)
          expect(run.stderr).toContain(`periscope: ${out}: is being changed by periscope index (pid `)
          expect(run.stderr).toMatch(LOCKED)
        }
      })
      outcomes.push(runs.map((r) => r.code).join("/"))
      expect(existsSync(`${out}.lock`)).toBe(false)
    }
    console.log("exit codes of the two runs, per round:", outcomes.join(" "))
  }, 240_000)

  it("a lock held by a running process refuses; one left by a killed run (its pid gone) is taken over", async () => {
    const out = join(work, "held", "index.snapshot")
    const file = documents("epsilon", 20)
    expect((await cli([file, "--out", out])).code).toBe(0)
    writeFileSync(`${out}.lock`, JSON.stringify({ pid: process.pid, host: (await import("node:os")).hostname(), since: "2024-01-01T00:00:00.000Z", purpose: "periscope index" }))
    const refused = await cli([file, "--out", out])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n").at(-1)).toBe(
      `periscope: ${out}: is being changed by periscope index (pid ${process.pid}, since 2024-01-01T00:00:00.000Z); tried to lock it with ${out}.lock. ` +
        "Wait for that run to finish and try again (if no such process is running, remove the lock file)"
    )
    // A pid above the kernel's pid_max is never running.
    writeFileSync(`${out}.lock`, JSON.stringify({ pid: 4999999, host: (await import("node:os")).hostname(), since: "2024-01-01T00:00:00.000Z", purpose: "periscope index" }))
    const taken = await cli([documents("zeta", 20), "--out", out])
    expect(taken.code, taken.stderr).toBe(0)
    expect(hasAll(urlsIn(out), "zeta", 20) && hasAll(urlsIn(out), "epsilon", 20)).toBe(true)
    expect(existsSync(`${out}.lock`)).toBe(false)
  }, 120_000)

  it("the temporary file of a killed run is removed by the next run and named in its summary; a running writer's is kept", async () => {
    const out = join(work, "leftover", "index.snapshot")
    const file = documents("eta", 20)
    expect((await cli([file, "--out", out])).code).toBe(0)
    const killed = join(work, "leftover", ".index.snapshot.4999999.1700000000000.tmp")
    writeFileSync(killed, new Uint8Array(3 * 1024 * 1024))
    const running = join(work, "leftover", `.index.snapshot.${process.pid}.1700000000000.tmp`)
    writeFileSync(running, "in progress")
    const next = await cli([file, "--out", out])
    expect(next.code, next.stderr).toBe(0)
    expect(next.stdout).toContain(`Removed ${killed} (3.0 MiB), the temporary file of a run that was killed.`)
    expect(existsSync(killed)).toBe(false)
    expect(existsSync(running)).toBe(true)
  }, 120_000)
})
