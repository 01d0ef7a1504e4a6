import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { tmpdir } from "node:os"
import { hashKey } from "../../../core/auth/KeyRecord.ts"
const root = "/work/main"
const up = spawn(process.execPath, ["test/support/mockUpstream.ts", "--port", "4701", "--words", "64"], { cwd: root, stdio: "ignore" })
const dataDir = "/tmp/gwdata"; (await import("node:fs")).mkdirSync(dataDir, { recursive: true })
writeFileSync(join(dataDir, "keys.json"), JSON.stringify({ keys: [{ name: "bench", sha256: hashKey("bench-key"), requestsPerMinute: 1_000_000_000 }] }))
writeFileSync(join(dataDir, "config.json"), JSON.stringify({ chat: { upstreams: { mock: { baseUrl: "http://127.0.0.1:4701/v1", preset: "passthrough" } }, models: [{ name: "bench-model", targets: [{ upstream: "mock", model: "mock-model" }] }] } }))
const args = process.env.PROF ? ["--cpu-prof", "--cpu-prof-dir=/tmp/gw", "adapters/node/main.ts"] : ["adapters/node/main.ts"]
const p = spawn(process.execPath, args, { cwd: root, stdio: "inherit", env: { ...process.env, PORT: "4702", PERISCOPE_DATA_DIR: dataDir, PERISCOPE_KEYS_FILE: join(dataDir, "keys.json"), PERISCOPE_CONFIG: join(dataDir, "config.json") } })
await new Promise((r) => setTimeout(r, 6000))
const body = (stream: boolean) => JSON.stringify({ model: "bench-model", stream, messages: [{ role: "user", content: "Tell me something in about sixty words." }] })
const once = async (url: string, stream: boolean, auth: boolean) => {
  const t = performance.now()
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...(auth ? { authorization: "Bearer bench-key" } : {}) }, body: body(stream) })
  if (stream) { const reader = r.body!.getReader(); await reader.read(); const ttfc = performance.now() - t; while (!(await reader.read()).done); return ttfc }
  await r.text(); return performance.now() - t
}
for (const stream of (process.env.MODES ?? "whole,stream").split(",").map((m) => m === "stream")) {
  for (const [name, url, auth] of [["direct", "http://127.0.0.1:4701/v1/chat/completions", false], ["periscope", "http://127.0.0.1:4702/v1/chat/completions", true]] as const) {
    for (let i = 0; i < 200; i++) await once(url, stream, auth)
    const xs: number[] = []
    for (let i = 0; i < Number(process.env.N ?? 1500); i++) xs.push(await once(url, stream, auth))
    xs.sort((a, b) => a - b)
    console.log(stream ? "stream" : "whole", name, "p50", xs[xs.length >> 1]!.toFixed(3), "p99", xs[Math.floor(xs.length * 0.99)]!.toFixed(3))
  }
}
p.kill("SIGINT"); up.kill()
await new Promise((r) => setTimeout(r, 1500))
