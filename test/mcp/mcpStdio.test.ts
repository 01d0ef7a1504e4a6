/**
 * `periscope mcp` over stdio, driven by the reference client's StdioClientTransport
 * as a desktop agent host runs it: a child process on the same settings and index
 * as `serve`, no key, nothing but protocol messages on stdout (the client reports
 * any other line as an error), logs on stderr.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IndexBuilder } from "../../core/index/IndexBuilder.ts"
import { encodeSnapshot } from "../../core/index/Snapshot.ts"
import { root } from "../support/servers.ts"

let dir: string
let client: Client
let transport: StdioClientTransport
const stderr: Array<string> = []
const transportErrors: Array<unknown> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "periscope-mcp-stdio-"))
  const builder = new IndexBuilder()
  builder.add([
    { url: "https://docs.example/pg/vacuum", title: "VACUUM", text: "VACUUM reclaims storage occupied by dead tuples. Run it after large deletes.", date: "2024-01-05" },
    { url: "https://docs.example/pg/analyze", title: "ANALYZE", text: "ANALYZE collects statistics for the query planner." }
  ])
  const snapshot = join(dir, "index.snapshot")
  writeFileSync(snapshot, encodeSnapshot(builder.build()))
  const config = join(dir, "periscope.json")
  writeFileSync(config, JSON.stringify({ search: { backend: "engine", snapshot } }))
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, "adapters/node/cli.ts"), "mcp", "--config", config, "--data-dir", dir],
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "" }
  })
  transport.stderr?.on("data", (chunk: Buffer) => void stderr.push(chunk.toString()))
  client = new Client({ name: "periscope-stdio-test", version: "1.0.0" })
  client.onerror = (error) => void transportErrors.push(error)
  await client.connect(transport)
}, 60_000)

afterAll(async () => {
  await client?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("periscope mcp (stdio)", () => {
  it("initializes and lists the tools; stdout carried nothing but protocol messages, the log went to stderr", async () => {
    expect(client.getServerVersion()).toMatchObject({ name: "periscope" })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(["web_search", "image_search", "web_fetch", "map_site", "answer"])
    expect(stderr.join("")).toContain("Periscope MCP on stdio")
    expect(transportErrors).toEqual([])
  })

  it("searches the configured index without a key", async () => {
    const result: any = await client.callTool({ name: "web_search", arguments: { query: "dead tuples" } })
    expect(result.isError).toBe(false)
    expect(result.structuredContent.results[0]).toMatchObject({ position: 1, title: "VACUUM", url: "https://docs.example/pg/vacuum" })
    expect(result.content[0].text).toContain("[1] VACUUM\nURL: https://docs.example/pg/vacuum\nDate: 2024-01-05")
  })

  it("answers failures as isError results and bad arguments as -32602", async () => {
    const refused: any = await client.callTool({ name: "web_fetch", arguments: { url: "http://127.0.0.1:9/" } })
    expect(refused.isError).toBe(true)
    const error = await client.callTool({ name: "web_search", arguments: { query: "x", num: 0 } }).then(() => undefined, (e: unknown) => e)
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).code).toBe(-32602)
    expect((error as McpError).message).toContain("num: must be an integer from 1 to 100, got 0")
    expect(transportErrors).toEqual([])
  })

  it("answers raw lines on stdout, one JSON message each, and exits 0 by itself when its input ends", async () => {
    const child = spawn(process.execPath, [join(root, "adapters/node/cli.ts"), "mcp", "--config", join(dir, "periscope.json"), "--data-dir", dir], {
      stdio: ["pipe", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => void (out += chunk.toString()))
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once("exit", (code, signal) => resolve([code, signal])))
    child.stdin.end([
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      "{not json",
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "web_search", arguments: { query: "planner" } } })
    ].join("\n") + "\n")
    const timeout = setTimeout(() => child.kill("SIGKILL"), 30_000)
    const [code, signal] = await exited
    clearTimeout(timeout)
    expect([code, signal]).toEqual([0, null])
    const lines = out.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(lines.map((m) => m.id ?? null)).toEqual(expect.arrayContaining([1, null, 2]))
    expect(lines).toHaveLength(3)
    expect(lines.find((m) => m.id === null).error.code).toBe(-32700)
    expect(lines.find((m) => m.id === 2).result.structuredContent.results[0].title).toBe("ANALYZE")
  })
})
