/**
 * An interrupted index run: a crawl of a loopback site whose pages are slow,
 * stopped mid-way, once by interrupting the Effect (Fiber.interrupt) and once
 * by Ctrl-C (SIGINT) on the real CLI in a child process. Either way no request
 * reaches the server after the interruption has settled (within a second), the
 * requests in flight are aborted, and the previous snapshot is byte-identical.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Fiber } from "effect"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { indexSnapshot } from "../../adapters/node/indexCommand.ts"
import { openSources } from "../../adapters/node/sources/openSources.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { type Handler, page, sendHtml, type SiteServer, startSiteServer } from "./support/siteServer.ts"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "periscope-interrupt-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const servers: Array<SiteServer> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

/** A hub linking 40 pages, every answer taking two seconds. */
const slowSite = async () => {
  const routes: Record<string, Handler> = { "/": sendHtml(page("Hub", Array.from({ length: 40 }, (_, i) => `/p${i}`))) }
  for (let i = 0; i < 40; i++) routes[`/p${i}`] = sendHtml(page(`Leaf ${i}`))
  const server = await startSiteServer(routes, { latencyMs: 2000 })
  servers.push(server)
  return server
}

/** A snapshot file with one document, standing where the run writes. */
const previousSnapshot = (name: string) => {
  const builder = new IndexBuilder()
  builder.add([{ url: "https://old.example.com/", title: "Old snapshot", text: "A page indexed before the interrupted run." }])
  const path = join(work, name, "index.snapshot")
  mkdirSync(join(work, name), { recursive: true })
  writeFileSync(path, encodeSnapshot(builder.build()))
  return { path, bytes: readFileSync(path) }
}

const until = async (condition: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 20))
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("an interrupted index run", () => {
  it("stops fetching within a second when its fiber is interrupted, and leaves the previous snapshot as it was", async () => {
    const site = await slowSite()
    const previous = previousSnapshot("fiber")
    const sources = openSources([`${site.origin}/`], { allowPrivate: [site.host], crawl: { delayMs: 0, concurrency: 4 } })
    const fiber = Effect.runFork(indexSnapshot({ sources, out: previous.path }))
    // The hub, then pages in flight on the slow server.
    await until(() => site.requested.filter((p) => p.startsWith("/p")).length >= 1)
    const started = Date.now()
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(Date.now() - started).toBeLessThan(1000)
    const seen = site.requested.length
    await until(() => site.inFlight() === 0, 1000)
    await sleep(1000)
    expect(site.requested.length).toBe(seen)
    expect(readFileSync(previous.path).equals(previous.bytes)).toBe(true)
    expect(readdirSync(join(work, "fiber"))).toEqual(["index.snapshot"])
  })

  it("stops on Ctrl-C (SIGINT) of the CLI, says so and exits non-zero, leaving the previous snapshot as it was", async () => {
    const site = await slowSite()
    const previous = previousSnapshot("cli")
    const child = spawn(process.execPath, [
      "adapters/node/cli.ts", "index", `${site.origin}/`,
      "--allow-private", site.host, "--delay-ms", "0", "--out", previous.path, "--quiet"
    ], { cwd: root, env: { ...process.env, PERISCOPE_DATA_DIR: join(work, "cli-data") }, stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += String(chunk)))
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
    try {
      await until(() => site.requested.filter((p) => p.startsWith("/p")).length >= 1)
      const signalled = Date.now()
      child.kill("SIGINT")
      const code = await exited
      expect(Date.now() - signalled).toBeLessThan(1000)
      expect(code).not.toBe(0)
      expect(stderr).toContain(`periscope: interrupted; the snapshot ${previous.path} was left as it was`)
      const seen = site.requested.length
      await until(() => site.inFlight() === 0, 1000)
      await sleep(1000)
      expect(site.requested.length).toBe(seen)
      expect(readFileSync(previous.path).equals(previous.bytes)).toBe(true)
      expect(readdirSync(join(work, "cli"))).toEqual(["index.snapshot"])
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  }, 60_000)
})
