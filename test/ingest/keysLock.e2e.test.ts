/**
 * `periscope keys create|revoke` run at once on one keys file: every change lands (the
 * file's lock makes them take turns), so every key printed works and `keys list` shows
 * them all; a server's first start, which makes a key, takes the same turns. Run many
 * times, as real CLI processes and servers on a real file.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { hashKey } from "../../core/auth/KeyRecord.ts"
import { spawnNodeServer } from "../support/servers.ts"

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

  it("a first server start (which makes a key) and three `keys create` released at once: every key shown is in the file, whichever goes first", async () => {
    const made: Array<string> = []
    for (let round = 0; round < 2; round++) {
      const dataDir = join(work, `start-${round}`)
      const file = join(dataDir, "keys.json")
      const config = join(work, "fixture.json")
      writeFileSync(config, JSON.stringify({ search: { backend: "fixture" } }))
      // The test holds the file's lock while the server and the commands start, so they all wait on it, then lets go.
      mkdirSync(dataDir, { recursive: true })
      writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString(), purpose: "the test" }))
      const starting = spawnNodeServer({ PERISCOPE_DATA_DIR: dataDir, PERISCOPE_CONFIG: config })
      const creating = ["a", "b", "c"].map((name) => keys(["create", name, "--file", file]))
      setTimeout(() => rmSync(`${file}.lock`), 2_500 + round * 1_000)
      const [server, ...creates] = await Promise.all([starting, ...creating])
      try {
        for (const run of creates) expect(run.code, run.stderr).toBe(0)
        const shown = creates.map((run) => run.stdout.trim())
        const generated = /\n {4}(psk_\S+)\n/.exec(server.output())?.[1]
        if (generated !== undefined) shown.push(generated)
        made.push(generated === undefined ? "the commands first" : "the server made a key")
        const hashes = recordsIn(file).map((r) => r.sha256)
        for (const key of shown) expect(hashes).toContain(hashKey(key))
        expect(hashes.length).toBe(shown.length)
        if (generated !== undefined) {
          expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${generated}` } })).status).toBe(200)
        }
        expect(existsSync(`${file}.lock`)).toBe(false)
      } finally {
        await server.close()
      }
    }
    console.log("per round:", made.join(", "))
  }, 180_000)

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
