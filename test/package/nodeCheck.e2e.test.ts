/**
 * scripts/node-check.mjs, which every npm script goes through: on a new
 * enough Node the entry runs in the same process; on an older Node (the
 * system's, where there is one) it runs with the project's Node 24 and says
 * so, or, without one and without fetching, stops with one sentence.
 */
import { spawn, spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { root } from "./consumerProject.ts"

const launcher = join(root, "scripts/node-check.mjs")
const node24 = join(root, ".ci/node/node_modules/.bin/node")
const work = mkdtempSync(join(tmpdir(), "periscope-node-check-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

// What the entry sees: its argv, its Node, and the Node a process it starts gets from PATH.
const probe = join(work, "probe.mjs")
writeFileSync(probe, `
import { execFileSync } from "node:child_process"
const childNode = execFileSync("node", ["-p", "process.versions.node"], { encoding: "utf8" }).trim()
console.log(JSON.stringify({ argv: process.argv.slice(1), node: process.versions.node, pid: process.pid, childNode }))
`)

const olderNode = (() => {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node"]) {
    if (!existsSync(candidate)) continue
    const version = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim()
    const [major, minor] = version.split(".").map(Number)
    if (major! < 22 || (major === 22 && minor! < 19)) return { binary: candidate, version }
  }
  return undefined
})()
const noOlderNode = olderNode === undefined ? "no Node older than 22.19 on this machine (/usr/bin/node)" : undefined

describe("node-check", () => {
  it("runs the entry in its own process on a new enough Node, with the entry's argv", async () => {
    const child = spawn(process.execPath, [launcher, probe, "a", "--b"], { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    const code = await new Promise((resolve) => child.once("exit", resolve))
    expect(code).toBe(0)
    expect(err).toBe("")
    const seen = JSON.parse(out)
    expect(seen.argv).toEqual([probe, "a", "--b"])
    expect(seen.pid).toBe(child.pid)
  })

  it.skipIf(noOlderNode !== undefined || !existsSync(node24))(`on an older Node runs the entry with the project's Node 24 and says so${noOlderNode ? ` (skipped: ${noOlderNode})` : ""}`, () => {
    const result = spawnSync(olderNode!.binary, [launcher, probe, "x"], {
      encoding: "utf8",
      env: { ...process.env, PATH: `/usr/bin:/bin`, PERISCOPE_NO_NODE_DOWNLOAD: "1" }
    })
    expect(result.status).toBe(0)
    expect(result.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^periscope: Node ${olderNode!.version.replaceAll(".", "\\.")} is older than 22\\.19; running with Node 2[2-9]\\.\\d+\\.\\d+ from .*\\.ci/node/node_modules/\\.bin/node$`))
    ])
    const seen = JSON.parse(result.stdout)
    expect(seen.argv).toEqual([probe, "x"])
    expect(Number(seen.node.split(".")[0])).toBeGreaterThanOrEqual(22)
    // Processes the entry starts (vitest workers, test servers) get the same Node from PATH.
    expect(seen.childNode).toBe(seen.node)
  })

  it.skipIf(noOlderNode !== undefined)(`on an older Node with no Node 24 at hand and no fetching, stops with one sentence${noOlderNode ? ` (skipped: ${noOlderNode})` : ""}`, () => {
    // A copy of the launcher in a project with no .ci/node.
    const project = join(work, "bare")
    mkdirSync(join(project, "scripts"), { recursive: true })
    copyFileSync(launcher, join(project, "scripts/node-check.mjs"))
    const result = spawnSync(olderNode!.binary, [join(project, "scripts/node-check.mjs"), probe], {
      encoding: "utf8",
      env: { ...process.env, PATH: `/usr/bin:/bin`, PERISCOPE_NO_NODE_DOWNLOAD: "1" }
    })
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    const lines = result.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toBe(
      `periscope: Periscope needs Node 22.19 or newer and this is Node ${olderNode!.version}: install Node 24 from https://nodejs.org/ ` +
        `(or with nvm: nvm install 24), or run \`npm install --prefix .ci/node node@24\` in ${project} and npm will use it.`
    )
  })

  it.skipIf(noOlderNode !== undefined || !existsSync(node24))(`\`npm run\` with an older Node first on PATH runs the CLI${noOlderNode ? ` (skipped: ${noOlderNode})` : ""}`, () => {
    const result = spawnSync("npm", ["run", "--silent", "periscope", "--", "--version"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, PATH: `${olderNode!.binary.replace(/\/node$/, "")}:/usr/bin:/bin`, PERISCOPE_NO_NODE_DOWNLOAD: "1", npm_config_update_notifier: "false" }
    })
    expect(result.stdout.trim()).toMatch(/^periscope v\d+\.\d+\.\d+$/)
    expect(result.stderr).toMatch(/is older than 22\.19; running with Node/)
    expect(result.status).toBe(0)
  })
})
