/**
 * /v1/responses against /v1/chat/completions on the same Periscope process (the Node adapter as
 * `npm start` runs it), both routed to the same stand-in model server (test/support/mockUpstream.ts
 * in its own process, 64-word answers), at the same concurrency, in rotating rounds: whole
 * answers, streams (the model server writes a whole answer at once) and streams at a model
 * server's pace (each event alone, 1 ms apart, so every chunk costs what it costs).
 *
 *   node test/bench/responses.ts [--seconds 5] [--connections 32] [--rounds 3]
 *
 * Prints requests/s and the Periscope process's CPU per request for each, and /v1/responses'
 * throughput as a share of chat completions' (the median of the ratios paired within a round;
 * target >= 0.80x).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import autocannon from "autocannon"
import { hashKey } from "../../core/auth/KeyRecord.ts"
import { freePort } from "../support/servers.ts"
import { cpuTimeUs } from "./support/processCpu.ts"
import { describePaired, median } from "./support/stats.ts"
import { startUpstreamProcess } from "./support/upstreamProcess.ts"

const { values } = parseArgs({ options: { seconds: { type: "string", default: "5" }, connections: { type: "string", default: "32" }, rounds: { type: "string", default: "3" } } })
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const rounds = Number(values.rounds)
const root = resolve(import.meta.dirname, "../..")
const KEY = "bench-key"
const PROMPT = "Tell me something in about sixty words."

const children: Array<ChildProcess> = []
process.on("exit", () => {
  for (const child of children) child.kill("SIGTERM")
})
// Stopped by a signal, the servers are stopped too (a signal ends the process without its exit event).
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(1))

const [upstream, paced] = await Promise.all([startUpstreamProcess(64), startUpstreamProcess(64, { chunkDelayMs: 1 })])

// Periscope: one model on each model server; a key whose limit the run cannot reach.
const dataDir = mkdtempSync(join(tmpdir(), "periscope-responses-bench-"))
process.on("exit", () => rmSync(dataDir, { recursive: true, force: true }))
writeFileSync(join(dataDir, "keys.json"), JSON.stringify({ keys: [{ name: "bench", sha256: hashKey(KEY), requestsPerMinute: 1_000_000_000 }] }))
writeFileSync(join(dataDir, "config.json"), JSON.stringify({
  chat: {
    upstreams: { mock: { baseUrl: upstream.url, preset: "passthrough" }, paced: { baseUrl: paced.url, preset: "passthrough" } },
    models: [
      { name: "bench-model", targets: [{ upstream: "mock", model: "mock-model" }] },
      { name: "bench-model-paced", targets: [{ upstream: "paced", model: "mock-model" }] }
    ]
  }
}))
const port = await freePort()
const periscope = spawn(process.execPath, ["adapters/node/main.ts"], {
  cwd: root,
  env: { ...process.env, PORT: String(port), PERISCOPE_DATA_DIR: dataDir, PERISCOPE_KEYS_FILE: join(dataDir, "keys.json"), PERISCOPE_CONFIG: join(dataDir, "config.json") },
  stdio: ["ignore", "pipe", "pipe"]
})
children.push(periscope)
let output = ""
periscope.stdout!.on("data", (d) => { output += d })
periscope.stderr!.on("data", (d) => { output += d })
const base = `http://127.0.0.1:${port}`
for (let i = 0; ; i++) {
  if (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false)) break
  if (i === 300) throw new Error(`Periscope did not start:\n${output}`)
  await new Promise((r) => setTimeout(r, 100))
}

type Face = "chat completions" | "responses"
type Mode = "whole" | "streamed" | "streamed, paced"
const FACES: ReadonlyArray<Face> = ["chat completions", "responses"]
const MODES: ReadonlyArray<Mode> = ["whole", "streamed", "streamed, paced"]
const headers = { "content-type": "application/json", authorization: `Bearer ${KEY}` }

const requestOf = (face: Face, mode: Mode) => {
  const model = mode === "streamed, paced" ? "bench-model-paced" : "bench-model"
  const stream = mode !== "whole"
  return face === "chat completions"
    ? { url: `${base}/v1/chat/completions`, body: JSON.stringify({ model, stream, messages: [{ role: "user", content: PROMPT }] }) }
    : { url: `${base}/v1/responses`, body: JSON.stringify({ model, stream, input: PROMPT }) }
}

// Both faces must answer the same text before anything is timed.
for (const face of FACES) {
  for (const mode of MODES) {
    const { url, body } = requestOf(face, mode)
    const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(30_000) })
    const text = await response.text()
    const answered = mode === "whole"
      ? face === "chat completions" ? JSON.parse(text).choices[0].message.content : JSON.parse(text).output[0].content[0].text
      : text
    if (response.status !== 200 || !String(answered).includes("word0") || (mode !== "whole" && face === "responses" && !text.includes("event: response.completed"))) {
      throw new Error(`${face}, ${mode}: ${response.status} ${text.slice(0, 300)}`)
    }
  }
}

const load = (face: Face, mode: Mode, duration: number) =>
  new Promise<autocannon.Result>((done, fail) => {
    const { url, body } = requestOf(face, mode)
    autocannon({ url, method: "POST", headers, body, connections, duration }, (error, result) => (error ? fail(error) : done(result)))
  })

interface Run {
  readonly rps: number
  readonly cpuUs: number
}
const runs = new Map<string, Array<Run>>()
const keyOf = (face: Face, mode: Mode) => `${face}|${mode}`

console.log(`Responses bench: /v1/responses and /v1/chat/completions on one Periscope process, one model server, ${connections} connections, ${seconds} s per run, ${rounds} rounds, ${process.version}, ${cpus().length} cores\n`)
for (const mode of MODES) for (const face of FACES) await load(face, mode, 2) // warm-up
for (let round = 0; round < rounds; round++) {
  for (const mode of MODES) {
    const order = round % 2 === 0 ? FACES : [...FACES].reverse()
    for (const face of order) {
      const before = cpuTimeUs(periscope.pid!)
      const result = await load(face, mode, seconds)
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${face}, ${mode}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      const list = runs.get(keyOf(face, mode)) ?? []
      list.push({ rps: result.requests.average, cpuUs: (cpuTimeUs(periscope.pid!) - before) / Math.max(1, result.requests.total) })
      runs.set(keyOf(face, mode), list)
    }
  }
}

console.log("| answer | endpoint | requests/s | server CPU µs/request |")
console.log("|---|---|---|---|")
for (const mode of MODES) {
  for (const face of FACES) {
    const list = runs.get(keyOf(face, mode))!
    console.log(`| ${mode} | ${face === "responses" ? "/v1/responses" : "/v1/chat/completions"} | ${Math.round(median(list.map((r) => r.rps)))} | ${Math.round(median(list.map((r) => r.cpuUs)))} |`)
  }
}
console.log("")
for (const mode of MODES) {
  const chat = runs.get(keyOf("chat completions", mode))!
  const responses = runs.get(keyOf("responses", mode))!
  const ratios = responses.map((r, i) => r.rps / chat[i]!.rps)
  const cpu = median(responses.map((r) => r.cpuUs)) / median(chat.map((r) => r.cpuUs))
  console.log(`${mode}: /v1/responses / /v1/chat/completions throughput ${describePaired(ratios)} (target >= 0.80x); server CPU per request ${cpu.toFixed(2)}x`)
}
// The servers are stopped on exit (above); their open pipes would otherwise keep this process alive.
process.exit(0)
