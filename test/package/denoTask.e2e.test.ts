/**
 * Deno from the checkout: `deno task start` (the task itself, as a user types
 * it) serves and answers a search; the JSR publish configuration in deno.json
 * passes a dry run with the library's files and nothing else.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { root } from "./consumerProject.ts"
import { freePort } from "../support/servers.ts"

const deno = join(root, "node_modules/.bin/deno")
const denoEnv = { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1" }

let task: ChildProcess | undefined

afterAll(async () => {
  if (task?.pid !== undefined && task.exitCode === null) {
    // The task runs the server as its child: stop the whole process group this test started.
    process.kill(-task.pid, "SIGTERM")
    await new Promise((resolve) => task!.once("exit", resolve))
  }
})

describe("deno task start", () => {
  it("serves, and answers a search with the key it was given", async () => {
    const port = await freePort()
    task = spawn(deno, ["task", "start"], {
      cwd: root,
      detached: true,
      env: { ...denoEnv, PORT: String(port), PERISCOPE_HOST: "127.0.0.1", PERISCOPE_API_KEYS: "deno-task-key" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let log = ""
    task.stdout!.on("data", (d) => (log += d))
    task.stderr!.on("data", (d) => (log += d))
    const deadline = Date.now() + 90_000
    for (;;) {
      if (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)) break
      if (Date.now() > deadline || task.exitCode !== null) throw new Error(`deno task start did not serve:\n${log}`)
      await new Promise((r) => setTimeout(r, 250))
    }
    const response = await fetch(`http://127.0.0.1:${port}/api/search/webSearch`, {
      method: "POST",
      headers: { authorization: "Bearer deno-task-key", "content-type": "application/json" },
      body: JSON.stringify({ keywords: "chat completions" }),
      signal: AbortSignal.timeout(30_000)
    })
    expect(response.status).toBe(200)
    const body = await response.json() as { success: boolean; data: { organic: Array<{ title: string }> } }
    expect(body.success).toBe(true)
    expect(body.data.organic.length).toBeGreaterThan(0)
    expect(log).not.toMatch(/SyntaxError|ELF/)
  }, 120_000)
})

describe("JSR", () => {
  it("deno publish --dry-run packs the library: the embed entry and core, no tests or Node adapter", () => {
    const result = spawnSync(deno, ["publish", "--dry-run", "--allow-dirty", "--allow-slow-types"], { cwd: root, env: denoEnv, encoding: "utf8", timeout: 180_000 })
    const output = result.stdout + result.stderr
    expect(result.status, output).toBe(0)
    const files = [...output.matchAll(/file:\/\/\/\S+/g)].map((m) => m[0].slice(`file://${root}/`.length))
    expect(files).toContain("adapters/embed/index.ts")
    expect(files).toContain("LICENSE")
    expect(files.filter((f) => f.startsWith("test/") || f.startsWith("adapters/node/") || f.startsWith("node_modules/"))).toEqual([])
  }, 200_000)
})
