/**
 * The Node server's life as an operator sees it, on the real process
 * (`node adapters/node/main.ts`): requests sent from the moment of spawn
 * are refused or answered, never left hanging (the port opens only when
 * the index is loaded and warmed up); the PID is logged and kept in the data directory;
 * SIGHUP reloads while requests keep being answered; SIGTERM answers new
 * requests 503, lets a whole completion in flight finish, ends an open
 * stream with an error event and [DONE] before the grace period, removes
 * the PID file and exits 0.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type MockUpstream, startMockUpstream } from "../support/mockUpstream.ts"
import { authHeaders, type ChildServer, spawnNodeServer, TEST_KEY } from "../support/servers.ts"
import { probe } from "./healthProbe.ts"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))


describe("start, SIGHUP and SIGTERM of the Node server", () => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-lifecycle-"))
  let upstream: MockUpstream | undefined
  let server: ChildServer | undefined
  afterAll(async () => {
    await server?.close()
    await upstream?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("answers from the first moment, reloads on SIGHUP, drains on SIGTERM", async () => {
    upstream = await startMockUpstream({
      byModel: {
        slow: { content: Array.from({ length: 60 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 200 },
        whole: { content: "finished while draining", firstChunkDelayMs: 1_500 }
      }
    })
    const config = join(dir, "config.json")
    writeFileSync(config, JSON.stringify({
      shutdownGraceSeconds: 4,
      chat: {
        upstreams: { up: { baseUrl: upstream.url } },
        models: [{ name: "slow", targets: [{ upstream: "up", model: "slow" }] }, { name: "whole", targets: [{ upstream: "up", model: "whole" }] }]
      }
    }))
    const dataDir = join(dir, "data")
    const spawnedAt = Date.now()
    server = await spawnNodeServer({ PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_DATA_DIR: dataDir, PERISCOPE_CONFIG: config }, { waitHealthy: false })
    const started = probe(server.url, 20)
    // Until the server says it is ready (the starter index is built first), then a little more.
    while (!server.output().includes("Periscope ready")) {
      expect(server.child.exitCode, server.output()).toBeNull()
      expect(Date.now() - spawnedAt).toBeLessThan(50_000)
      await sleep(50)
    }
    await sleep(300)
    const atStart = await started.stop()
    console.log("requests from the moment of spawn:", atStart)
    expect(atStart.hung).toBe(0)
    expect(atStart.other).toBe(0)
    expect(atStart.answered).toBeGreaterThan(0)

    const pid = server.child.pid!
    expect(server.output()).toContain(`pid ${pid}`)
    // The index answered its warm-up queries before the port opened (core/index/WarmUp.ts).
    expect(server.output()).toMatch(/search: warmed up with [1-9]\d* queries in \d+ ms[\s\S]*Periscope ready/)
    expect(readFileSync(join(dataDir, "periscope.pid"), "utf8").trim()).toBe(String(pid))

    // SIGHUP: the index is reloaded while requests keep being answered.
    const reloading = probe(server.url, 20)
    server.child.kill("SIGHUP")
    const deadline = Date.now() + 20_000
    while (!server.output().includes("SIGHUP: reloaded") && Date.now() < deadline) await sleep(50)
    await sleep(200)
    const acrossReload = await reloading.stop()
    console.log("requests across SIGHUP:", acrossReload)
    expect(server.output()).toContain("SIGHUP: reloaded")
    expect(acrossReload).toMatchObject({ hung: 0, refused: 0, other: 0 })
    expect(server.child.exitCode).toBeNull()

    // SIGTERM with a stream open and a whole completion in flight.
    const post = (model: string, stream: boolean) =>
      fetch(`${server!.url}/v1/chat/completions`, { method: "POST", headers: authHeaders(), body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "go" }] }) })
    const streamResponse = await post("slow", true)
    expect(streamResponse.status).toBe(200)
    const reader = streamResponse.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toContain("data: ")
    const whole = post("whole", false)
    await upstream.waitForRequest(1)
    const exited = new Promise<number | null>((resolve) => server!.child.once("exit", (code) => resolve(code)))
    const signalledAt = Date.now()
    server.child.kill("SIGTERM")
    await sleep(200)
    const refused = await fetch(`${server.url}/v1/models`, { headers: authHeaders() })
    expect(refused.status).toBe(503)
    expect((await refused.json() as any).error.code).toBe("server_shutting_down")

    let rest = ""
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      rest += new TextDecoder().decode(value)
    }
    const events = rest.split("\n\n").filter((e) => e.trim() !== "" && !e.startsWith(":"))
    expect(events.at(-1)).toBe("data: [DONE]")
    expect(events.at(-2)).toContain("server_shutting_down")
    const wholeResponse = await whole
    expect(wholeResponse.status).toBe(200)
    expect((await wholeResponse.json() as any).choices[0].message.content).toBe("finished while draining")

    expect(await exited).toBe(0)
    const took = Date.now() - signalledAt
    console.log(`SIGTERM to exit: ${took} ms (grace 4 s)`)
    expect(took).toBeLessThan(4_000 + 3_000)
    expect(existsSync(join(dataDir, "periscope.pid"))).toBe(false)
  })
})
