/**
 * `npm start` as an operator runs it: requests sent from the moment of spawn
 * are refused (port not open yet) or answered, never left hanging, across the
 * start and across a SIGHUP sent to the npm process (npm does not pass SIGHUP
 * on: it exits; the server keeps serving). When package.json's start script
 * `exec`s the server, npm is the server's parent and its exit is read as a
 * reload (adapters/node/npmParent.ts): the test then expects that reload.
 * Without `exec`, a shell stands between npm and the server, and the server
 * cannot see npm go: the test says so and checks only that nothing hangs.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, root, TEST_KEY } from "../support/servers.ts"
import { probe } from "./healthProbe.ts"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const startScript: string = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start
const execs = /(^|[;&|]\s*)exec\s/.test(startScript)
const npmFound = spawnSync("npm", ["--version"], { encoding: "utf8" }).status === 0


const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.skipIf(!npmFound)("npm start", () => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-npmstart-"))
  const dataDir = join(dir, "data")
  let serverPid: number | undefined
  let npmPid: number | undefined
  afterAll(async () => {
    for (const pid of [serverPid, npmPid]) {
      if (pid === undefined || !alive(pid)) continue
      process.kill(pid, "SIGTERM")
      for (let i = 0; i < 100 && alive(pid); i++) await sleep(100)
      if (alive(pid)) process.kill(pid, "SIGKILL")
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it(`answers from the spawn on, across a SIGHUP to npm (start script: ${startScript})`, async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: root,
      // The Node that runs this test first on PATH: npm's script runs the server in-process on it.
      env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`, PORT: String(port), PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_DATA_DIR: dataDir, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    npmPid = npm.pid
    let output = ""
    npm.stdout!.on("data", (d) => void (output += d))
    npm.stderr!.on("data", (d) => void (output += d))
    const npmExited = new Promise<void>((resolve) => npm.once("exit", () => resolve()))

    const starting = probe(url, 20)
    const spawnedAt = Date.now()
    while (!output.includes("Periscope ready")) {
      expect(npm.exitCode, output).toBeNull()
      expect(Date.now() - spawnedAt, output).toBeLessThan(50_000)
      await sleep(50)
    }
    await sleep(300)
    const atStart = await starting.stop()
    console.log("npm start: requests from the moment of spawn:", atStart)
    expect(atStart).toMatchObject({ hung: 0, other: 0 })
    expect(atStart.answered).toBeGreaterThan(0)

    serverPid = Number(readFileSync(join(dataDir, "periscope.pid"), "utf8").trim())
    expect(output).toContain(`pid ${serverPid}`)
    const parent = readFileSync(`/proc/${serverPid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[1]
    console.log(`npm pid ${npm.pid}, server pid ${serverPid}, the server's parent ${parent} (${parent === String(npm.pid) ? "npm itself: the script execs" : "not npm: a shell in between"})`)

    // SIGHUP to npm: npm exits; the server keeps answering, every request answered.
    const acrossHup = probe(url, 20)
    npm.kill("SIGHUP")
    await npmExited
    const deadline = Date.now() + 8_000
    if (execs) while (!output.includes("SIGHUP: reloaded") && Date.now() < deadline) await sleep(50)
    else await sleep(1_500)
    await sleep(200)
    const afterHup = await acrossHup.stop()
    console.log("npm start: requests across a SIGHUP to npm:", afterHup)
    expect(afterHup).toMatchObject({ hung: 0, refused: 0, other: 0 })
    expect(alive(serverPid)).toBe(true)
    if (execs) {
      expect(output).toContain("has exited (npm does not pass SIGHUP on)")
      expect(output).toContain("SIGHUP: reloaded")
    } else {
      console.log(`package.json's start script does not exec the server ("${startScript}"): npm -> sh -> node, so a SIGHUP to npm ends npm and the server is not reloaded (it keeps serving as pid ${serverPid})`)
    }

    // Stopped by its own PID, as the log says.
    process.kill(serverPid, "SIGTERM")
    for (let i = 0; i < 100 && alive(serverPid); i++) await sleep(100)
    expect(alive(serverPid)).toBe(false)
  }, 60_000)
})
