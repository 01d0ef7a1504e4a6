/**
 * `periscope keys create|revoke` run at once on one keys file: every change lands (the
 * file's lock makes them take turns), so every key printed works and `keys list` shows
 * them all. Run many times, as real CLI processes on a real file.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { hashKey } from "../../core/auth/KeyRecord.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-keys-lock-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const keys = (args: ReadonlyArray<string>): Promise<CliRun> =>
  new Promise((done) => {
    execFile(process.execPath, ["adapters/node/cli.ts", "keys", ...args], {
      cwd: root,
      env: { ...process.env, PERISCOPE_DATA_DIR: join(work, "data") },
      timeout: 120_000
    }, (error, stdout, stderr) => done({ code: error === null ? 0 : (error as { code?: number }).code ?? 1, stdout, stderr }))
  })

const recordsIn = (file: string) => (JSON.parse(readFileSync(file, "utf8")) as { keys: Array<{ name: string; sha256: string }> }).keys

describe("periscope keys: concurrent changes to one keys file", () => {
  it("3 rounds of six `keys create` at once: six keys in the file, each printed key among them, `keys list` shows six", async () => {
    for (let round = 0; round < 3; round++) {
      const file = join(work, `round-${round}`, "keys.json")
      const names = Array.from({ length: 6 }, (_, i) => `agent-${i}`)
      const runs = await Promise.all(names.map((name) => keys(["create", name, "--file", file])))
      for (const run of runs) expect(run.code, run.stderr).toBe(0)
      const records = recordsIn(file)
      expect(records.map((r) => r.name).sort()).toEqual(names)
      // The key each process printed is the one kept under its name.
      runs.forEach((run, i) => expect(records.find((r) => r.name === names[i])!.sha256).toBe(hashKey(run.stdout.trim())))
      const list = await keys(["list", "--file", file])
      expect(list.stdout.trim().split("\n").slice(1).map((line) => line.split(/\s+/)[0]).sort()).toEqual(names)
      expect(existsSync(`${file}.lock`)).toBe(false)
    }
  }, 300_000)

  it("creates and revokes at once: every create kept, every revoked key gone", async () => {
    const file = join(work, "mixed", "keys.json")
    for (const name of ["old-0", "old-1", "old-2"]) expect((await keys(["create", name, "--file", file])).code).toBe(0)
    const runs = await Promise.all([
      ...["new-0", "new-1", "new-2"].map((name) => keys(["create", name, "--file", file])),
      ...["old-0", "old-1", "old-2"].map((name) => keys(["revoke", name, "--file", file]))
    ])
    for (const run of runs) expect(run.code, run.stderr).toBe(0)
    expect(recordsIn(file).map((r) => r.name).sort()).toEqual(["new-0", "new-1", "new-2"])
  }, 120_000)
})
