/**
 * The three ways to run Periscope answer the same requests the same: the Node
 * server (`npm start`'s entry, as a child process), the embed library's fetch
 * handler, and the Deno adapter run by the deno binary from node_modules.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPeriscope, type Periscope } from "../../adapters/embed/index.ts"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { type ChildServer, readSse, spawnDenoServer, spawnNodeServer, TEST_KEY } from "../support/servers.ts"

type Send = (path: string, init: RequestInit) => Promise<Response>

interface Probe {
  readonly name: string
  readonly path: string
  readonly init: RequestInit
}

const json = (body: unknown, key: string | null = TEST_KEY): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
  body: JSON.stringify(body)
})
const mcp = (message: unknown, key: string | null = TEST_KEY): RequestInit => {
  const init = json(message, key)
  return { ...init, headers: { ...init.headers as Record<string, string>, accept: "application/json, text/event-stream" } }
}
const get = (key: string | null = TEST_KEY): RequestInit => ({ method: "GET", headers: key === null ? {} : { authorization: `Bearer ${key}` } })

const probes: Array<Probe> = [
  { name: "healthz", path: "/healthz", init: get(null) },
  { name: "webSearch", path: "/api/search/webSearch", init: json({ keywords: "vacuum dead tuples", num: 3 }) },
  { name: "webSearch with a phrase, exclusion and site:", path: "/api/search/webSearch", init: json({ keywords: "\"query planner\" -python site:docs.example" }) },
  { name: "webSearch in Japanese", path: "/api/search/webSearch", init: json({ keywords: "東京" }) },
  { name: "imageSearch", path: "/api/search/imageSearch", init: json({ keywords: "diagram" }) },
  { name: "chat (grounded)", path: "/v1/chat/completions", init: json({ messages: [{ role: "user", content: "what does ANALYZE collect?" }] }) },
  { name: "chat stream", path: "/v1/chat/completions", init: json({ messages: [{ role: "user", content: "vacuum" }], stream: true, stream_options: { include_usage: true } }) },
  { name: "models", path: "/v1/models", init: get() },
  { name: "bad num", path: "/api/search/webSearch", init: json({ keywords: "x", num: 0 }) },
  { name: "bad role", path: "/v1/chat/completions", init: json({ messages: [{ role: "robot", content: "x" }] }) },
  { name: "no key", path: "/api/search/webSearch", init: json({ keywords: "x" }, null) },
  { name: "unknown path", path: "/v1/nothing", init: get() },
  { name: "wrong method", path: "/api/search/imageSearch", init: get() },
  { name: "mcp initialize", path: "/mcp", init: mcp({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) },
  { name: "mcp tools/list", path: "/mcp", init: mcp({ jsonrpc: "2.0", id: 2, method: "tools/list" }) },
  { name: "mcp web_search", path: "/mcp", init: mcp({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "web_search", arguments: { query: "vacuum dead tuples", num: 3 } } }) },
  { name: "mcp bad arguments", path: "/mcp", init: mcp({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "web_search", arguments: { query: "x", num: 0 } } }) },
  { name: "mcp without a key", path: "/mcp", init: mcp({ jsonrpc: "2.0", id: 5, method: "tools/list" }, null) },
  { name: "mcp GET", path: "/mcp", init: get() }
]

/** Status, content type and body with the per-call parts (ids, timestamps) blanked. */
const observe = async (response: Response) => {
  const type = response.headers.get("content-type") ?? ""
  const blank = (value: any) => (value && typeof value === "object" && "id" in value && "created" in value ? { ...value, id: "<id>", created: 0 } : value)
  const body = type.startsWith("text/event-stream")
    ? (await readSse(response)).map((e) => (e.startsWith("data: {") ? blank(JSON.parse(e.slice(6))) : e))
    : blank(await response.json())
  return { status: response.status, type: type.split(";")[0], allow: response.headers.get("allow"), body }
}

let dataDir: string
let node: ChildServer
let deno: ChildServer
let embed: Periscope

/** One snapshot, served by all three. */
const snapshotOf = () => {
  const builder = new IndexBuilder()
  builder.add([
    { url: "https://docs.example/pg/vacuum", title: "VACUUM", text: "VACUUM reclaims storage occupied by dead tuples.", date: "2024-01-05", images: [{ url: "https://docs.example/img/vacuum.png", alt: "Diagram of dead tuples" }] },
    { url: "https://docs.example/pg/analyze", title: "ANALYZE", text: "ANALYZE collects statistics for the query planner." },
    { url: "https://other.example/python/planner", title: "Python planner", text: "A query planner written in python." },
    { url: "https://docs.example/ja/tokyo", title: "東京の案内", text: "東京は日本の首都です。" }
  ])
  return encodeSnapshot(builder.build())
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "periscope-adapters-"))
  const snapshot = snapshotOf()
  const snapshotPath = join(dataDir, "shared.snapshot")
  const configPath = join(dataDir, "periscope.json")
  writeFileSync(snapshotPath, snapshot)
  writeFileSync(configPath, JSON.stringify({ search: { backend: "engine", snapshot: snapshotPath } }))
  embed = createPeriscope({ apiKeys: [TEST_KEY], search: { snapshot } })
  const env = { PERISCOPE_API_KEYS: TEST_KEY, PERISCOPE_CONFIG: configPath }
  ;[node, deno] = await Promise.all([
    spawnNodeServer({ ...env, PERISCOPE_DATA_DIR: dataDir }),
    spawnDenoServer(env)
  ])
}, 180_000)

afterAll(async () => {
  await Promise.all([node?.close(), deno?.close(), embed?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

describe("Node, Deno and embed answer alike", () => {
  for (const probe of probes) {
    it(probe.name, async () => {
      const targets: Array<[string, Send]> = [
        ["node", (path, init) => fetch(node.url + path, init)],
        ["deno", (path, init) => fetch(deno.url + path, init)],
        ["embed", (path, init) => embed.fetch(new Request("http://embed.local" + path, init))]
      ]
      const seen = await Promise.all(targets.map(async ([name, send]) => [name, await observe(await send(probe.path, probe.init))] as const))
      const [, reference] = seen[0]!
      expect(reference.status).toBeGreaterThanOrEqual(200)
      if ((probe.path.includes("Search") || probe.name === "mcp web_search") && reference.status === 200) expect(JSON.stringify(reference.body)).toContain("docs.example")
      for (const [, observed] of seen.slice(1)) expect(observed).toEqual(reference)
    })
  }
})
