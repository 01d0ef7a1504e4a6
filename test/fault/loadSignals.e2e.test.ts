/**
 * SIGHUP and SIGTERM on the real server process (`node adapters/node/main.ts`)
 * under load: autocannon drives webSearch and non-streaming chat (to a
 * loopback OpenAI stand-in) while a set of chat streams is open.
 *
 * - SIGHUP: the index is reloaded in the middle of the load; every request is
 *   answered 200 and every stream finishes normally.
 * - SIGTERM: no request the server accepted before the signal fails. The
 *   server refuses only what arrives after it (GatedServer answers 503
 *   server_shutting_down from the drain on, and only then), so every answer is
 *   a 200 with a whole body or that 503; a connection refused or closed before
 *   an answer happens only after the signal. These are counted separately and
 *   printed. Every open stream ends with the shutdown error event and [DONE];
 *   nothing is cut at the grace deadline; the process exits 0.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type MockUpstream, startMockUpstream } from "../support/mockUpstream.ts"
import { authHeaders, type ChildServer, spawnNodeServer, TEST_KEY } from "../support/servers.ts"
import { type Load, startLoad, tally } from "./loadDriver.ts"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const GRACE_SECONDS = 4

const searchBody = JSON.stringify({ keywords: "search results with snippets", num: 5 })
const chatBody = JSON.stringify({ model: "quick", messages: [{ role: "user", content: "hello" }] })
// A success, or the documented shutdown answer (chat: code server_shutting_down; search: the envelope with its message).
const goodBody = (body: string) =>
  body.includes("\"success\":true") || body.includes("\"chat.completion\"") || body.includes("server_shutting_down") ||
  body.includes("the server is shutting down")

/** An open chat stream, read to its end in the background. */
const openStream = async (url: string, model: string) => {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "go" }] })
  })
  expect(response.status).toBe(200)
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  // Open for real: the first event is in before the test goes on.
  let text = decoder.decode((await reader.read()).value, { stream: true })
  const rest = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        text += decoder.decode(value, { stream: true })
      }
    } catch (error) {
      text += `\n\nCLIENT ERROR ${String(error)}`
    }
    return text.split("\n\n").map((e) => e.trim()).filter((e) => e !== "" && !e.startsWith(":"))
  })()
  // Wrapped: an async function returning the promise itself would wait for the whole stream.
  return { events: rest }
}

const loads = (url: string, seconds: number): Array<Load> => [
  startLoad({ url, path: "/api/search/webSearch", body: searchBody, headers: authHeaders(), connections: 8, seconds, verifyBody: goodBody }),
  startLoad({ url, path: "/v1/chat/completions", body: chatBody, headers: authHeaders(), connections: 8, seconds, verifyBody: goodBody })
]

describe("signals under load (autocannon)", () => {
  const dir = mkdtempSync(join(tmpdir(), "periscope-load-"))
  let upstream: MockUpstream
  let server: ChildServer

  beforeAll(async () => {
    upstream = await startMockUpstream({
      record: false,
      byModel: {
        quick: { content: "a short answer" },
        // 40 words, one every 250 ms: 10 s, longer than the grace period.
        slow: { content: Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 250 },
        brief: { content: "one two three four five six", chunkDelayMs: 100 }
      }
    })
    const config = join(dir, "config.json")
    writeFileSync(config, JSON.stringify({
      shutdownGraceSeconds: GRACE_SECONDS,
      // The limiter runs on every request; the limit is above what the load sends.
      rateLimitPerMinute: 10_000_000,
      chat: {
        upstreams: { up: { baseUrl: upstream.url } },
        models: ["quick", "slow", "brief"].map((name) => ({ name, targets: [{ upstream: "up", model: name }] }))
      }
    }))
    server = await spawnNodeServer({ PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_DATA_DIR: join(dir, "data"), PERISCOPE_CONFIG: config })
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await upstream?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("SIGHUP reloads in the middle of the load: every request 200, every stream whole", async () => {
    const streams = await Promise.all(Array.from({ length: 10 }, () => openStream(server.url, "brief")))
    const running = loads(server.url, 5)
    await sleep(1_500)
    const before = server.output().split("SIGHUP: reloaded").length
    server.child.kill("SIGHUP")
    const results = await Promise.all(running.map((l) => l.done))
    const reloads = server.output().split("SIGHUP: reloaded").length - before
    const outcomes = running.flatMap((l) => l.outcomes)
    const counts = tally(outcomes)
    console.log(`SIGHUP under load: ${outcomes.length} requests:`, counts.before, `(webSearch ${results[0]!.requests.total}, chat ${results[1]!.requests.total})`)
    expect(reloads).toBe(1)
    expect(Object.keys(counts.before)).toEqual(["200"])
    expect(counts.before["200"]).toBeGreaterThan(50)
    for (const l of running) expect(l.mismatches()).toBe(0)
    for (const events of await Promise.all(streams.map((s) => s.events))) {
      expect(events.join("\n")).toContain("six")
      expect(events.join("\n")).not.toContain("\"error\"")
      expect(events.at(-1)).toBe("data: [DONE]")
    }
    expect(server.child.exitCode).toBeNull()
  }, 60_000)

  it("SIGTERM in the middle of the load: nothing accepted before it fails, every stream ends with [DONE], exit 0", async () => {
    const streams = await Promise.all(Array.from({ length: 20 }, () => openStream(server.url, "slow")))
    const running = loads(server.url, 10)
    const exited = new Promise<number | null>((resolve) => server.child.once("exit", (code) => resolve(code)))
    await sleep(2_000)
    const signalledAt = performance.now()
    server.child.kill("SIGTERM")
    const code = await exited
    const exitedAt = performance.now()
    // What the load gets once the port is closed is only refusals: stop it soon after.
    await sleep(300)
    await Promise.all(running.map((l) => l.stop()))
    const outcomes = running.flatMap((l) => l.outcomes)
    const counts = tally(outcomes, signalledAt)
    // "lost" after the signal: autocannon sends its next request on a connection whose 503 said Connection: close.
    console.log(`SIGTERM under load: ${outcomes.length} requests; sent before the signal:`, counts.before, "sent after it:", counts.after)
    console.log(`SIGTERM to exit: ${Math.round(exitedAt - signalledAt)} ms (grace ${GRACE_SECONDS} s)`)

    // Sent before the signal: answered 200, or (arrived after it) the documented 503. Nothing lost, no error.
    for (const key of Object.keys(counts.before)) expect(["200", "503"]).toContain(key)
    expect(counts.before["200"]).toBeGreaterThan(50)
    // After it: 503 while draining, then refused (or closed before an answer) once the port is shut.
    for (const key of Object.keys(counts.after)) expect(key).toMatch(/^(200|503|error ECONNREFUSED|error ECONNRESET|error EPIPE|lost)$/)
    // A 503 goes only to a request that reached the server after the signal (a second of queueing allowed).
    for (const o of outcomes) if (o.kind === "status" && o.status === 503) expect(o.sentAt).toBeGreaterThan(signalledAt - 1_000)
    // Errors and lost requests only after the signal.
    for (const o of outcomes) if (o.kind !== "status") expect(o.sentAt ?? o.endedAt).toBeGreaterThan(signalledAt)
    for (const l of running) expect(l.mismatches()).toBe(0)

    const ended = await Promise.all(streams.map((s) => s.events))
    // The documented end: the error event second to last, then [DONE], nothing between them.
    for (const events of ended) {
      expect(events.join("\n")).not.toContain("CLIENT ERROR")
      expect(events.at(-1)).toBe("data: [DONE]")
      const errorAt = events.findIndex((e) => e.includes("server_shutting_down"))
      expect(errorAt).toBe(events.length - 2)
      expect(errorAt).toBeGreaterThan(0)
      expect(events.filter((e) => e.includes("\"error\""))).toHaveLength(1)
    }
    console.log(`${ended.length} open streams: all ended with the server_shutting_down error event and then [DONE]`)
    expect(code).toBe(0)
    expect(server.output()).not.toMatch(/still open after .* are cut/)
    expect(exitedAt - signalledAt).toBeLessThan(GRACE_SECONDS * 1000 + 3_000)
  }, 60_000)
})
