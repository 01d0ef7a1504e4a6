/**
 * Two Periscope instances on loopback sharing one real redis-server: one
 * budget per key across both, a cached search written by one and served by
 * the other, and Redis killed mid-run: "open" keeps answering (limits per
 * instance meanwhile), "closed" answers 503 limiter_unavailable, search answers
 * as a cache miss, /readyz says why - and all recover when Redis is back.
 * webFetch's page cache is shared the same way.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashKey, type KeyRecord } from "../../core/auth/KeyRecord.ts"
import type { ConfigFile } from "../../core/config/ConfigFile.ts"
import { type StandIn, startStandIn } from "../support/searchProviders.ts"
import { eventually, type Instance, startInstance } from "./instances.ts"
import { type RedisServer, redisAvailable, startRedis } from "./redisServer.ts"

const run = redisAvailable()

const LIMITED = "limited-key-0123456789"
const ROOMY = "roomy-key-0123456789"
const keys: ReadonlyArray<KeyRecord> = [
  { name: "limited", sha256: hashKey(LIMITED), requestsPerMinute: 10 },
  { name: "roomy", sha256: hashKey(ROOMY), requestsPerMinute: 100_000 }
]

const models = (instance: Instance, key: string) =>
  fetch(`${instance.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })

const search = async (instance: Instance, body: unknown) => {
  const response = await fetch(`${instance.url}/api/search/webSearch`, {
    method: "POST",
    headers: { authorization: `Bearer ${ROOMY}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() as any }
}

const webFetch = async (instance: Instance, body: unknown) => {
  const response = await fetch(`${instance.url}/api/search/webFetch`, {
    method: "POST",
    headers: { authorization: `Bearer ${ROOMY}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() as any }
}

/** A loopback site that counts the requests it answers. */
const startSite = async () => {
  let requests = 0
  const server: Server = createServer((request, response) => {
    requests++
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    response.end(`<!doctype html><html><head><title>Page ${request.url}</title></head><body><main><h1>Shared page</h1><p>Rivers run to the sea, read once for every instance.</p></main></body></html>`)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() { return requests },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const ready = async (instance: Instance) => (await fetch(`${instance.url}/readyz`)).status === 200

describe.skipIf(!run)("two instances sharing one Redis", () => {
  let redis: RedisServer
  let searx: StandIn
  let a: Instance
  let b: Instance
  let closed: Instance
  let memoryA: Instance
  let memoryB: Instance
  let site: Awaited<ReturnType<typeof startSite>>

  beforeAll(async () => {
    redis = await startRedis()
    site = await startSite()
    searx = await startStandIn("searxng", [{ title: "Shared rivers", url: "https://searx.example/rivers", snippet: "rivers from searx" }])
    const search: ConfigFile["search"] = { providers: [{ name: "searx", kind: "searxng", baseUrl: searx.url }] }
    const shared = (onRedisDown: "open" | "closed"): ConfigFile => ({
      search,
      store: { redisUrl: redis.url, keyPrefix: "t1:", onRedisDown },
      fetch: { allowPrivateAddresses: true }
    })
    a = await startInstance(shared("open"), keys)
    b = await startInstance(shared("open"), keys)
    closed = await startInstance(shared("closed"), keys)
    memoryA = await startInstance({ search }, keys)
    memoryB = await startInstance({ search }, keys)
    for (const instance of [a, b, closed]) expect(await eventually(() => ready(instance), 5_000)).toBe(true)
  })

  afterAll(async () => {
    for (const instance of [a, b, closed, memoryA, memoryB]) await instance?.close()
    await searx?.close()
    await site?.close()
    await redis?.stop()
  })

  it("a key limited to 10 per minute gets 10 in total across both instances (in memory: 10 each)", async () => {
    const shared: Array<number> = []
    for (let i = 0; i < 30; i++) shared.push((await models(i % 2 === 0 ? a : b, LIMITED)).status)
    expect(shared.filter((s) => s === 200)).toHaveLength(10)
    expect(shared.filter((s) => s === 429)).toHaveLength(20)

    const perInstance: Array<number> = []
    for (let i = 0; i < 30; i++) perInstance.push((await models(i % 2 === 0 ? memoryA : memoryB, LIMITED)).status)
    expect(perInstance.filter((s) => s === 200)).toHaveLength(20)
  })

  it("a search cached by one instance is served by the other (one upstream request)", async () => {
    const before = searx.requests
    const first = await search(a, { keywords: "shared rivers cache", explain: true })
    expect(first.status).toBe(200)
    expect(first.body.extra.cache).toBe("miss")
    expect(searx.requests).toBe(before + 1)
    const second = await search(b, { keywords: "shared rivers cache", explain: true })
    expect(second.status).toBe(200)
    expect(second.body.extra.cache).toBe("hit")
    expect(second.body.data).toEqual(first.body.data)
    expect(searx.requests).toBe(before + 1)
  })

  it("a page fetched by one instance is served by the other from the shared cache; fresh reads it again", async () => {
    const url = `${site.url}/shared-page`
    const first = await webFetch(a, { url })
    expect(first.status).toBe(200)
    expect(first.body.data.fromCache).toBe(false)
    expect(first.body.data.content).toContain("Rivers run to the sea")
    expect(site.requests).toBe(1)
    const second = await webFetch(b, { url })
    expect(second.body.data.fromCache).toBe(true)
    expect(second.body.data.content).toBe(first.body.data.content)
    expect(site.requests).toBe(1)
    const fresh = await webFetch(b, { url, fresh: true })
    expect(fresh.body.data.fromCache).toBe(false)
    expect(site.requests).toBe(2)
  })

  it("Redis killed: open answers, closed refuses with 503, search is a miss, /readyz says why; all recover when it is back", async () => {
    await redis.kill()

    // fail-open: limits counted per instance, requests pass
    expect((await models(a, ROOMY)).status).toBe(200)
    // fail-closed: 503 limiter_unavailable in the path's wire family
    const refused = await fetch(`${closed.url}/api/search/webSearch`, {
      method: "POST",
      headers: { authorization: `Bearer ${ROOMY}`, "content-type": "application/json" },
      body: JSON.stringify({ keywords: "rivers" })
    })
    expect(refused.status).toBe(503)
    const refusedBody = await refused.json() as any
    expect(refusedBody.success).toBe(false)
    expect(refusedBody.exception.detail).toContain("rate limits cannot be checked")
    const chatRefused = await models(closed, ROOMY)
    expect(chatRefused.status).toBe(503)

    // the cache degrades to a miss, never a 500
    const before = searx.requests
    const degraded = await search(a, { keywords: "shared rivers cache", explain: true })
    expect(degraded.status).toBe(200)
    expect(degraded.body.extra.cache).toBe("miss")
    expect(searx.requests).toBe(before + 1)
    // so does the page cache: the page is read from the site again
    const siteBefore = site.requests
    const page = await webFetch(a, { url: `${site.url}/shared-page` })
    expect(page.status).toBe(200)
    expect(page.body.data.fromCache).toBe(false)
    expect(site.requests).toBe(siteBefore + 1)

    const readyz = await fetch(`${a.url}/readyz`)
    expect(readyz.status).toBe(503)
    const report = await readyz.json() as any
    expect(report.status).toBe("not_ready")
    expect(report.checks.store.ok).toBe(false)
    expect(report.checks.store.detail).toMatch(/Redis is unreachable/)
    expect(report.checks.index.ok).toBe(true)
    expect(JSON.stringify(report)).not.toContain(redis.url)

    await redis.restart()
    for (const instance of [a, b, closed]) expect(await eventually(() => ready(instance), 8_000)).toBe(true)
    expect((await models(closed, ROOMY)).status).toBe(200)

    // shared again: a fresh budget in the restarted (empty) Redis, one budget for both
    const statuses: Array<number> = []
    for (let i = 0; i < 24; i++) statuses.push((await models(i % 2 === 0 ? a : b, LIMITED)).status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(10)

    // and the cache is shared again
    const fresh = await search(a, { keywords: "after the restart", explain: true })
    expect(fresh.body.extra.cache).toBe("miss")
    const again = await search(b, { keywords: "after the restart", explain: true })
    expect(again.body.extra.cache).toBe("hit")
  }, 30_000)
})
