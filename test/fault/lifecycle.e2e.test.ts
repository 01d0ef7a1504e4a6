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
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { hashKey } from "../../core/auth/KeyRecord.ts"
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

describe("SIGTERM with requests that outlast the grace", () => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-shutdown-"))
  let upstream: MockUpstream | undefined
  let server: ChildServer | undefined
  afterAll(async () => {
    await server?.close()
    await upstream?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("every request in flight is answered (503 server_shutting_down, or its result) and the process is gone within the grace", async () => {
    upstream = await startMockUpstream({
      byModel: {
        stuck: { content: "never in time", headersDelayMs: 120_000 },
        quick: { content: "done in time", headersDelayMs: 300 },
        drip: { content: Array.from({ length: 600 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 200 }
      }
    })
    // A site that never answers: a webFetch of it is in flight on the full HttpApi stack, not the express lane.
    const silent = createServer(() => {})
    await new Promise<void>((done) => silent.listen(0, "127.0.0.1", done))
    const silentHost = `127.0.0.1:${(silent.address() as AddressInfo).port}`
    const config = join(dir, "config.json")
    const graceSeconds = 3
    writeFileSync(config, JSON.stringify({
      shutdownGraceSeconds: graceSeconds,
      search: { backend: "fixture" },
      fetch: { allowHosts: [silentHost], timeoutMs: 60_000 },
      chat: {
        upstreams: { up: { baseUrl: upstream.url } },
        models: ["stuck", "quick", "drip"].map((name) => ({ name, targets: [{ upstream: "up", model: name }] }))
      }
    }))
    server = await spawnNodeServer({ PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_DATA_DIR: join(dir, "data"), PERISCOPE_CONFIG: config })
    const post = (model: string, stream = false) =>
      fetch(`${server!.url}/v1/chat/completions`, { method: "POST", headers: authHeaders(), body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "go" }] }) })
    // Two completions that will not be done within the grace, one that will, and a stream.
    const stuck = [post("stuck"), post("stuck")]
    const quick = post("quick")
    const fetching = fetch(`${server.url}/api/search/webFetch`, { method: "POST", headers: authHeaders(), body: JSON.stringify({ url: `http://${silentHost}/page` }) })
    const stream = await post("drip", true)
    expect(stream.status).toBe(200)
    const streamText = stream.text()
    await upstream.waitForRequest(3)
    const exited = new Promise<number | null>((resolve) => server!.child.once("exit", (code) => resolve(code)))
    const signalledAt = Date.now()
    server.child.kill("SIGTERM")

    const quickResponse = await quick
    expect(quickResponse.status).toBe(200)
    expect((await quickResponse.json() as any).choices[0].message.content).toBe("done in time")
    for (const pending of stuck) {
      const response = await pending
      expect(response.status).toBe(503)
      expect(response.headers.get("retry-after")).not.toBeNull()
      const body = await response.json() as any
      expect(body.error.code).toBe("server_shutting_down")
    }
    const fetched = await fetching
    expect(fetched.status).toBe(503)
    expect(await fetched.json()).toMatchObject({ success: false, exception: { type: "BackendUnavailable", detail: "the server is shutting down; send the request again" } })
    silent.closeAllConnections()
    silent.close()
    const events = (await streamText).split("\n\n").filter((e) => e.trim() !== "" && !e.startsWith(":"))
    expect(events.at(-1)).toBe("data: [DONE]")
    expect(events.at(-2)).toContain("server_shutting_down")

    expect(await exited).toBe(0)
    const took = Date.now() - signalledAt
    console.log(`SIGTERM to exit with requests outlasting the grace: ${took} ms (grace ${graceSeconds} s)`)
    expect(took).toBeLessThan(graceSeconds * 1000 + 1_000)
  }, 60_000)
})

describe("warnings and clean-up at start", () => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-start-"))
  let server: ChildServer | undefined
  afterAll(async () => {
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("names a keys file other users may read, with the chmod to run; removes the temporary file a killed index run left, naming it", async () => {
    const keysFile = join(dir, "keys.json")
    writeFileSync(keysFile, JSON.stringify({ keys: [{ name: "ci", sha256: hashKey(TEST_KEY) }] }), { mode: 0o644 })
    chmodSync(keysFile, 0o644)
    const dataDir = join(dir, "data")
    mkdirSync(dataDir, { recursive: true })
    // A pid above the kernel's pid_max: the run that wrote it is gone.
    const leftOver = join(dataDir, ".index.snapshot.4999999.1700000000000.tmp")
    writeFileSync(leftOver, new Uint8Array(2 * 1024 * 1024))
    const config = join(dir, "config.json")
    writeFileSync(config, JSON.stringify({ search: { backend: "fixture" } }))
    server = await spawnNodeServer({ PERISCOPE_KEYS_FILE: keysFile, PERISCOPE_DATA_DIR: dataDir, PERISCOPE_CONFIG: config })
    expect(server.output()).toContain(`${keysFile} can be read by other users (mode 644); only its owner should: chmod 600 ${keysFile}`)
    expect(server.output()).toContain(`Removed ${leftOver} (2.0 MiB), the temporary file of an index run that was killed`)
    expect(existsSync(leftOver)).toBe(false)
    expect((await fetch(`${server.url}/v1/models`, { headers: authHeaders() })).status).toBe(200)
    await server.close()

    // Once closed to others, no warning.
    chmodSync(keysFile, 0o600)
    server = await spawnNodeServer({ PERISCOPE_KEYS_FILE: keysFile, PERISCOPE_DATA_DIR: dataDir, PERISCOPE_CONFIG: config })
    expect(server.output()).not.toContain("can be read by other users")
  }, 60_000)
})
