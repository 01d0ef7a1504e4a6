/**
 * Codes as the docs state them, on spawned servers:
 * - Redis down with `onRedisDown: "closed"`: 503 with code `limiter_unavailable` (docs/operations.md),
 *   in the OpenAI family's `error.code`, not `upstream_unavailable`;
 * - a client that goes away: the access log says 499 (as the span does), not 500, on the
 *   express lane (a chat completion) and on the full HttpApi stack (a webFetch) alike.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type MockUpstream, startMockUpstream } from "../support/mockUpstream.ts"
import { authHeaders, type ChildServer, freePort, spawnNodeServer, TEST_KEY } from "../support/servers.ts"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const dir = mkdtempSync(join(tmpdir(), "periscope-codes-"))
const servers: Array<ChildServer> = []
let upstream: MockUpstream | undefined
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
  await upstream?.close()
  rmSync(dir, { recursive: true, force: true })
})

const configFile = (name: string, config: unknown) => {
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify(config))
  return file
}

describe("codes the docs state", () => {
  it("Redis down, limits failing closed: 503 limiter_unavailable on the chat family, the search family's 503 envelope", async () => {
    // A port nobody listens on: Redis is down from the start.
    const redisUrl = `redis://127.0.0.1:${await freePort()}`
    const config = configFile("closed", { search: { backend: "fixture" }, store: { onRedisDown: "closed", commandTimeoutMs: 200 } })
    const server = await spawnNodeServer({ PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_DATA_DIR: join(dir, "closed"), PERISCOPE_CONFIG: config, PERISCOPE_REDIS_URL: redisUrl })
    servers.push(server)
    const models = await fetch(`${server.url}/v1/models`, { headers: authHeaders() })
    expect(models.status).toBe(503)
    const body = await models.json() as any
    expect(body.error).toMatchObject({ type: "server_error", code: "limiter_unavailable" })
    expect(body.error.message).toContain("rate limits cannot be checked")
    const chat = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: authHeaders(), body: JSON.stringify({ model: "any", messages: [{ role: "user", content: "hi" }] }) })
    expect(chat.status).toBe(503)
    expect((await chat.json() as any).error.code).toBe("limiter_unavailable")
    const search = await fetch(`${server.url}/api/search/webSearch`, { method: "POST", headers: authHeaders(), body: JSON.stringify({ keywords: "rivers" }) })
    expect(search.status).toBe(503)
    expect(await search.json()).toMatchObject({ success: false, code: "500", exception: { type: "BackendUnavailable" } })
  }, 60_000)

  it("a client that goes away is logged 499, on the express lane and on the HttpApi stack", async () => {
    upstream = await startMockUpstream({ byModel: { slow: { content: "too late", headersDelayMs: 30_000 } } })
    const silent = createServer(() => {})
    await new Promise<void>((done) => silent.listen(0, "127.0.0.1", done))
    const silentHost = `127.0.0.1:${(silent.address() as AddressInfo).port}`
    const config = configFile("log", {
      logRequests: true,
      search: { backend: "fixture" },
      fetch: { allowHosts: [silentHost], timeoutMs: 30_000 },
      chat: { upstreams: { up: { baseUrl: upstream.url } }, models: [{ name: "slow", targets: [{ upstream: "up", model: "slow" }] }] }
    })
    const server = await spawnNodeServer({ PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_DATA_DIR: join(dir, "log"), PERISCOPE_CONFIG: config })
    servers.push(server)
    const goAway = async (path: string, body: unknown, requestId: string) => {
      const controller = new AbortController()
      const sent = fetch(`${server.url}${path}`, { method: "POST", headers: { ...authHeaders(), "x-request-id": requestId }, body: JSON.stringify(body), signal: controller.signal })
      sent.catch(() => {})
      await sleep(500)
      controller.abort()
    }
    await goAway("/v1/chat/completions", { model: "slow", messages: [{ role: "user", content: "hi" }] }, "gone-from-lane")
    await goAway("/api/search/webFetch", { url: `http://${silentHost}/page` }, "gone-from-httpapi")
    const lineOf = async (requestId: string) => {
      const deadline = Date.now() + 10_000
      for (;;) {
        const line = server.output().split("\n").find((l) => l.includes(`"requestId":"${requestId}"`))
        if (line !== undefined) return JSON.parse(line) as { route: string; status: number; key: string | null }
        if (Date.now() > deadline) throw new Error(`no access-log line for ${requestId}:\n${server.output()}`)
        await sleep(50)
      }
    }
    expect(await lineOf("gone-from-lane")).toMatchObject({ route: "/v1/chat/completions", status: 499 })
    expect(await lineOf("gone-from-httpapi")).toMatchObject({ route: "/api/search/webFetch", status: 499 })
    silent.closeAllConnections()
    silent.close()
  }, 60_000)
})
