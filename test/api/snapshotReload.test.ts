/**
 * A new snapshot swapped into the running Node server (SIGHUP) under load:
 * no request fails, answers move from the old index to the new one, and a
 * corrupt snapshot is refused while the current index keeps serving.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { writeSnapshotFile } from "../../adapters/node/snapshotFile.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { type ChildServer, spawnNodeServer, TEST_KEY } from "../support/servers.ts"

const dir = mkdtempSync(join(tmpdir(), "periscope-reload-"))
let server: ChildServer | undefined
afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

const snapshotAbout = (topic: string, pages: number) => {
  const builder = new IndexBuilder()
  builder.add(Array.from({ length: pages }, (_, i) => ({
    url: `https://${topic}.example/page-${i}`,
    title: `${topic} guide ${i}`,
    text: `All about the shared subject, told by ${topic} page ${i}. The shared subject matters.`
  })))
  return encodeSnapshot(builder.build())
}

const search = async (url: string) => {
  const startedAt = performance.now()
  const response = await fetch(`${url}/api/search/webSearch`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ keywords: "shared subject", num: 5 })
  })
  const body = await response.json() as any
  return { startedAt, endedAt: performance.now(), status: response.status, hosts: new Set<string>(body.data?.organic.map((r: any) => new URL(r.link).host) ?? []) }
}

describe("snapshot reload", () => {
  it("swaps the index under load without a failed request, and refuses a corrupt snapshot", async () => {
    const path = join(dir, "index.snapshot")
    writeFileSync(path, snapshotAbout("old", 200))
    writeFileSync(join(dir, "periscope.json"), JSON.stringify({ search: { snapshot: path } }))
    server = await spawnNodeServer({ PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_DATA_DIR: dir, PERISCOPE_CONFIG: join(dir, "periscope.json") })
    const url = server.url

    const results: Array<Awaited<ReturnType<typeof search>>> = []
    let running = true
    const workers = Array.from({ length: 4 }, async () => {
      while (running) results.push(await search(url))
    })
    const waitFor = async (host: string) => {
      const deadline = Date.now() + 20_000
      while (Date.now() < deadline) {
        if (results.slice(-4).every((r) => r.hosts.has(host))) return
        await new Promise((r) => setTimeout(r, 20))
      }
      throw new Error(`answers never came from ${host}`)
    }

    const waitForOutput = async (pattern: RegExp) => {
      const deadline = Date.now() + 20_000
      while (!pattern.test(server!.output())) {
        if (Date.now() > deadline) throw new Error(`the server never logged ${pattern}:\n${server!.output()}`)
        await new Promise((r) => setTimeout(r, 20))
      }
    }

    await waitFor("old.example")
    await Effect.runPromise(writeSnapshotFile(path, snapshotAbout("new", 300)))
    server.child.kill("SIGHUP")
    await waitFor("new.example")
    await waitForOutput(/SIGHUP: reloaded .*index.snapshot: 300 documents/)

    writeFileSync(path, snapshotAbout("broken", 10).subarray(0, 1000)) // truncated
    server.child.kill("SIGHUP")
    await waitForOutput(/kept the current index/)
    const refusedAt = performance.now()
    await new Promise((r) => setTimeout(r, 300))
    running = false
    await Promise.all(workers)

    expect(results.length).toBeGreaterThan(50)
    expect(results.filter((r) => r.status !== 200)).toEqual([])
    // Every answer came whole from one index or the other.
    expect(results.filter((r) => r.hosts.size !== 1).map((r) => [...r.hosts])).toEqual([])
    // Once one answer came from the new index, every request started later is answered from it.
    const firstNewEnded = Math.min(...results.filter((r) => r.hosts.has("new.example")).map((r) => r.endedAt))
    expect(results.filter((r) => r.startedAt > firstNewEnded && !r.hosts.has("new.example"))).toEqual([])
    expect(server.output()).toMatch(/SIGHUP: reloaded .*index.snapshot: 300 documents/)
    expect(server.output()).toMatch(/SIGHUP: kept the current index; .* was refused: .*snapshot/i)
    const afterRefusal = results.filter((r) => r.startedAt > refusedAt)
    expect(afterRefusal.length).toBeGreaterThan(0)
    expect(afterRefusal.every((r) => r.hosts.has("new.example"))).toBe(true)
  }, 120_000)
})
