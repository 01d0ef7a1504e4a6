/**
 * The Dockerfile, built unchanged by podman (chroot isolation) on a stand-in
 * for the official Node base image (containerBase.ts), then run the only way
 * this sandbox allows (`podman run` needs cgroups): the image's filesystem
 * mounted and its entrypoint and command started under chroot as the image's
 * user, with the image's environment and working directory. It must answer
 * /healthz, and its HEALTHCHECK command must pass. Skips with its reason where
 * podman, debootstrap or root are missing; under CI=true that is a failure.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureBaseImage } from "./containerBase.ts"
import { root } from "./consumerProject.ts"
import { freePort } from "../support/servers.ts"

const IMAGE = "localhost/periscope-search:test"

const has = (command: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const missing = !has("podman")
  ? "podman is not installed (apt-get install podman)"
  : !has("debootstrap")
  ? "debootstrap is not installed (apt-get install debootstrap)"
  : process.getuid?.() !== 0
  ? "not root: debootstrap, image mounts and chroot need root"
  : undefined

if (missing !== undefined && process.env.CI === "true") {
  describe("container", () => {
    it("has what it needs under CI", () => {
      throw new Error(`the container test cannot run: ${missing}`)
    })
  })
}

const sh = (command: string, args: ReadonlyArray<string>, timeout = 120_000) =>
  execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout }).trim()

interface ImageConfig {
  readonly User: string
  readonly Env: ReadonlyArray<string>
  readonly Entrypoint: ReadonlyArray<string>
  readonly Cmd: ReadonlyArray<string>
  readonly WorkingDir: string
  readonly Volumes: Record<string, unknown> | null
  readonly ExposedPorts: Record<string, unknown> | null
}

describe.skipIf(missing !== undefined)(`container${missing === undefined ? "" : ` (skipped: ${missing})`}`, () => {
  let config: ImageConfig
  let healthcheck: { readonly Test: ReadonlyArray<string> } | undefined
  let container = ""
  let mountPoint = ""
  const mounted: Array<string> = []
  let dataDir = ""
  let server: ChildProcess | undefined
  let log = ""

  beforeAll(() => {
    ensureBaseImage(root)
    const imageId = () => {
      try {
        return sh("podman", ["image", "inspect", "--format", "{{.Id}}", IMAGE])
      } catch {
        return undefined
      }
    }
    const previous = imageId()
    sh("podman", ["build", "--isolation", "chroot", "--format", "docker", "--network", "host", "-t", IMAGE, "-f", join(root, "Dockerfile"), root], 1_200_000)
    // The image this test built last time, now untagged: drop it rather than let copies pile up.
    if (previous !== undefined && previous !== imageId()) {
      try {
        sh("podman", ["rmi", previous])
      } catch { /* still used */ }
    }
    const inspected = JSON.parse(sh("podman", ["image", "inspect", IMAGE])) as Array<{ Config: ImageConfig; Healthcheck?: { Test: ReadonlyArray<string> } }>
    config = inspected[0]!.Config
    healthcheck = inspected[0]!.Healthcheck
    // A container's filesystem, writable, with the /data volume as a fresh directory (as a new volume starts).
    container = sh("podman", ["create", IMAGE])
    mountPoint = sh("podman", ["mount", container])
    dataDir = mkdtempSync(join(tmpdir(), "periscope-volume-"))
    execFileSync("chown", ["1000:1000", dataDir])
    for (const [what, args] of [
      ["data", ["--bind", dataDir, join(mountPoint, "data")]],
      ["proc", ["-t", "proc", "proc", join(mountPoint, "proc")]],
      ["dev", ["--rbind", "/dev", join(mountPoint, "dev")]]
    ] as const) {
      sh("mount", args)
      mounted.unshift(join(mountPoint, what))
    }
  }, 2_400_000)

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      server.kill("SIGTERM")
      await new Promise((resolve) => server!.once("exit", resolve))
    }
    for (const point of mounted) {
      try {
        sh("umount", ["--recursive", "--lazy", point])
      } catch { /* already gone */ }
    }
    if (container !== "") {
      try {
        sh("podman", ["umount", container])
        sh("podman", ["rm", "--force", container])
      } catch { /* best effort */ }
    }
    if (dataDir !== "") rmSync(dataDir, { recursive: true, force: true })
  }, 60_000)

  it("is built FROM the official Node image, runs as a non-root user, keeps /data as a volume and has a health check", () => {
    expect(readFileSync(join(root, "Dockerfile"), "utf8")).toMatch(/^FROM node:24-bookworm-slim$/m)
    expect(config.User).toBe("node")
    expect(Object.keys(config.Volumes ?? {})).toEqual(["/data"])
    expect(Object.keys(config.ExposedPorts ?? {})).toEqual(["8080/tcp"])
    expect(config.Env).toContain("PERISCOPE_DATA_DIR=/data")
    expect(healthcheck?.Test.join(" ")).toMatch(/healthz/)
    // No tests, no git, no node_modules from the host in the image.
    expect(existsSync(join(mountPoint, "app/test"))).toBe(false)
    expect(existsSync(join(mountPoint, "app/.git"))).toBe(false)
    expect(existsSync(join(mountPoint, "app/node_modules/vitest"))).toBe(false)
    expect(existsSync(join(mountPoint, "app/node_modules/effect"))).toBe(true)
  })

  it("starts its command as the image's user, answers /healthz and passes its own HEALTHCHECK", async () => {
    const port = await freePort()
    const env = [...config.Env.filter((e) => !e.startsWith("PORT=")), `PORT=${port}`, "HOME=/home/node"]
    const command = [...config.Entrypoint, ...config.Cmd]
    const quoted = command.map((part) => `'${part.replaceAll("'", "'\\''")}'`).join(" ")
    server = spawn("chroot", ["--userspec=node:node", mountPoint, "/usr/bin/env", "-i", ...env, "/bin/sh", "-c", `cd '${config.WorkingDir}' && exec ${quoted}`], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    server.stdout!.on("data", (d) => (log += d))
    server.stderr!.on("data", (d) => (log += d))
    const deadline = Date.now() + 120_000
    for (;;) {
      if (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)) break
      if (Date.now() > deadline || server.exitCode !== null) throw new Error(`the image's command did not serve:\n${log}`)
      await new Promise((r) => setTimeout(r, 250))
    }
    expect(await (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000) })).json()).toEqual({ status: "ok" })
    // The server process runs as uid 1000 and wrote its key and PID into the volume as that user.
    const uid = sh("ps", ["-o", "uid=", "-p", String(server.pid)])
    expect(uid).toBe("1000")
    expect(statSync(join(dataDir, "keys.json")).uid).toBe(1000)
    const key = log.match(/psk_[A-Za-z0-9_-]{43}/)?.[0]
    expect(key).toBeDefined()
    const search = await fetch(`http://127.0.0.1:${port}/api/search/webSearch`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ keywords: "effect" }),
      signal: AbortSignal.timeout(30_000)
    })
    expect(search.status).toBe(200)
    // The image's HEALTHCHECK, run inside the image as its user.
    const test = healthcheck!.Test
    const check = test[0] === "CMD-SHELL" ? ["/bin/sh", "-c", test[1]!] : test.slice(1)
    expect(() =>
      execFileSync("chroot", ["--userspec=node:node", mountPoint, "/usr/bin/env", "-i", ...env, ...check], { stdio: "pipe", timeout: 30_000 })
    ).not.toThrow()
  }, 180_000)
})
