/**
 * The `periscope` command's keys and reload subcommands from the checkout:
 * what they write, what they print, and the one line they fail with.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { hashKey } from "../../core/auth/KeyRecord.ts"
import { root } from "./consumerProject.ts"

const dataDir = mkdtempSync(join(tmpdir(), "periscope-cli-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const periscope = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const result = spawnSync(process.execPath, [join(root, "adapters/node/cli.ts"), ...args], {
    cwd: dataDir,
    encoding: "utf8",
    env: { ...process.env, PERISCOPE_DATA_DIR: dataDir, PERISCOPE_API_KEYS: "", PERISCOPE_KEYS_FILE: "", PERISCOPE_CONFIG: "", ...env },
    timeout: 60_000
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe("periscope keys", () => {
  const file = join(dataDir, "keys.json")

  it("creates keys: the key once on stdout, its SHA-256 in an owner-only file, names unique", () => {
    const first = periscope(["keys", "create", "ci", "--requests-per-minute", "60"])
    expect(first.status).toBe(0)
    const key = first.stdout.trim()
    expect(key).toMatch(/^psk_[A-Za-z0-9_-]{43}$/)
    expect(first.stderr).toMatch(/Created key "ci" \(id [0-9a-f]{12}, 60 requests\/minute\)/)
    expect(first.stderr).not.toContain(key)
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ keys: [{ name: "ci", sha256: hashKey(key), requestsPerMinute: 60 }] })
    expect(statSync(file).mode & 0o777).toBe(0o600)

    const second = periscope(["keys", "create"])
    expect(second.status).toBe(0)
    expect(second.stderr).toMatch(/Created key "key-2"/)

    const again = periscope(["keys", "create", "ci"])
    expect(again.status).toBe(1)
    expect(again.stdout).toBe("")
    expect(again.stderr.trim()).toBe(`periscope: ci: a key with this name is already in ${file}; revoke it first or choose another name`)

    const zero = periscope(["keys", "create", "x", "--requests-per-minute", "0"])
    expect(zero.status).toBe(1)
    expect(zero.stderr.trim()).toBe("periscope: --requests-per-minute: must be an integer >= 1, got 0")
  }, 120_000)

  it("lists names, ids and limits, never keys; revokes by name or id", () => {
    const records = (JSON.parse(readFileSync(file, "utf8")) as { keys: Array<{ name: string; sha256: string }> }).keys
    const list = periscope(["keys", "list"])
    expect(list.status).toBe(0)
    expect(list.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^NAME\s+ID\s+REQUESTS\/MIN$/),
      expect.stringMatching(new RegExp(`^ci\\s+${records[0]!.sha256.slice(0, 12)}\\s+60$`)),
      expect.stringMatching(new RegExp(`^key-2\\s+${records[1]!.sha256.slice(0, 12)}\\s+1000$`))
    ])
    expect(list.stdout).not.toContain(records[0]!.sha256)

    expect(periscope(["keys", "revoke", records[1]!.sha256.slice(0, 12)]).status).toBe(0)
    const unknown = periscope(["keys", "revoke", "nope"])
    expect(unknown.status).toBe(1)
    expect(unknown.stderr.trim()).toBe(`periscope: nope: no key with this name or id in ${file} (names: ci)`)
    expect((JSON.parse(readFileSync(file, "utf8")) as { keys: Array<{ name: string }> }).keys.map((k) => k.name)).toEqual(["ci"])
  }, 120_000)

  it("writes the configured keys file when PERISCOPE_KEYS_FILE names one", () => {
    const other = join(dataDir, "other", "keys.json")
    expect(periscope(["keys", "create", "ops"], { PERISCOPE_KEYS_FILE: other }).status).toBe(0)
    expect(existsSync(other)).toBe(true)
  }, 60_000)
})

describe("periscope reload", () => {
  const pidFile = join(dataDir, "periscope.pid")

  it("fails with one line when no server runs: no PID file, a PID that is gone, a file without a PID", () => {
    rmSync(pidFile, { force: true })
    const none = periscope(["reload"])
    expect(none.status).toBe(1)
    expect(none.stderr.trim()).toBe(
      `periscope: ${pidFile}: no Periscope server is running with data directory ${dataDir} (no PID file); start one with \`periscope serve\``
    )
    // A PID above the kernel's pid_max is never running.
    writeFileSync(pidFile, "4999999\n")
    const gone = periscope(["reload"])
    expect(gone.status).toBe(1)
    expect(gone.stderr.trim()).toBe(`periscope: ${pidFile}: names PID 4999999, which is not running: the server stopped without removing the file; start it again`)
    writeFileSync(pidFile, "not a pid")
    expect(periscope(["reload"]).stderr.trim()).toBe(`periscope: ${pidFile}: does not hold a PID, got "not a pid"`)
    rmSync(pidFile, { force: true })
  }, 120_000)

  it("sends SIGHUP to the PID in the file", () => {
    // A stand-in server: a process that reports the SIGHUP it gets.
    const script = "process.on('SIGHUP', () => { console.log('hup'); process.exit(0) }); console.log('ready'); setTimeout(() => process.exit(2), 20000)"
    const child = spawnSync("sh", ["-c", `node -e "${script}" & echo $! > '${pidFile}'; sleep 1; '${process.execPath}' '${join(root, "adapters/node/cli.ts")}' reload; wait`], {
      cwd: dataDir,
      encoding: "utf8",
      env: { ...process.env, PATH: `${join(process.execPath, "..")}:${process.env.PATH}`, PERISCOPE_DATA_DIR: dataDir },
      timeout: 60_000
    })
    // Both write to the same stdout, in either order.
    expect(child.stdout).toMatch(/^Sent SIGHUP to Periscope \(PID \d+\)/m)
    expect(child.stdout).toMatch(/^hup$/m)
  }, 60_000)
})

describe("periscope --help", () => {
  it("lists serve, index, keys and reload", () => {
    const help = periscope(["--help"]).stdout
    for (const command of ["serve", "index", "keys", "reload"]) expect(help).toMatch(new RegExp(`^\\s+${command}\\s+\\S`, "m"))
    expect(periscope(["serve", "--help"]).stdout).toMatch(/--port[\s\S]*--data-dir[\s\S]*--config/)
  }, 60_000)
})
